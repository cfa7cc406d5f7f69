// Hardware error counters around a case (health.hpp), read through the NVML TEST DOUBLE
// (tests/doubles/nvml_double.cpp, loaded by TRIAUDIT_NVML_LIBRARY: never the driver's NVML), and
// the rule that makes a case an error. Run by CTest twice: with the double (Health.*) and with
// NVML absent (HealthWithoutNvml.*).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "health.hpp"
#include "nvml.hpp"

namespace triaudit {
namespace {

// The double's control functions, from the same library the harness loaded.
struct Double {
  void (*reset)() = nullptr;
  void (*set)(const char*, int, int, const unsigned long long*) = nullptr;
  void (*add_xid)(unsigned long long) = nullptr;
  void (*set_links)(int) = nullptr;
  void (*set_error_link)(int) = nullptr;
  void (*set_links_down)(unsigned) = nullptr;
  int (*calls)(const char*) = nullptr;

  Double() {
    const char* path = std::getenv("TRIAUDIT_NVML_LIBRARY");
    void* lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (lib == nullptr) return;
    reset = reinterpret_cast<void (*)()>(dlsym(lib, "triaudit_nvml_double_reset"));
    set = reinterpret_cast<void (*)(const char*, int, int, const unsigned long long*)>(
        dlsym(lib, "triaudit_nvml_double_set"));
    add_xid = reinterpret_cast<void (*)(unsigned long long)>(dlsym(lib, "triaudit_nvml_double_add_xid"));
    set_links = reinterpret_cast<void (*)(int)>(dlsym(lib, "triaudit_nvml_double_set_nvlink_links"));
    calls = reinterpret_cast<int (*)(const char*)>(dlsym(lib, "triaudit_nvml_double_calls"));
    set_error_link = reinterpret_cast<void (*)(int)>(dlsym(lib, "triaudit_nvml_double_set_nvlink_error_link"));
    set_links_down = reinterpret_cast<void (*)(unsigned)>(dlsym(lib, "triaudit_nvml_double_set_nvlinks_down"));
  }
  void script(const char* counter, std::vector<unsigned long long> v, int rc = 0) {
    set(counter, rc, static_cast<int>(v.size()), v.data());
  }
};

class Health : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(d.reset, nullptr) << "run with TRIAUDIT_NVML_LIBRARY naming the NVML test double";
    d.reset();
  }
  HealthChange around(const std::function<void()>& during) {
    NvmlDevice gpu("00000000:01:00.0", "");
    EXPECT_TRUE(gpu.ok()) << gpu.status();
    GpuReadings g{"GPU 0", read_health(gpu), {}};
    during();
    g.after = read_health(gpu);
    return health_change({g});
  }
  Double d;
};

TEST_F(Health, TemperatureComesFromTemperatureV) {
  d.script("temperature_v", {65});
  d.script("temperature", {20});
  NvmlDevice gpu("00000000:01:00.0", "");
  EXPECT_EQ(gpu.temperature_c().value_or(0), 65u);
  EXPECT_GT(d.calls("nvmlDeviceGetTemperatureV"), 0);
  EXPECT_EQ(d.calls("nvmlDeviceGetTemperature"), 0);  // the deprecated call is not used
  d.script("temperature_v", {0}, 13);                 // a driver without it: FUNCTION_NOT_FOUND
  EXPECT_EQ(gpu.temperature_c().value_or(0), 20u);
}

TEST_F(Health, NothingMovedNothingSaid) {
  const HealthChange c = around([] {});
  EXPECT_TRUE(c.failure.empty());
  EXPECT_TRUE(c.moved.empty());
  EXPECT_EQ(c.counters.at("health_pcie_replays"), 0.0);
  EXPECT_EQ(c.counters.at("health_ecc_uncorrected"), 0.0);
  EXPECT_EQ(c.counters.at("health_xid_events"), 0.0);
}

