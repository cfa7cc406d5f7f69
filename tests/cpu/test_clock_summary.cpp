// The throttle policy on recorded reason masks and clock series (host only).
#include <gtest/gtest.h>

#include "clock_summary.hpp"

using namespace triaudit;
namespace r = clock_reason;

TEST(ClockSummary, SteadyClockIsNotThrottled) {
  const auto s = summarize_clocks({{1980, 0}, {1980, 0}, {1965, 0}}, 1980);
  EXPECT_EQ(s.busy_samples, 3);
  EXPECT_EQ(s.min_mhz, 1965u);
  EXPECT_NEAR(s.mean_mhz, 1975.0, 1e-9);
  EXPECT_FALSE(s.throttled) << s.note;
  EXPECT_FALSE(s.clock_low);
}

// The SW power cap is the normal state of A100/H100/H200 under GEMM: reported, not "throttled".
TEST(ClockSummary, SwPowerCapIsReportedSeparately) {
  const auto s =
      summarize_clocks({{1755, 0}, {1710, r::kSwPowerCap}, {1700, r::kSwPowerCap}, {1690, r::kSwPowerCap}}, 1980);
  EXPECT_FALSE(s.throttled) << s.note;
  EXPECT_NEAR(s.sw_power_cap_fraction, 0.75, 1e-12);
  EXPECT_NE(s.note.find("sw_power_cap"), std::string::npos) << s.note;
}

TEST(ClockSummary, HardwareAndThermalSlowdownsAreThrottling) {
  for (std::uint64_t bit : {r::kHwSlowdown, r::kSwThermalSlowdown, r::kHwThermalSlowdown, r::kHwPowerBrakeSlowdown}) {
    const auto s = summarize_clocks({{1980, 0}, {1200, bit}}, 1980);
    EXPECT_TRUE(s.throttled) << bit;
    EXPECT_NE(s.note.find(clock_reason_names(bit)), std::string::npos) << s.note;
  }
}

// nvbench's rule: a clock below 75 % of the rated boost clock (cudaDevAttrClockRate) is flagged.
// NVML's "max" SM clock is the top of the V/F curve (3105 MHz on an RTX 4090 that runs ~2.7 GHz
// at stock): it is not the yardstick.
TEST(ClockSummary, ClockComparedWithTheRatedBoostAtThreeQuarters) {
  EXPECT_FALSE(summarize_clocks({{2700, 0}, {2715, 0}}, 2520).clock_low);  // RTX 4090 at stock
  EXPECT_FALSE(summarize_clocks({{1500, 0}, {1600, 0}}, 1980).clock_low);  // 78 % of 1980
  const auto low = summarize_clocks({{1400, 0}, {1450, 0}}, 1980);         // 72 %
  EXPECT_TRUE(low.clock_low);
  EXPECT_FALSE(low.throttled);
  EXPECT_NE(low.note.find("1425 MHz"), std::string::npos) << low.note;
  EXPECT_NE(low.note.find("75%"), std::string::npos) << low.note;
}

// The SM clock falls toward idle whenever the SMs wait (copy-engine copies, host-timed copies,
// launch gaps): samples the driver marks idle say nothing about the card's clock under load.
TEST(ClockSummary, IdleSamplesGiveNoVerdict) {
  const auto s = summarize_clocks({{345, r::kGpuIdle}, {345, r::kGpuIdle}, {1980, 0}}, 1980);
  EXPECT_EQ(s.samples, 3);
  EXPECT_EQ(s.busy_samples, 1);
  EXPECT_NEAR(s.mean_mhz, 1980.0, 1e-9);
  EXPECT_FALSE(s.clock_low);
  const auto idle = summarize_clocks({{345, r::kGpuIdle}, {210, r::kGpuIdle}}, 1980);
  EXPECT_EQ(idle.busy_samples, 0);
  EXPECT_FALSE(idle.clock_low);
  EXPECT_FALSE(idle.throttled);
  EXPECT_NE(idle.note.find("idle"), std::string::npos) << idle.note;
}

TEST(ClockSummary, NoSamplesNoVerdict) {
  const auto s = summarize_clocks({}, 1980);
  EXPECT_EQ(s.samples, 0);
  EXPECT_FALSE(s.throttled);
  EXPECT_TRUE(s.note.empty());
}

TEST(ClockSummary, ReasonNames) {
  EXPECT_EQ(clock_reason_names(r::kHwThermalSlowdown | r::kSwPowerCap), "sw_power_cap,hw_thermal_slowdown");
  EXPECT_EQ(clock_reason_names(0x1000), "other:0x1000");
}

// Power samples (mW) taken beside the clocks: mean and max over the busy samples.
TEST(ClockSummary, PowerFromTheBusySamples) {
  const auto s = summarize_clocks({{1980, 0, 650000}, {1980, 0, 700000}, {345, r::kGpuIdle, 90000}}, 1980);
  EXPECT_NEAR(s.power_mean_w, 675.0, 1e-9);
  EXPECT_NEAR(s.power_max_w, 700.0, 1e-9);
  const auto none = summarize_clocks({{1980, 0}}, 1980);
  EXPECT_EQ(none.power_samples, 0);
}
