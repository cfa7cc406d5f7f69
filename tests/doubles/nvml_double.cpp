// A TEST DOUBLE of NVML (libnvidia-ml.so.1), never a measurement: one GPU whose counters follow
// scripts the tests set through triaudit_nvml_double_*(). The harness loads it in place of the
// driver's library when TRIAUDIT_NVML_LIBRARY names it. Its functions have NVML's signatures as
// nvml_abi.hpp spells them (checked against nvml.h where the build has it).
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "nvml_abi.hpp"

using namespace triaudit::nvml_abi;

namespace {

struct Script {
  Return rc = kSuccess;
  std::vector<unsigned long long> values{0};  // successive reads; the last one repeats
  std::size_t next = 0;
  unsigned long long read() {
    const unsigned long long v = values[std::min(next, values.size() - 1)];
    ++next;
    return v;
  }
};

struct State {
  std::map<std::string, Script> scripts;
  std::map<std::string, int> calls;
  std::deque<unsigned long long> xids;
  int nvlink_links = 4;       // links that answer; the rest say NOT_SUPPORTED
  int nvlink_error_link = 0;  // the link an NVLink error counter's scripted count is on
  unsigned nvlinks_down = 0;  // bit i: link i reports down (nvmlDeviceGetNvLinkState)
  int device = 0;             // the handle's target
};

State& state() {
  static State s;
  return s;
}

Script& script(const std::string& name) { return state().scripts[name]; }

Return counted(const char* fn) {
  ++state().calls[fn];
  return kSuccess;
}

// A read of a scripted unsigned counter.
template <typename T>
Return scripted(const char* fn, const char* name, T* out) {
  counted(fn);
  Script& s = script(name);
  if (s.rc != kSuccess) return s.rc;
  *out = static_cast<T>(s.read());
  return kSuccess;
}

}  // namespace