TEST_F(Health, AReplayBurstIsCountedNotFailed) {
  d.script("pcie_replays", {5, 17});
  d.script("nvlink_replay", {100, 12100});
  d.script("ecc_corrected", {3, 4});
  const HealthChange c = around([] {});
  EXPECT_EQ(c.counters.at("health_pcie_replays"), 12.0);
  EXPECT_EQ(c.counters.at("health_nvlink_replay_errors"), 12000.0);
  EXPECT_EQ(c.counters.at("health_ecc_corrected"), 1.0);
  EXPECT_TRUE(c.failure.empty()) << c.failure;  // corrected and replayed: reported, judged by gate
  ASSERT_EQ(c.moved.size(), 3u);
  EXPECT_EQ(c.moved[0], "GPU 0: 1 corrected ECC errors");
  EXPECT_EQ(c.moved[1], "GPU 0: 12000 NVLink replays (link 0: 12000)");
  EXPECT_EQ(c.moved[2], "GPU 0: 12 PCIe replays");
}

// The report's "12k replays on link 7 during that case": the link is named.
TEST_F(Health, TheLinkThatReplayedIsNamed) {
  ASSERT_NE(d.set_error_link, nullptr);
  d.set_links(18);
  d.set_error_link(7);
  d.script("nvlink_replay", {0, 12000});
  const HealthChange c = around([] {});
  EXPECT_EQ(c.counters.at("health_nvlink_replay_errors"), 12000.0);
  ASSERT_EQ(c.moved.size(), 1u);
  EXPECT_EQ(c.moved[0], "GPU 0: 12000 NVLink replays (link 7: 12000)");
}

TEST_F(Health, ALinkThatWentDownDuringTheCaseIsSaid) {
  ASSERT_NE(d.set_links_down, nullptr);
  d.set_links(18);
  const HealthChange quiet = around([] {});
  EXPECT_EQ(quiet.counters.at("health_nvlink_links_down"), 0.0);  // readable, nothing went down
  const HealthChange c = around([&] { d.set_links_down((1u << 3) | (1u << 11)); });
  EXPECT_EQ(c.counters.at("health_nvlink_links_down"), 2.0);
  ASSERT_EQ(c.moved.size(), 1u);
  EXPECT_EQ(c.moved[0], "GPU 0: NVLink links 3, 11 went down");
  EXPECT_TRUE(c.failure.empty()) << c.failure;  // a figure over fewer links is judged by gate
}

TEST_F(Health, AnUncorrectedErrorFailsTheCase) {
  d.script("ecc_uncorrected", {0, 2});
  const HealthChange c = around([] {});
  EXPECT_EQ(c.counters.at("health_ecc_uncorrected"), 2.0);
  EXPECT_EQ(c.failure, "health: GPU 0: 2 uncorrected ECC errors during the case: its figure is not trusted");
}

TEST_F(Health, APendingRemapFailsTheCaseAPendingOneBeforeDoesNot) {
  d.script("remap_pending", {0, 1});
  HealthChange c = around([] {});
  EXPECT_EQ(c.counters.at("health_remap_pending"), 1.0);
  EXPECT_NE(c.failure.find("a row remap became pending"), std::string::npos) << c.failure;
  d.reset();
  d.script("remap_pending", {1, 1});  // pending before the case: gate's to judge, not this case's
  c = around([] {});
  EXPECT_EQ(c.counters.at("health_remap_pending"), 1.0);
  EXPECT_TRUE(c.failure.empty()) << c.failure;
}

TEST_F(Health, ARemapFailureFailsTheCaseAnEarlierOneDoesNot) {
  d.script("remap_pending", {0, 1});
  d.script("remap_failure", {0, 1});
  HealthChange c = around([] {});
  EXPECT_NE(c.failure.find("a row remap failed"), std::string::npos) << c.failure;
  d.reset();
  d.script("remap_pending", {1, 1});
  d.script("remap_failure", {1, 1});  // failed before the case: not this case's doing
  c = around([] {});
  EXPECT_TRUE(c.failure.empty()) << c.failure;
}

TEST_F(Health, AnUncorrectableRemappedRowFailsTheCase) {
  d.script("remap_uncorrectable", {2, 3});
  const HealthChange c = around([] {});
  EXPECT_EQ(c.counters.at("health_remapped_rows_uncorrectable"), 1.0);
  EXPECT_EQ(c.failure, "health: GPU 0: 1 rows remapped (uncorrectable) during the case: its figure is not trusted");
}

