#include "nvml.hpp"

#include <dlfcn.h>

#include <mutex>

namespace triaudit {
namespace {

// The few NVML declarations we use, spelled out so no nvml.h is needed at build time.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;
constexpr nvmlReturn_t kNvmlNotSupported = 3;
// nvmlPciInfo_t (nvml.h, the _v2/_v3 functions' layout).
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

struct NvmlApi {
  bool loaded = false;
  std::string status = "not loaded";
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*by_uuid)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*gen_cur)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*gen_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*width_cur)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*width_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*driver)(char*, unsigned) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*limit_enforced)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*limit_default)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned, NvmlPciInfo*) = nullptr;
  nvmlReturn_t (*nvlink_remote_type)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*p2p_status)(nvmlDevice_t, nvmlDevice_t, int, int*) = nullptr;
  nvmlReturn_t (*common_ancestor)(nvmlDevice_t, nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*cpu_affinity)(nvmlDevice_t, unsigned, unsigned long*) = nullptr;
};

// nvmlReturn_t codes by their names in nvml.h (NVML_ERROR_<name>), so messages say what a user can
// look up: "unknown (NVML: NOT_SUPPORTED)".
std::string return_name(nvmlReturn_t r) {
  static const char* const names[] = {"SUCCESS",
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
                                      "INSUFFICIENT_RESOURCES"};
  if (r >= 0 && r < static_cast<nvmlReturn_t>(sizeof names / sizeof names[0])) return names[r];
  if (r == 999) return "UNKNOWN";
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
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      a.status = "libnvidia-ml.so.1 not found";
      return;
    }
    nvmlReturn_t (*init)() = nullptr;
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

std::optional<unsigned> NvmlDevice::nvlink_active_links() const {
  if (api().nvlink_state == nullptr || handle_ == nullptr) return std::nullopt;
  unsigned active = 0;
  bool any = false;
  for (unsigned link = 0; link < 18; ++link) {
    int state = 0;  // nvmlEnableState_t: 1 = enabled (link up)
    if (api().nvlink_state(handle_, link, &state) != kNvmlSuccess) continue;
    any = true;
    active += state == 1;
  }
  if (!any) return std::nullopt;
  return active;
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
std::optional<unsigned> NvmlDevice::temperature_c() const {
  return read_clock(api().temperature, handle_, 0);  // NVML_TEMPERATURE_GPU
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
  if (w == "temperature" && a.temperature) r = a.temperature(handle_, 0, &v);
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

}  // namespace triaudit