extern "C" {

// --- control (the tests') ---
void triaudit_nvml_double_reset() { state() = State{}; }
void triaudit_nvml_double_set(const char* counter, int rc, int n, const unsigned long long* values) {
  Script s;
  s.rc = rc;
  if (n > 0) s.values.assign(values, values + n);
  state().scripts[counter] = s;
}
void triaudit_nvml_double_add_xid(unsigned long long xid) { state().xids.push_back(xid); }
void triaudit_nvml_double_set_nvlink_links(int n) { state().nvlink_links = n; }
void triaudit_nvml_double_set_nvlink_error_link(int link) { state().nvlink_error_link = link; }
void triaudit_nvml_double_set_nvlinks_down(unsigned mask) { state().nvlinks_down = mask; }
int triaudit_nvml_double_calls(const char* fn) { return state().calls[fn]; }

// --- NVML ---
Return nvmlInit_v2() { return counted("nvmlInit_v2"); }
const char* nvmlErrorString(Return) { return "NVML test double"; }
Return nvmlDeviceGetHandleByPciBusId_v2(const char* bus, Device* device) {
  counted("nvmlDeviceGetHandleByPciBusId_v2");
  if (std::strcmp(bus, "00000000:01:00.0") != 0 && std::strcmp(bus, "0000:01:00.0") != 0) return 6;  // NOT_FOUND
  *device = &state().device;
  return kSuccess;
}
Return nvmlDeviceGetHandleByUUID(const char*, Device*) { return 6; }
// Clocks and power (the harness's clock sampling): scripted "sm_clock_mhz", "clock_reasons", "power_mw".
Return nvmlDeviceGetClockInfo(Device, int, unsigned* v) {
  return scripted("nvmlDeviceGetClockInfo", "sm_clock_mhz", v);
}
Return nvmlDeviceGetCurrentClocksEventReasons(Device, unsigned long long* v) {
  return scripted("nvmlDeviceGetCurrentClocksEventReasons", "clock_reasons", v);
}
Return nvmlDeviceGetPowerUsage(Device, unsigned* v) { return scripted("nvmlDeviceGetPowerUsage", "power_mw", v); }
Return nvmlDeviceGetTemperatureV(Device, TemperatureV1* t) {
  counted("nvmlDeviceGetTemperatureV");
  if (t->version != kTemperatureV1) return 25;  // ARGUMENT_VERSION_MISMATCH
  Script& s = script("temperature_v");
  if (s.rc != kSuccess) return s.rc;
  t->temperature = static_cast<int>(s.read());
  return kSuccess;
}
Return nvmlDeviceGetTemperature(Device, int, unsigned* v) {
  return scripted("nvmlDeviceGetTemperature", "temperature", v);
}
Return nvmlDeviceGetTotalEccErrors(Device, int type, int counter, unsigned long long* v) {
  if (counter != kVolatileEcc) return 2;  // INVALID_ARGUMENT: the harness reads volatile counts only
  return scripted("nvmlDeviceGetTotalEccErrors", type == kMemoryErrorUncorrected ? "ecc_uncorrected" : "ecc_corrected",
                  v);
}
Return nvmlDeviceGetRemappedRows(Device, unsigned* corr, unsigned* unc, unsigned* pending, unsigned* failure) {
  counted("nvmlDeviceGetRemappedRows");
  if (script("remap").rc != kSuccess) return script("remap").rc;
  *corr = static_cast<unsigned>(script("remap_correctable").read());
  *unc = static_cast<unsigned>(script("remap_uncorrectable").read());
  *pending = static_cast<unsigned>(script("remap_pending").read());
  *failure = static_cast<unsigned>(script("remap_failure").read());
  return kSuccess;
}
Return nvmlDeviceGetRetiredPages(Device, int cause, unsigned* count, unsigned long long*) {
  unsigned n = 0;
  const Return r =
      scripted("nvmlDeviceGetRetiredPages", cause == kRetiredDoubleBit ? "retired_dbe" : "retired_sbe", &n);
  if (r != kSuccess) return r;
  const bool room = *count >= n;
  *count = n;
  return room ? kSuccess : kInsufficientSize;
}
Return nvmlDeviceGetNvLinkErrorCounter(Device, unsigned link, int counter, unsigned long long* v) {
  counted("nvmlDeviceGetNvLinkErrorCounter");
  const char* name = counter == kNvLinkReplay     ? "nvlink_replay"
                     : counter == kNvLinkRecovery ? "nvlink_recovery"
                     : counter == kNvLinkCrcFlit  ? "nvlink_crc_flit"
                                                  : "nvlink_crc_data";
  Script& s = script(name);
  if (s.rc != kSuccess) return s.rc;
  if (static_cast<int>(link) >= state().nvlink_links) return kNotSupported;
  // the whole scripted count on one link (nvlink_error_link), read once per reading
  *v = static_cast<int>(link) == state().nvlink_error_link ? s.read() : 0;
  return kSuccess;
}
Return nvmlDeviceGetNvLinkState(Device, unsigned link, int* active) {
  counted("nvmlDeviceGetNvLinkState");
  if (static_cast<int>(link) >= state().nvlink_links) return kNotSupported;
  *active = (state().nvlinks_down >> link) & 1u ? 0 : 1;  // nvmlEnableState_t: 1 = up
  return kSuccess;
}
Return nvmlDeviceGetPcieReplayCounter(Device, unsigned* v) {
  return scripted("nvmlDeviceGetPcieReplayCounter", "pcie_replays", v);
}
Return nvmlEventSetCreate(EventSet* set) {
  counted("nvmlEventSetCreate");
  if (script("events").rc != kSuccess) return script("events").rc;
  *set = &state().xids;
  return kSuccess;
}
Return nvmlDeviceRegisterEvents(Device, unsigned long long types, EventSet) {
  counted("nvmlDeviceRegisterEvents");
  return (types & kEventXidCritical) ? kSuccess : 2;
}
Return nvmlEventSetWait_v2(EventSet, EventData* e, unsigned) {
  counted("nvmlEventSetWait_v2");
  if (state().xids.empty()) return kTimeout;
  e->device = &state().device;
  e->event_type = kEventXidCritical;
  e->event_data = state().xids.front();
  state().xids.pop_front();
  return kSuccess;
}
Return nvmlEventSetFree(EventSet) { return counted("nvmlEventSetFree"); }

}  // extern "C"