TEST_F(Health, ADoubleBitRetiredPageFailsTheCaseASingleBitOneDoesNot) {
  d.script("retired_sbe", {0, 4});
  HealthChange c = around([] {});
  EXPECT_EQ(c.counters.at("health_retired_pages_sbe"), 4.0);
  EXPECT_TRUE(c.failure.empty()) << c.failure;
  d.reset();
  d.script("retired_dbe", {0, 1});
  c = around([] {});
  EXPECT_EQ(c.counters.at("health_retired_pages_dbe"), 1.0);
  EXPECT_NE(c.failure.find("1 pages retired (double-bit)"), std::string::npos) << c.failure;
}

TEST_F(Health, ACounterThatWentDownWasResetNotAnError) {
  d.script("ecc_uncorrected", {7, 0});  // a driver reload between the readings
  const HealthChange c = around([] {});
  EXPECT_EQ(c.counters.at("health_ecc_uncorrected"), 0.0);
  EXPECT_TRUE(c.failure.empty()) << c.failure;
}

TEST_F(Health, ACriticalXidDuringTheCaseFailsIt) {
  d.add_xid(13);  // before the case: drained by the first reading, not this case's
  NvmlDevice gpu("00000000:01:00.0", "");
  (void)read_health(gpu);  // registers for events (the first reading of a process)
  d.add_xid(13);
  GpuReadings g{"GPU 0", read_health(gpu), {}};
  d.add_xid(79);
  g.after = read_health(gpu);
  const HealthChange c = health_change({g});
  EXPECT_EQ(c.counters.at("health_xid_events"), 1.0);
  EXPECT_NE(c.failure.find("critical XID 79"), std::string::npos) << c.failure;
  EXPECT_EQ(c.failure.find("13"), std::string::npos) << c.failure;
}

TEST_F(Health, UnsupportedCountersAreAbsentAndSaidNeverZero) {
  d.script("remap", {0}, 3);  // NOT_SUPPORTED, as GeForce boards answer
  d.script("pcie_replays", {0}, 3);
  d.set_links(0);  // no NVLink
  NvmlDevice gpu("00000000:01:00.0", "");
  const HealthReading r = read_health(gpu);
  const std::string support = health_support(r);
  EXPECT_NE(support.find("remapped_rows_correctable: NOT_SUPPORTED"), std::string::npos) << support;
  EXPECT_NE(support.find("pcie_replays: NOT_SUPPORTED"), std::string::npos) << support;
  EXPECT_NE(support.find("nvlink_replay_errors: NOT_SUPPORTED"), std::string::npos) << support;
  EXPECT_NE(support.find("ecc_corrected: ok"), std::string::npos) << support;
  const HealthChange c = health_change({{"GPU 0", r, read_health(gpu)}});
  EXPECT_EQ(c.counters.count("health_pcie_replays"), 0u);
  EXPECT_EQ(c.counters.count("health_remapped_rows_correctable"), 0u);
  EXPECT_EQ(c.counters.count("health_remap_pending"), 0u);
  EXPECT_EQ(c.counters.count("health_nvlink_crc_errors"), 0u);
  EXPECT_EQ(c.counters.count("health_ecc_corrected"), 1u);
}

TEST_F(Health, TwoGpusAreSummedAndNamed) {
  NvmlDevice gpu("00000000:01:00.0", "");
  HealthReading quiet = read_health(gpu);
  HealthReading moved = quiet;
  moved.counts["pcie_replays"] += 7;
  const HealthChange c = health_change({{"GPU 0", quiet, quiet}, {"GPU 1", quiet, moved}});
  EXPECT_EQ(c.counters.at("health_pcie_replays"), 7.0);
  ASSERT_EQ(c.moved.size(), 1u);
  EXPECT_EQ(c.moved[0], "GPU 1: 7 PCIe replays");
}

TEST(HealthWithoutNvml, NothingIsReadNothingChanges) {
  NvmlDevice gpu("00000000:01:00.0", "");
  EXPECT_FALSE(gpu.ok());
  const HealthReading r = read_health(gpu);
  EXPECT_TRUE(r.counts.empty());
  EXPECT_NE(health_support(r).find("not found"), std::string::npos) << health_support(r);
  const HealthChange c = health_change({{"GPU 0", r, read_health(gpu)}});
  EXPECT_TRUE(c.counters.empty());
  EXPECT_TRUE(c.failure.empty());
  EXPECT_TRUE(c.moved.empty());
}

}  // namespace
}  // namespace triaudit
