// Energy accounting on recorded counter readings (host only): windows, wrap, unsupported boards,
// disagreement with power samples.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "energy.hpp"
#include "region_stats.hpp"

using namespace triaudit;

namespace {
EnergyReading reading(std::uint64_t mj) { return EnergyReading{mj, ""}; }
EnergyReading unsupported() { return EnergyReading{std::nullopt, "NOT_SUPPORTED"}; }
}  // namespace

TEST(Energy, WindowsAccumulateUntilTheyAreLongEnough) {
  EnergyAccount acc;
  // 700 W for 0.25 s = 175 J per window, 100 operations each.
  acc.add(0.25, reading(1'000'000), reading(1'175'000), 100);
  EnergyFigures f = acc.figures();
  EXPECT_FALSE(f.valid);
  EXPECT_NE(f.why.find("energy_window_too_short"), std::string::npos) << f.why;
  EXPECT_NE(f.why.find("0.25 s"), std::string::npos) << f.why;
  for (int i = 1; i < 4; ++i) acc.add(0.25, reading(2'000'000 + i * 1000), reading(2'175'000 + i * 1000), 100);
  f = acc.figures();
  ASSERT_TRUE(f.valid) << f.why;
  EXPECT_EQ(f.windows, 4);
  EXPECT_NEAR(f.window_s, 1.0, 1e-12);
  EXPECT_NEAR(f.joules, 700.0, 1e-9);
  EXPECT_NEAR(f.watts_mean, 700.0, 1e-9);
  EXPECT_NEAR(f.joules_per_op, 700.0 / 400.0, 1e-12);
}

TEST(Energy, CounterWrapIsAnOrdinaryDelta) {
  EnergyAccount acc;
  const std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  acc.add(1.5, reading(top - 499), reading(700), 10);  // 1200 mJ across the wrap
  const EnergyFigures f = acc.figures();
  ASSERT_TRUE(f.valid) << f.why;
  EXPECT_NEAR(f.joules, 1.2, 1e-12);
}

TEST(Energy, ACounterThatWentBackwardsVoidsTheWindow) {
  EnergyAccount acc;
  acc.add(1.5, reading(5'000'000'000ULL), reading(1'000), 10);  // driver reloaded: counter reset
  const EnergyFigures f = acc.figures();
  EXPECT_FALSE(f.valid);
  EXPECT_NE(f.why.find("reset"), std::string::npos) << f.why;
}

TEST(Energy, UnsupportedBoardsSayUnknownNeverZero) {
  EnergyAccount acc;
  acc.add(2.0, unsupported(), unsupported(), 10);
  const EnergyFigures f = acc.figures();
  EXPECT_FALSE(f.valid);
  EXPECT_EQ(f.why, "unknown (NVML: NOT_SUPPORTED)");
  EXPECT_EQ(f.joules, 0.0);  // not reported: the caller writes no counter when !valid
}

TEST(Energy, PowerSamplesCrossCheck) {
  EXPECT_EQ(power_disagreement(700.0, 690.0), "");
  const std::string d = power_disagreement(700.0, 560.0);  // samples 20 % below the counter
  EXPECT_NE(d.find("disagree"), std::string::npos) << d;
  EXPECT_NE(d.find("20%"), std::string::npos) << d;
  EXPECT_EQ(power_disagreement(700.0, 0.0), "");  // no samples: nothing to compare
}

// The measurement loop's statistics of region times (per operation): mean, median and nvbench's
// noise (relative standard deviation).
TEST(RegionStats, MeanMedianNoise) {
  const RegionStats s = region_stats({1.0, 2.0, 3.0, 4.0});
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_NEAR(s.noise, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);
  EXPECT_DOUBLE_EQ(region_stats({7.0}).noise, 0.0);
  EXPECT_DOUBLE_EQ(region_stats({1.0, 9.0, 2.0}).median, 2.0);
  EXPECT_DOUBLE_EQ(region_stats({}).mean, 0.0);
}

// A sum over many GPUs (allreduce across nodes) may draw more than one board ever could.
TEST(Energy, TheResetLimitScalesWithTheGpusSummed) {
  EnergyAccount one, many;
  // 32 GPUs at 700 W for 1.5 s: 33.6 kJ.
  one.add(1.5, EnergyReading{0, ""}, EnergyReading{33'600'000, ""}, 10);
  many.add(1.5, EnergyReading{0, ""}, EnergyReading{33'600'000, ""}, 10, 32);
  EXPECT_FALSE(one.figures().valid);
  ASSERT_TRUE(many.figures().valid) << many.figures().why;
  EXPECT_NEAR(many.figures().watts_mean, 22400.0, 1e-6);
}

// An allreduce's counter is summed over every rank's GPU while the power samples are one GPU's:
// eight GPUs at 500 W each are not "4000 W against 500 W, 88 % apart".
TEST(Energy, ASummedCounterIsComparedPerGpu) {
  EnergyAccount eight;
  eight.add(2.0, EnergyReading{0, ""}, EnergyReading{8'000'000, ""}, 10, 8);  // 8 kJ in 2 s: 4000 W
  const EnergyFigures f = eight.figures();
  ASSERT_TRUE(f.valid) << f.why;
  EXPECT_EQ(f.devices, 8);
  EXPECT_EQ(power_disagreement(f, 505.0), "");
  const std::string d = power_disagreement(f, 400.0);  // one GPU 20 % below the mean
  EXPECT_NE(d.find("20%"), std::string::npos) << d;
  EXPECT_NE(d.find("mean over 8 GPUs"), std::string::npos) << d;
  EnergyAccount one;
  one.add(2.0, EnergyReading{0, ""}, EnergyReading{1'000'000, ""}, 10);
  EXPECT_EQ(one.figures().devices, 1);
  EXPECT_EQ(power_disagreement(one.figures(), 505.0), "");
}
