#include <gtest/gtest.h>

#include "clock_summary.hpp"

using namespace triaudit;

TEST(ClockSummary, SteadyMaxClockIsNotThrottled) {
  const auto s = summarize_clocks({{1980, 0}, {1980, 0}, {1965, clock_reason::kGpuIdle}}, 1980);
  EXPECT_EQ(s.samples, 3);
  EXPECT_EQ(s.min_mhz, 1965u);
  EXPECT_NEAR(s.mean_mhz, 1975.0, 1e-9);
  EXPECT_FALSE(s.throttled) << s.why;
}

TEST(ClockSummary, SlowdownReasonFlagsTheRun) {
  const auto s = summarize_clocks({{1980, 0}, {1950, clock_reason::kSwPowerCap}}, 1980);
  EXPECT_TRUE(s.throttled);
  EXPECT_NE(s.why.find("sw_power_cap"), std::string::npos);
}

TEST(ClockSummary, SaggingClockFlagsTheRunEvenWithoutReason) {
  const auto s = summarize_clocks({{1500, 0}, {1600, 0}}, 1980);
  EXPECT_TRUE(s.throttled);
  EXPECT_NE(s.why.find("1550 MHz"), std::string::npos) << s.why;
}

TEST(ClockSummary, NoSamplesNoVerdict) {
  const auto s = summarize_clocks({}, 1980);
  EXPECT_EQ(s.samples, 0);
  EXPECT_FALSE(s.throttled);
}

TEST(ClockSummary, ReasonNames) {
  EXPECT_EQ(clock_reason_names(clock_reason::kHwThermalSlowdown | clock_reason::kSwPowerCap),
            "sw_power_cap,hw_thermal_slowdown");
  EXPECT_EQ(clock_reason_names(0x1000), "other:0x1000");
}
