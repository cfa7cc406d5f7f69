#include "nvml.hpp"

#include "nvml_abi.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace triaudit {

namespace nvml_abi {
const char* const kReturnName[kReturnNames] = {"SUCCESS",
                                               "UNINITIALIZED",
                                               "INVALID_ARGUMENT",
                                               "NOT_SUPPORTED",
                                               "NO_PERMISSION",
                                               "ALREADY_INITIALIZED",
                                               "NOT_FOUND",
                                               "INSUFFICIENT_SIZE",
                                               "INSUFFICIENT_POWER",
                                               "DRIVER_NOT_LOADED",
                                               "TIMEOUT",
                                               "IRQ_ISSUE",
                                               "LIBRARY_NOT_FOUND",
                                               "FUNCTION_NOT_FOUND",
                                               "CORRUPTED_INFOROM",
                                               "GPU_IS_LOST",
                                               "RESET_REQUIRED",
                                               "OPERATING_SYSTEM",
                                               "LIB_RM_VERSION_MISMATCH",
                                               "IN_USE",
                                               "MEMORY",
                                               "NO_DATA",
                                               "VGPU_ECC_NOT_SUPPORTED",
                                               "INSUFFICIENT_RESOURCES",
                                               "FREQ_NOT_SUPPORTED",
                                               "ARGUMENT_VERSION_MISMATCH",
                                               "DEPRECATED",
                                               "NOT_READY",
                                               "GPU_NOT_FOUND",
                                               "INVALID_STATE",
                                               "RESET_TYPE_NOT_SUPPORTED"};
}  // namespace nvml_abi

