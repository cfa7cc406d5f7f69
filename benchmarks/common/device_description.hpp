// What the suite knows about a device, as plain data: filled from CUDA and NVML by
// device_query.cpp, turned into Google Benchmark context entries here. Kept free of CUDA
// headers so the context building is unit-tested from described devices on any machine.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace triaudit {

struct DeviceDescription {
  int ordinal = 0;
  std::string name, uuid, pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::uint64_t l2_bytes = 0;
  std::uint64_t memory_bytes = 0;
  int memory_bus_width_bits = 0;
  int memory_clock_khz = 0;  // peak, as CUDA reports it
  int sm_clock_max_khz = 0;  // peak, as CUDA reports it
  bool integrated = false;
  int ecc_enabled = -1;                                   // 1 on, 0 off, -1 unknown
  int cuda_driver_version = 0, cuda_runtime_version = 0;  // e.g. 13000

  // From NVML where the driver's library is present; -1 / empty when not readable.
  std::string nvml_status = "not queried";
  std::string driver_version;
  int sm_clock_max_mhz_nvml = -1;
  int sm_clock_observed_mhz = -1;
  int pcie_gen_current = -1, pcie_gen_max = -1;
  int pcie_width_current = -1, pcie_width_max = -1;
  int nvlink_active_links = -1;  // -1: no NVLink (or not readable)
};

// 2 x memory clock x bus width / 8, in bytes per second (decimal). 0 when unknown.
double theoretical_memory_bandwidth(const DeviceDescription& d);

// "13.0" from 13000.
std::string cuda_version_string(int version);

// Why no device is usable, in words that point at the fix: CUDA's "driver version is
// insufficient" also appears when there is no driver at all.
std::string explain_no_device(const std::string& cuda_error_name, const std::string& cuda_error_words,
                              bool libcuda_loadable, int driver_version, int runtime_version);

using ContextEntries = std::vector<std::pair<std::string, std::string>>;

// Entries for one device (names are the keys of DESIGN.md's JSON contract).
ContextEntries device_context_entries(const DeviceDescription& d);

// Entries that describe the build and the environment, present on every run, GPU or not.
ContextEntries build_context_entries(const char* cuda_visible_devices);

// The version of the JSON contract (DESIGN.md): raised when a name, counter or context key that
// the scripts rely on changes meaning or disappears (README, "JSON context"). 2: each case describes
// itself (case_description.hpp), the context says where the figures come from, and p2p/latency/...
// became p2p/small_copy/... (the scripts read the old name as the new one).
inline constexpr const char* kSchemaVersion = "2";

// Schema version, host, and for whole-node runs (triaudit run --all-gpus sets the environment)
// the GPU's physical index and whether its siblings were measured at the same time.
ContextEntries run_context_entries(const char* gpu_index_env, const char* siblings_loaded_env);

}  // namespace triaudit
