// The SM clock, its event reasons and the board power are read through NVML while a case is
// measured: never while a timed region runs (nvbench samples outside them), so the driver's work
// for NVML cannot land inside a figure. Read through the NVML TEST DOUBLE (tests/doubles, loaded by
// TRIAUDIT_NVML_LIBRARY), which counts the calls.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "clock_watch.hpp"
#include "nvml.hpp"

namespace triaudit {
namespace {

struct Double {
  void (*reset)() = nullptr;
  void (*set)(const char*, int, int, const unsigned long long*) = nullptr;
  int (*calls)(const char*) = nullptr;
  Double() {
    const char* path = std::getenv("TRIAUDIT_NVML_LIBRARY");
    void* lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (lib == nullptr) return;
    reset = reinterpret_cast<void (*)()>(dlsym(lib, "triaudit_nvml_double_reset"));
    set = reinterpret_cast<void (*)(const char*, int, int, const unsigned long long*)>(
        dlsym(lib, "triaudit_nvml_double_set"));
    calls = reinterpret_cast<int (*)(const char*)>(dlsym(lib, "triaudit_nvml_double_calls"));
  }
  int nvml_reads() {
    return calls("nvmlDeviceGetClockInfo") + calls("nvmlDeviceGetCurrentClocksEventReasons") +
           calls("nvmlDeviceGetPowerUsage");
  }
};

class ClockSampling : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(d.reset, nullptr) << "run with TRIAUDIT_NVML_LIBRARY naming the NVML test double";
    d.reset();
    const unsigned long long mhz[] = {1980}, mw[] = {650000};
    d.set("sm_clock_mhz", 0, 1, mhz);
    d.set("power_mw", 0, 1, mw);
  }
  Double d;
};

// A timed region of 30 ms: the sampler the harness uses reads nothing during it (0.3.0's watch
// read the clock, the reasons and the power every 5 ms from a thread, inside every region: 18 reads
// in these 30 ms); it reads when the loop asks, between regions.
TEST_F(ClockSampling, NvmlIsNotReadWhileATimedRegionRuns) {
  NvmlDevice gpu("00000000:01:00.0", "");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  ClockSampler sampler(&gpu, 1980, ClockSamplingMode::Regions);
  const int before = d.nvml_reads();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the region
  EXPECT_EQ(d.nvml_reads() - before, 0);
  sampler.sample();                       // between regions
  EXPECT_EQ(d.nvml_reads() - before, 3);  // the clock, its reasons, the power
  const ClockSummary c = sampler.finish();
  EXPECT_EQ(c.samples, 1);
  EXPECT_EQ(c.min_mhz, 1980u);
  EXPECT_DOUBLE_EQ(c.power_mean_w, 650.0);
}

// Tiny regions (a launch case runs thousands a second) are not each followed by three NVML calls:
// at most one reading every 5 ms.
TEST_F(ClockSampling, AtMostOneReadingEveryFiveMilliseconds) {
  NvmlDevice gpu("00000000:01:00.0", "");
  ClockSampler sampler(&gpu, 1980, ClockSamplingMode::Regions);
  for (int i = 0; i < 100; ++i) sampler.sample();  // 100 regions within microseconds
  EXPECT_EQ(d.calls("nvmlDeviceGetClockInfo"), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(6));
  sampler.sample();
  EXPECT_EQ(d.calls("nvmlDeviceGetClockInfo"), 2);
  EXPECT_EQ(sampler.finish().samples, 2);
}

// The A/B of scripts/gpu_check.sh: TRIAUDIT_CLOCK_SAMPLING=thread is 0.3.0's watch (reads inside
// the region), off reads nothing and says no clock verdict.
TEST_F(ClockSampling, TheOtherModesForTheComparison) {
  NvmlDevice gpu("00000000:01:00.0", "");
  {
    ClockSampler thread(&gpu, 1980, ClockSamplingMode::Thread);
    const int before = d.nvml_reads();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_GT(d.nvml_reads() - before, 0);
    EXPECT_GT(thread.finish().samples, 0);
  }
  ClockSampler off(&gpu, 1980, ClockSamplingMode::Off);
  const int before = d.nvml_reads();
  off.sample();
  EXPECT_EQ(d.nvml_reads() - before, 0);
  EXPECT_EQ(off.finish().samples, 0);
}

}  // namespace
}  // namespace triaudit
