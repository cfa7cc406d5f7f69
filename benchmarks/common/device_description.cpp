#include "device_description.hpp"

#include <unistd.h>

#include <cstdio>

#include "version.hpp"

namespace triaudit {
namespace {
std::string known_or(int v, const char* unknown) { return v < 0 ? unknown : std::to_string(v); }

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
}  // namespace

double theoretical_memory_bandwidth(const DeviceDescription& d) {
  if (d.memory_clock_khz <= 0 || d.memory_bus_width_bits <= 0) return 0.0;
  return 2.0 * static_cast<double>(d.memory_clock_khz) * 1e3 * static_cast<double>(d.memory_bus_width_bits) / 8.0;
}

std::string cuda_version_string(int version) {
  if (version <= 0) return "unknown";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string explain_no_device(const std::string& cuda_error_name, const std::string& cuda_error_words,
                              bool libcuda_loadable, int driver_version, int runtime_version) {
  if (!libcuda_loadable) return "no NVIDIA driver found (libcuda.so.1 not loadable)";
  if (cuda_error_name == "cudaErrorInsufficientDriver" && driver_version > 0)
    return "driver too old for this CUDA runtime (driver supports " + cuda_version_string(driver_version) +
           ", runtime needs " + cuda_version_string(runtime_version) + ")";
  return cuda_error_name + ": " + cuda_error_words;
}

ContextEntries device_context_entries(const DeviceDescription& d) {
  const std::string nvml_why = d.nvml_status == "ok" ? "unknown" : "unknown (NVML: " + d.nvml_status + ")";
  const char* unknown = nvml_why.c_str();
  ContextEntries e = {
      {"gpu_available", "true"},
      {"gpu_ordinal", std::to_string(d.ordinal)},
      {"gpu_name", d.name},
      {"gpu_uuid", d.uuid},
      {"gpu_pci_bus_id", d.pci_bus_id},
      {"gpu_integrated", d.integrated ? "true" : "false"},
      {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
      {"sm_count", std::to_string(d.sm_count)},
      {"l2_bytes", std::to_string(d.l2_bytes)},
      {"memory_bytes", std::to_string(d.memory_bytes)},
      {"memory_bus_width_bits", std::to_string(d.memory_bus_width_bits)},
      {"memory_clock_mhz", fixed(d.memory_clock_khz / 1e3, 0)},
      {"peak_memory_bandwidth_bytes_per_second", fixed(theoretical_memory_bandwidth(d), 0)},
      {"peak_memory_bandwidth_source", "2 x memory clock x bus width / 8, as the device reports them"},
      {"sm_clock_max_mhz",
       d.sm_clock_max_mhz_nvml > 0 ? std::to_string(d.sm_clock_max_mhz_nvml) : fixed(d.sm_clock_max_khz / 1e3, 0)},
      {"sm_clock_observed_mhz", known_or(d.sm_clock_observed_mhz, unknown)},
      {"ecc", d.ecc_enabled < 0 ? "unknown" : (d.ecc_enabled ? "on" : "off")},
      {"pcie_generation_current", known_or(d.pcie_gen_current, unknown)},
      {"pcie_generation_max", known_or(d.pcie_gen_max, unknown)},
      {"pcie_width_current", known_or(d.pcie_width_current, unknown)},
      {"pcie_width_max", known_or(d.pcie_width_max, unknown)},
      {"nvlink_active_links", d.nvlink_active_links < 0 ? "none reported" : std::to_string(d.nvlink_active_links)},
      {"driver_version", d.driver_version.empty() ? unknown : d.driver_version},
      {"cuda_driver_version", cuda_version_string(d.cuda_driver_version)},
      {"cuda_runtime_version", cuda_version_string(d.cuda_runtime_version)},
      {"nvml", d.nvml_status},
  };
  return e;
}

ContextEntries run_context_entries(const char* gpu_index_env, const char* siblings_loaded_env) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  ContextEntries e = {
      {"triaudit_schema_version", kSchemaVersion},
      // Where the figures come from: an executable measures (test fixtures say "synthetic",
      // `triaudit import` "imported"); every reader shows it beside the figures.
      {"triaudit_provenance", "measured"},
      {"host", host[0] ? host : "unknown"},
      {"siblings_loaded",
       siblings_loaded_env != nullptr && std::string(siblings_loaded_env) == "true" ? "true" : "false"},
  };
  if (gpu_index_env != nullptr && *gpu_index_env != '\0') e.emplace_back("gpu_index", gpu_index_env);
  return e;
}

ContextEntries build_context_entries(const char* cuda_visible_devices) {
  return {
      {"triaudit_version", suite_version()},
      {"triaudit_git_commit", suite_git_commit()},
      {"cuda_toolkit_version", toolkit_version()},
      {"cublas_version", cublas_build_version() + " (headers built against)"},
      {"nccl_version", nccl_build_version()},
      {"cuda_architectures_built", cuda_architectures_built()},
      {"cuda_visible_devices", cuda_visible_devices == nullptr ? "(unset)" : cuda_visible_devices},
  };
}

}  // namespace triaudit