namespace {

using namespace nvml_abi;
using nvmlReturn_t = Return;
using nvmlDevice_t = Device;
constexpr nvmlReturn_t kNvmlSuccess = kSuccess;
constexpr int kNvmlClockSm = kClockSm;
constexpr nvmlReturn_t kNvmlNotSupported = kNotSupported;
using NvmlPciInfo = PciInfo;

struct NvmlApi {
  bool loaded = false;
  std::string status = "not loaded";
  std::string library = "libnvidia-ml.so.1";
  ErrorStringFn error_string = nullptr;
  HandleByStringFn by_pci = nullptr;
  HandleByStringFn by_uuid = nullptr;
  ClockFn clock = nullptr;
  ClockFn max_clock = nullptr;
  ReasonsFn reasons = nullptr;
  UnsignedFn gen_cur = nullptr;
  UnsignedFn gen_max = nullptr;
  UnsignedFn width_cur = nullptr;
  UnsignedFn width_max = nullptr;
  DriverVersionFn driver = nullptr;
  NvLinkStateFn nvlink_state = nullptr;
  EnergyFn energy = nullptr;
  UnsignedFn power = nullptr;
  UnsignedFn limit_enforced = nullptr;
  UnsignedFn limit_default = nullptr;
  TemperatureFn temperature = nullptr;     // deprecated in NVML 13: the fallback
  TemperatureVFn temperature_v = nullptr;  // NVML 12.x drivers and newer
  NvLinkRemotePciFn nvlink_remote_pci = nullptr;
  NvLinkRemoteTypeFn nvlink_remote_type = nullptr;
  P2PStatusFn p2p_status = nullptr;
  CommonAncestorFn common_ancestor = nullptr;
  CpuAffinityFn cpu_affinity = nullptr;
  TotalEccErrorsFn ecc_errors = nullptr;
  RemappedRowsFn remapped_rows = nullptr;
  RetiredPagesFn retired_pages = nullptr;
  NvLinkErrorCounterFn nvlink_errors = nullptr;
  UnsignedFn pcie_replays = nullptr;
  EventSetCreateFn event_set_create = nullptr;
  RegisterEventsFn register_events = nullptr;
  EventSetWaitFn event_set_wait = nullptr;
  EventSetFreeFn event_set_free = nullptr;
};

// nvmlReturn_t codes by their names in nvml.h (NVML_ERROR_<name>), so messages say what a user can
// look up: "unknown (NVML: NOT_SUPPORTED)".
std::string return_name(nvmlReturn_t r) {
  if (r >= 0 && r < kReturnNames) return kReturnName[r];
  if (r == kUnknown) return "UNKNOWN";
  return "error " + std::to_string(r);
}

template <typename F>
void bind(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
}

const NvmlApi& api() {
  static NvmlApi a;
  static std::once_flag once;
  std::call_once(once, [] {
    // TRIAUDIT_NVML_LIBRARY names another library: the tests' NVML double (tests/doubles), never
    // set in a measurement (the context records the library that was loaded).
    if (const char* other = std::getenv("TRIAUDIT_NVML_LIBRARY"); other != nullptr && *other != '\0') a.library = other;
    void* lib = dlopen(a.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      a.status = a.library + " not found";
      return;
    }
    InitFn init = nullptr;
    bind(lib, "nvmlInit_v2", init);
    bind(lib, "nvmlErrorString", a.error_string);
    bind(lib, "nvmlDeviceGetHandleByPciBusId_v2", a.by_pci);
    bind(lib, "nvmlDeviceGetHandleByUUID", a.by_uuid);
    bind(lib, "nvmlDeviceGetClockInfo", a.clock);
    bind(lib, "nvmlDeviceGetMaxClockInfo", a.max_clock);
    bind(lib, "nvmlDeviceGetCurrentClocksEventReasons", a.reasons);
    if (a.reasons == nullptr) bind(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", a.reasons);
    bind(lib, "nvmlDeviceGetCurrPcieLinkGeneration", a.gen_cur);
    bind(lib, "nvmlDeviceGetMaxPcieLinkGeneration", a.gen_max);
    bind(lib, "nvmlDeviceGetCurrPcieLinkWidth", a.width_cur);
    bind(lib, "nvmlDeviceGetMaxPcieLinkWidth", a.width_max);
    bind(lib, "nvmlSystemGetDriverVersion", a.driver);
    bind(lib, "nvmlDeviceGetNvLinkState", a.nvlink_state);
    bind(lib, "nvmlDeviceGetTotalEnergyConsumption", a.energy);
    bind(lib, "nvmlDeviceGetPowerUsage", a.power);
    bind(lib, "nvmlDeviceGetEnforcedPowerLimit", a.limit_enforced);
    bind(lib, "nvmlDeviceGetPowerManagementDefaultLimit", a.limit_default);
    bind(lib, "nvmlDeviceGetTemperature", a.temperature);
    bind(lib, "nvmlDeviceGetTemperatureV", a.temperature_v);
    bind(lib, "nvmlDeviceGetTotalEccErrors", a.ecc_errors);
    bind(lib, "nvmlDeviceGetRemappedRows", a.remapped_rows);
    bind(lib, "nvmlDeviceGetRetiredPages", a.retired_pages);
    bind(lib, "nvmlDeviceGetNvLinkErrorCounter", a.nvlink_errors);
    bind(lib, "nvmlDeviceGetPcieReplayCounter", a.pcie_replays);
    bind(lib, "nvmlEventSetCreate", a.event_set_create);
    bind(lib, "nvmlDeviceRegisterEvents", a.register_events);
    bind(lib, "nvmlEventSetWait_v2", a.event_set_wait);
    bind(lib, "nvmlEventSetFree", a.event_set_free);
    bind(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2", a.nvlink_remote_pci);
    bind(lib, "nvmlDeviceGetNvLinkRemoteDeviceType", a.nvlink_remote_type);
    bind(lib, "nvmlDeviceGetP2PStatus", a.p2p_status);
    bind(lib, "nvmlDeviceGetTopologyCommonAncestor", a.common_ancestor);
    bind(lib, "nvmlDeviceGetCpuAffinity", a.cpu_affinity);
    if (init == nullptr) {
      a.status = "libnvidia-ml.so.1 has no nvmlInit_v2";
      return;
    }
    if (const nvmlReturn_t r = init(); r != kNvmlSuccess) {
      a.status = std::string("nvmlInit failed: ") + (a.error_string ? a.error_string(r) : std::to_string(r));
      return;
    }
    // Never shut down: the sampler thread may still read clocks at exit.
    a.loaded = true;
    a.status = "ok";
  });
  return a;
}

std::optional<unsigned> read_unsigned(nvmlReturn_t (*fn)(nvmlDevice_t, unsigned*), void* dev) {
  unsigned v = 0;
  if (fn == nullptr || dev == nullptr || fn(dev, &v) != kNvmlSuccess) return std::nullopt;
  return v;
}

std::optional<unsigned> read_clock(nvmlReturn_t (*fn)(nvmlDevice_t, int, unsigned*), void* dev, int type) {
  unsigned v = 0;
  if (fn == nullptr || dev == nullptr || fn(dev, type, &v) != kNvmlSuccess) return std::nullopt;
  return v;
}

}  // namespace

NvmlDevice::NvmlDevice(const std::string& pci_bus_id, const std::string& uuid) {
  const NvmlApi& a = api();
  status_ = a.status;
  if (!a.loaded) return;
  nvmlDevice_t h = nullptr;
  if (a.by_pci != nullptr && a.by_pci(pci_bus_id.c_str(), &h) == kNvmlSuccess) {
    handle_ = h;
  } else if (a.by_uuid != nullptr && !uuid.empty() && a.by_uuid(uuid.c_str(), &h) == kNvmlSuccess) {
    handle_ = h;
  } else {
    status_ = "no NVML device matches PCI bus id " + pci_bus_id;
  }
}

std::optional<unsigned> NvmlDevice::sm_clock_mhz() const { return read_clock(api().clock, handle_, kNvmlClockSm); }
std::optional<unsigned> NvmlDevice::sm_clock_max_mhz() const {
  return read_clock(api().max_clock, handle_, kNvmlClockSm);
}
std::optional<std::uint64_t> NvmlDevice::clock_event_reasons() const {
  unsigned long long v = 0;
  if (api().reasons == nullptr || handle_ == nullptr || api().reasons(handle_, &v) != kNvmlSuccess) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}
std::optional<unsigned> NvmlDevice::pcie_gen_current() const { return read_unsigned(api().gen_cur, handle_); }
std::optional<unsigned> NvmlDevice::pcie_gen_max() const { return read_unsigned(api().gen_max, handle_); }
std::optional<unsigned> NvmlDevice::pcie_width_current() const { return read_unsigned(api().width_cur, handle_); }
std::optional<unsigned> NvmlDevice::pcie_width_max() const { return read_unsigned(api().width_max, handle_); }

std::optional<std::vector<unsigned>> NvmlDevice::nvlink_up_links() const {
  if (api().nvlink_state == nullptr || handle_ == nullptr) return std::nullopt;
  std::vector<unsigned> up;
  bool any = false;
  for (unsigned link = 0; link < kNvLinkMax; ++link) {
    int state = 0;  // nvmlEnableState_t: 1 = enabled (link up)
    if (api().nvlink_state(handle_, link, &state) != kNvmlSuccess) continue;
    any = true;
    if (state == 1) up.push_back(link);
  }
  if (!any) return std::nullopt;
  return up;
}

std::optional<unsigned> NvmlDevice::nvlink_active_links() const {
  const auto up = nvlink_up_links();
  if (!up) return std::nullopt;
  return static_cast<unsigned>(up->size());
}

EnergyReading NvmlDevice::total_energy() const {
  const NvmlApi& a = api();
  if (handle_ == nullptr) return {std::nullopt, status_};
  if (a.energy == nullptr) return {std::nullopt, "FUNCTION_NOT_FOUND"};
  unsigned long long mj = 0;
  const nvmlReturn_t r = a.energy(handle_, &mj);
  if (r != kNvmlSuccess) return {std::nullopt, return_name(r)};
  return {static_cast<std::uint64_t>(mj), ""};
}

std::optional<unsigned> NvmlDevice::power_usage_mw() const { return read_unsigned(api().power, handle_); }
std::optional<unsigned> NvmlDevice::power_limit_enforced_mw() const {
  return read_unsigned(api().limit_enforced, handle_);
}
std::optional<unsigned> NvmlDevice::power_limit_default_mw() const {
  return read_unsigned(api().limit_default, handle_);
}
namespace {
// The GPU die's temperature: nvmlDeviceGetTemperatureV where the driver has it (the call NVML 13
// keeps), else the deprecated nvmlDeviceGetTemperature.
nvmlReturn_t read_temperature(void* handle, unsigned* out) {
  const NvmlApi& a = api();
  if (a.temperature_v != nullptr) {
    TemperatureV1 t{};
    t.version = kTemperatureV1;
    t.sensor_type = kTemperatureGpu;
    const nvmlReturn_t r = a.temperature_v(handle, &t);
    if (r == kNvmlSuccess) *out = t.temperature < 0 ? 0u : static_cast<unsigned>(t.temperature);
    if (r != kFunctionNotFound) return r;
  }
  if (a.temperature != nullptr) return a.temperature(handle, kTemperatureGpu, out);
  return -1;  // neither function: FUNCTION_NOT_FOUND in the caller's words
}
}  // namespace

std::optional<unsigned> NvmlDevice::temperature_c() const {
  unsigned v = 0;
  if (handle_ == nullptr || read_temperature(handle_, &v) != kNvmlSuccess) return std::nullopt;
  return v;
}

std::string NvmlDevice::why_unreadable(const char* what) const {
  const NvmlApi& a = api();
  if (handle_ == nullptr) return "unknown (NVML: " + status_ + ")";
  nvmlReturn_t r = -1;
  unsigned v = 0;
  const std::string w = what;
  if (w == "power" && a.power) r = a.power(handle_, &v);
  if (w == "power_limit" && a.limit_enforced) r = a.limit_enforced(handle_, &v);
  if (w == "power_limit_default" && a.limit_default) r = a.limit_default(handle_, &v);
  if (w == "temperature") r = read_temperature(handle_, &v);
  if (r == -1) return "unknown (NVML: FUNCTION_NOT_FOUND)";
  if (r == kNvmlSuccess) return "";
  return "unknown (NVML: " + return_name(r) + ")";
}

std::optional<std::string> NvmlDevice::driver_version() {
  char buf[96] = {};
  if (!api().loaded || api().driver == nullptr || api().driver(buf, sizeof buf) != kNvmlSuccess) return std::nullopt;
  return std::string(buf);
}

namespace {
// NVML's answer as (ok, why): the device or library missing, a function absent, or its error name.
bool nvml_call_ok(bool have_handle, const std::string& status, bool have_fn, nvmlReturn_t r, std::string* why) {
  std::string w;
  if (!have_handle)
    w = status;
  else if (!have_fn)
    w = "FUNCTION_NOT_FOUND";
  else if (r != kNvmlSuccess)
    w = return_name(r);
  if (why != nullptr) *why = w;
  return w.empty();
}
}  // namespace

std::optional<std::vector<NvmlDevice::NvLinkLink>> NvmlDevice::nvlinks(std::string* why) const {
  const NvmlApi& a = api();
  if (!nvml_call_ok(handle_ != nullptr, status_, a.nvlink_state != nullptr, kNvmlSuccess, why)) return std::nullopt;
  std::vector<NvLinkLink> links;
  nvmlReturn_t first_error = kNvmlSuccess;
  for (unsigned link = 0; link < 18; ++link) {
    int state = 0;  // nvmlEnableState_t: 1 = up
    const nvmlReturn_t r = a.nvlink_state(handle_, link, &state);
    if (r != kNvmlSuccess) {
      if (first_error == kNvmlSuccess) first_error = r;
      continue;
    }
    NvLinkLink l;
    l.index = link;
    l.active = state == 1;
    NvmlPciInfo pci{};
    if (l.active && a.nvlink_remote_pci != nullptr && a.nvlink_remote_pci(handle_, link, &pci) == kNvmlSuccess) {
      pci.bus_id[sizeof pci.bus_id - 1] = '\0';
      l.remote_bus_id = pci.bus_id;
    }
    int type = -1;
    if (l.active && a.nvlink_remote_type != nullptr && a.nvlink_remote_type(handle_, link, &type) == kNvmlSuccess) {
      l.remote_type = type;
    } else if (!l.remote_bus_id.empty() && a.by_pci != nullptr) {
      // Older drivers without the far end's type: NVML knows every GPU by its bus id, and an
      // NVSwitch is not one of them.
      nvmlDevice_t far = nullptr;
      l.remote_type = a.by_pci(l.remote_bus_id.c_str(), &far) == kNvmlSuccess ? 0 : 2;
    }
    links.push_back(l);
  }
  // No link answered: without NVLink NVML says NOT_SUPPORTED (an empty list); anything else is a failure.
  if (links.empty() && first_error != kNvmlNotSupported && first_error != kNvmlSuccess) {
    if (why != nullptr) *why = return_name(first_error);
    return std::nullopt;
  }
  return links;
}

std::optional<int> NvmlDevice::p2p_status(const NvmlDevice& peer, int caps_index, std::string* why) const {
  const NvmlApi& a = api();
  int status = -1;
  const bool have = handle_ != nullptr && peer.handle_ != nullptr;
  const nvmlReturn_t r = have && a.p2p_status ? a.p2p_status(handle_, peer.handle_, caps_index, &status) : kNvmlSuccess;
  if (!nvml_call_ok(have, handle_ ? peer.status_ : status_, a.p2p_status != nullptr, r, why)) return std::nullopt;
  return status;
}

std::optional<int> NvmlDevice::common_ancestor(const NvmlDevice& peer, std::string* why) const {
  const NvmlApi& a = api();
  int level = -1;
  const bool have = handle_ != nullptr && peer.handle_ != nullptr;
  const nvmlReturn_t r = have && a.common_ancestor ? a.common_ancestor(handle_, peer.handle_, &level) : kNvmlSuccess;
  if (!nvml_call_ok(have, handle_ ? peer.status_ : status_, a.common_ancestor != nullptr, r, why)) return std::nullopt;
  return level;
}

std::optional<std::vector<std::uint64_t>> NvmlDevice::cpu_affinity(std::string* why) const {
  const NvmlApi& a = api();
  constexpr unsigned kWords = 64;  // 4096 CPUs
  unsigned long mask[kWords] = {};
  const nvmlReturn_t r = handle_ && a.cpu_affinity ? a.cpu_affinity(handle_, kWords, mask) : kNvmlSuccess;
  if (!nvml_call_ok(handle_ != nullptr, status_, a.cpu_affinity != nullptr, r, why)) return std::nullopt;
  static_assert(sizeof(unsigned long) == 8, "NVML's CPU masks are read as 64-bit words");
  return std::vector<std::uint64_t>(mask, mask + kWords);
}

std::string NvmlDevice::library() { return api().library; }

std::optional<std::uint64_t> NvmlDevice::ecc_volatile(bool uncorrected, std::string* why) const {
  const NvmlApi& a = api();
  unsigned long long v = 0;
  const nvmlReturn_t r =
      handle_ && a.ecc_errors
          ? a.ecc_errors(handle_, uncorrected ? kMemoryErrorUncorrected : kMemoryErrorCorrected, kVolatileEcc, &v)
          : kNvmlSuccess;
  if (!nvml_call_ok(handle_ != nullptr, status_, a.ecc_errors != nullptr, r, why)) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

std::optional<NvmlDevice::RemappedRows> NvmlDevice::remapped_rows(std::string* why) const {
  const NvmlApi& a = api();
  unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  const nvmlReturn_t r =
      handle_ && a.remapped_rows ? a.remapped_rows(handle_, &corr, &unc, &pending, &failure) : kNvmlSuccess;
  if (!nvml_call_ok(handle_ != nullptr, status_, a.remapped_rows != nullptr, r, why)) return std::nullopt;
  return RemappedRows{corr, unc, pending != 0, failure != 0};
}

std::optional<unsigned> NvmlDevice::retired_pages(bool double_bit, std::string* why) const {
  const NvmlApi& a = api();
  unsigned count = 0;  // a buffer of 0 entries: NVML answers the count (INSUFFICIENT_SIZE when > 0)
  nvmlReturn_t r =
      handle_ && a.retired_pages
          ? a.retired_pages(handle_, double_bit ? kRetiredDoubleBit : kRetiredMultipleSingleBit, &count, nullptr)
          : kNvmlSuccess;
  if (r == kInsufficientSize) r = kNvmlSuccess;
  if (!nvml_call_ok(handle_ != nullptr, status_, a.retired_pages != nullptr, r, why)) return std::nullopt;
  return count;
}

std::optional<unsigned> NvmlDevice::pcie_replays(std::string* why) const {
  const NvmlApi& a = api();
  unsigned v = 0;
  const nvmlReturn_t r = handle_ && a.pcie_replays ? a.pcie_replays(handle_, &v) : kNvmlSuccess;
  if (!nvml_call_ok(handle_ != nullptr, status_, a.pcie_replays != nullptr, r, why)) return std::nullopt;
  return v;
}

std::optional<std::map<unsigned, std::uint64_t>> NvmlDevice::nvlink_errors_by_link(int counter,
                                                                                   std::string* why) const {
  const NvmlApi& a = api();
  if (!nvml_call_ok(handle_ != nullptr, status_, a.nvlink_errors != nullptr, kNvmlSuccess, why)) return std::nullopt;
  std::map<unsigned, std::uint64_t> by_link;
  nvmlReturn_t first_error = kNvmlSuccess;
  for (unsigned link = 0; link < kNvLinkMax; ++link) {
    unsigned long long v = 0;
    const nvmlReturn_t r = a.nvlink_errors(handle_, link, counter, &v);
    if (r != kNvmlSuccess) {
      if (first_error == kNvmlSuccess) first_error = r;
      continue;
    }
    by_link[link] = v;
  }
  if (by_link.empty()) {
    if (why != nullptr) *why = return_name(first_error == kNvmlSuccess ? kNotSupported : first_error);
    return std::nullopt;
  }
  return by_link;
}

std::optional<std::vector<unsigned long long>> NvmlDevice::drain_xids(std::string* why) {
  const NvmlApi& a = api();
  const bool have = a.event_set_create && a.register_events && a.event_set_wait && a.event_set_free;
  if (!nvml_call_ok(handle_ != nullptr, status_, have, kNvmlSuccess, why)) return std::nullopt;
  if (!xid_events_ && xid_why_.empty()) {
    EventSet set = nullptr;
    nvmlReturn_t r = a.event_set_create(&set);
    if (r == kNvmlSuccess) {
      r = a.register_events(handle_, kEventXidCritical, set);
      if (r == kNvmlSuccess) {
        auto free_set = a.event_set_free;
        xid_events_ = std::shared_ptr<void>(set, [free_set](void* s) { free_set(s); });
      } else {
        a.event_set_free(set);
      }
    }
    if (r != kNvmlSuccess) xid_why_ = return_name(r);
  }
  if (!xid_events_) {
    if (why != nullptr) *why = xid_why_;
    return std::nullopt;
  }
  std::vector<unsigned long long> xids;
  for (int i = 0; i < 1000; ++i) {  // a bound: a storm of events must not hold the case forever
    EventData e{};
    if (a.event_set_wait(xid_events_.get(), &e, 0) != kNvmlSuccess) break;  // TIMEOUT: the queue is empty
    if (e.event_type == kEventXidCritical) xids.push_back(e.event_data);
  }
  return xids;
}

}  // namespace triaudit
