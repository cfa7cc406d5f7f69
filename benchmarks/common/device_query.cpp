#include "device_query.hpp"

#include <cuda_runtime_api.h>

#include <dlfcn.h>

#include <cstdio>

#include "cuda_check.hpp"

namespace triaudit {
namespace {

int attribute(cudaDeviceAttr attr, int ordinal) {
  int v = 0;
  TRIAUDIT_CUDA(cudaDeviceGetAttribute(&v, attr, ordinal));
  return v;
}

std::string format_uuid(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

}  // namespace

DeviceProbe probe_device(int ordinal) {
  DeviceProbe p;
  const cudaError_t err = cudaGetDeviceCount(&p.count);
  if (err != cudaSuccess) {
    // Is there a driver at all? Ask the loader, and the driver itself for its CUDA version.
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    int driver = 0, runtime = 0;
    if (lib != nullptr) {
      using GetVersion = int (*)(int*);
      if (auto fn = reinterpret_cast<GetVersion>(dlsym(lib, "cuDriverGetVersion")); fn != nullptr && fn(&driver) != 0)
        driver = 0;
    }
    (void)cudaRuntimeGetVersion(&runtime);
    p.reason = explain_no_device(cudaGetErrorName(err), cudaGetErrorString(err), lib != nullptr, driver, runtime);
    p.count = 0;
    return p;
  }
  if (p.count == 0) {
    p.reason = "CUDA reports zero devices";
    return p;
  }
  if (ordinal >= p.count) {
    p.reason = "device " + std::to_string(ordinal) + " requested, but only " + std::to_string(p.count) + " visible";
    return p;
  }
  if (const cudaError_t e = cudaSetDevice(ordinal); e != cudaSuccess) {
    p.reason = std::string("cudaSetDevice failed: ") + cudaGetErrorString(e);
    return p;
  }
  if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess) {  // creates the context
    p.reason = std::string("creating a CUDA context failed: ") + cudaGetErrorString(e);
    return p;
  }
  p.available = true;
  return p;
}

ContextEntries power_context_entries(const NvmlDevice& nvml) {
  auto watts = [&](std::optional<unsigned> mw, const char* what) {
    return mw ? std::to_string(*mw / 1000) : nvml.why_unreadable(what);
  };
  const auto t = nvml.temperature_c();
  const EnergyReading e = nvml.total_energy();
  return {
      {"power_limit_enforced_w", watts(nvml.power_limit_enforced_mw(), "power_limit")},
      {"power_limit_default_w", watts(nvml.power_limit_default_mw(), "power_limit_default")},
      {"temperature_start_c", t ? std::to_string(*t) : nvml.why_unreadable("temperature")},
      {"energy_counter", e.millijoules ? "nvmlDeviceGetTotalEnergyConsumption" : "unknown (NVML: " + e.error + ")"},
  };
}

DeviceDescription describe_device(int ordinal, const NvmlDevice& nvml) {
  DeviceDescription d;
  d.ordinal = ordinal;
  cudaDeviceProp prop{};
  TRIAUDIT_CUDA(cudaGetDeviceProperties(&prop, ordinal));
  d.name = prop.name;
  d.uuid = format_uuid(prop.uuid);
  d.memory_bytes = prop.totalGlobalMem;
  char bus[32] = {};
  TRIAUDIT_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal));
  d.pci_bus_id = bus;
  d.cc_major = attribute(cudaDevAttrComputeCapabilityMajor, ordinal);
  d.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor, ordinal);
  d.sm_count = attribute(cudaDevAttrMultiProcessorCount, ordinal);
  d.l2_bytes = static_cast<std::uint64_t>(attribute(cudaDevAttrL2CacheSize, ordinal));
  d.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  d.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);
  d.sm_clock_max_khz = attribute(cudaDevAttrClockRate, ordinal);
  d.integrated = attribute(cudaDevAttrIntegrated, ordinal) != 0;
  d.ecc_enabled = attribute(cudaDevAttrEccEnabled, ordinal);
  TRIAUDIT_CUDA(cudaDriverGetVersion(&d.cuda_driver_version));
  TRIAUDIT_CUDA(cudaRuntimeGetVersion(&d.cuda_runtime_version));

  d.nvml_status = nvml.status();
  if (auto v = NvmlDevice::driver_version()) d.driver_version = *v;
  auto as_int = [](std::optional<unsigned> v) { return v ? static_cast<int>(*v) : -1; };
  d.sm_clock_max_mhz_nvml = as_int(nvml.sm_clock_max_mhz());
  d.sm_clock_observed_mhz = as_int(nvml.sm_clock_mhz());
  d.pcie_gen_current = as_int(nvml.pcie_gen_current());
  d.pcie_gen_max = as_int(nvml.pcie_gen_max());
  d.pcie_width_current = as_int(nvml.pcie_width_current());
  d.pcie_width_max = as_int(nvml.pcie_width_max());
  d.nvlink_active_links = as_int(nvml.nvlink_active_links());
  return d;
}

}  // namespace triaudit
