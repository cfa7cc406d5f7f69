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
};

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

std::optional<unsigned> NvmlDevice::sm_clock_mhz() const {
  return read_clock(api().clock, handle_, kNvmlClockSm);
}
std::optional<unsigned> NvmlDevice::sm_clock_max_mhz() const {
  return read_clock(api().max_clock, handle_, kNvmlClockSm);
}
std::optional<std::uint64_t> NvmlDevice::clock_event_reasons() const {
  unsigned long long v = 0;
  if (api().reasons == nullptr || handle_ == nullptr || api().reasons(handle_, &v) != kNvmlSuccess)
    return std::nullopt;
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

std::optional<std::string> NvmlDevice::driver_version() {
  char buf[96] = {};
  if (!api().loaded || api().driver == nullptr || api().driver(buf, sizeof buf) != kNvmlSuccess)
    return std::nullopt;
  return std::string(buf);
}

}  // namespace triaudit
