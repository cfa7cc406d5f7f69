#include <gtest/gtest.h>

#include <map>

#include "device_description.hpp"

using namespace triaudit;

namespace {
// A described device (not a measurement): HBM3 with a 5120-bit bus at 2619 MHz, as an H100 SXM
// reports itself, which gives the datasheet's 3.35 TB/s.
DeviceDescription described_hbm3_device() {
  DeviceDescription d;
  d.name = "Described HBM3 device";
  d.uuid = "GPU-00000000-0000-0000-0000-000000000000";
  d.pci_bus_id = "0000:01:00.0";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 52428800;
  d.memory_bytes = 85520809984ULL;
  d.memory_bus_width_bits = 5120;
  d.memory_clock_khz = 2619000;
  d.sm_clock_max_khz = 1980000;
  d.ecc_enabled = 1;
  d.cuda_driver_version = 13000;
  d.cuda_runtime_version = 12080;
  return d;
}

std::map<std::string, std::string> as_map(const ContextEntries& e) { return {e.begin(), e.end()}; }
}  // namespace

TEST(DeviceDescription, TheoreticalBandwidthIsTwiceClockTimesBusBytes) {
  const auto d = described_hbm3_device();
  EXPECT_DOUBLE_EQ(theoretical_memory_bandwidth(d), 2.0 * 2619e6 * 640.0);
  EXPECT_NEAR(theoretical_memory_bandwidth(d) / 1e12, 3.352, 0.001);
  DeviceDescription unknown;
  EXPECT_EQ(theoretical_memory_bandwidth(unknown), 0.0);
}

TEST(DeviceDescription, CudaVersionString) {
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(12080), "12.8");
  EXPECT_EQ(cuda_version_string(0), "unknown");
}

TEST(DeviceDescription, ContextCarriesEveryContractKey) {
  auto d = described_hbm3_device();
  d.nvml_status = "ok";
  d.driver_version = "580.65.06";
  d.sm_clock_max_mhz_nvml = 1980;
  d.sm_clock_observed_mhz = 345;
  d.pcie_gen_current = 5;
  d.pcie_gen_max = 5;
  d.pcie_width_current = 16;
  d.pcie_width_max = 16;
  d.nvlink_active_links = 18;
  const auto m = as_map(device_context_entries(d));
  for (const char* key : {"gpu_name",
                          "gpu_uuid",
                          "compute_capability",
                          "sm_count",
                          "l2_bytes",
                          "memory_bytes",
                          "memory_bus_width_bits",
                          "memory_clock_mhz",
                          "peak_memory_bandwidth_bytes_per_second",
                          "sm_clock_max_mhz",
                          "sm_clock_observed_mhz",
                          "ecc",
                          "pcie_generation_current",
                          "pcie_width_current",
                          "pcie_generation_max",
                          "pcie_width_max",
                          "driver_version",
                          "cuda_driver_version",
                          "cuda_runtime_version",
                          "gpu_available"})
    EXPECT_EQ(m.count(key), 1u) << key;
  EXPECT_EQ(m.at("compute_capability"), "9.0");
  EXPECT_EQ(m.at("memory_clock_mhz"), "2619");
  EXPECT_EQ(m.at("peak_memory_bandwidth_bytes_per_second"), "3352320000000");
  EXPECT_EQ(m.at("sm_clock_max_mhz"), "1980");
  EXPECT_EQ(m.at("sm_clock_observed_mhz"), "345");
  EXPECT_EQ(m.at("ecc"), "on");
  EXPECT_EQ(m.at("pcie_generation_current"), "5");
  EXPECT_EQ(m.at("cuda_runtime_version"), "12.8");
  EXPECT_EQ(m.at("nvlink_active_links"), "18");
}

TEST(DeviceDescription, UnreadableNvmlFieldsSayWhy) {
  auto d = described_hbm3_device();
  d.nvml_status = "libnvidia-ml.so.1 not found";
  const auto m = as_map(device_context_entries(d));
  EXPECT_EQ(m.at("pcie_generation_current"), "unknown (NVML: libnvidia-ml.so.1 not found)");
  EXPECT_EQ(m.at("sm_clock_max_mhz"), "1980");  // CUDA's own attribute still known
}

TEST(DeviceDescription, BuildContextHasVersionsAndVisibleDevices) {
  const auto m = as_map(build_context_entries("1,3"));
  EXPECT_EQ(m.at("cuda_visible_devices"), "1,3");
  EXPECT_FALSE(m.at("triaudit_version").empty());
  EXPECT_FALSE(m.at("triaudit_git_commit").empty());
  EXPECT_NE(m.at("cublas_version").find('.'), std::string::npos);
  EXPECT_EQ(as_map(build_context_entries(nullptr)).at("cuda_visible_devices"), "(unset)");
}

// "CUDA driver version is insufficient" sent people without any driver to upgrade one.
TEST(NoDeviceReason, NoDriverAtAllIsSaidSo) {
  const std::string r = explain_no_device(
      "cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version", false, 0, 13000);
  EXPECT_EQ(r, "no NVIDIA driver found (libcuda.so.1 not loadable)");
}

TEST(NoDeviceReason, OldDriverNamesBothVersions) {
  const std::string r =
      explain_no_device("cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version",
                        true, 12040, 13000);
  EXPECT_EQ(r, "driver too old for this CUDA runtime (driver supports 12.4, runtime needs 13.0)");
}

TEST(NoDeviceReason, OtherErrorsKeepCudasWords) {
  const std::string r =
      explain_no_device("cudaErrorNoDevice", "no CUDA-capable device is detected", true, 13000, 13000);
  EXPECT_EQ(r, "cudaErrorNoDevice: no CUDA-capable device is detected");
  // A hidden device on a machine without a driver: the driver is what is missing.
  EXPECT_EQ(explain_no_device("cudaErrorNoDevice", "no CUDA-capable device is detected", false, 0, 13000),
            "no NVIDIA driver found (libcuda.so.1 not loadable)");
}

// Every result names its schema, its host, and in whole-node mode the GPU and whether its
// siblings were loaded (triaudit run --all-gpus sets the environment).
TEST(RunContext, SchemaHostAndWholeNodeFields) {
  auto find = [](const ContextEntries& e, const std::string& k) {
    for (const auto& [key, value] : e)
      if (key == k) return value;
    return std::string("<absent>");
  };
  const ContextEntries plain = run_context_entries(nullptr, nullptr);
  EXPECT_EQ(find(plain, "triaudit_schema_version"), kSchemaVersion);
  EXPECT_NE(find(plain, "host"), "<absent>");
  EXPECT_NE(find(plain, "host"), "");
  EXPECT_EQ(find(plain, "siblings_loaded"), "false");
  EXPECT_EQ(find(plain, "gpu_index"), "<absent>");
  const ContextEntries node = run_context_entries("3", "true");
  EXPECT_EQ(find(node, "gpu_index"), "3");
  EXPECT_EQ(find(node, "siblings_loaded"), "true");
  EXPECT_EQ(find(run_context_entries("3", "yes please"), "siblings_loaded"), "false");
}
