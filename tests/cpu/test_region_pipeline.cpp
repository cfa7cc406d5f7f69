// The sustained window's schedule (region_pipeline.hpp) against a fake device that runs queued
// regions one after another: the device never waits for the host, the warm-up and the window
// are honoured, every queued region is waited for, and no slot is reused while in flight.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "region_pipeline.hpp"

namespace {

// A device that runs each queued region for `region_s` seconds, back to back, starting as soon
// as it is queued and the previous one is done; the host clock advances only when the host waits
// (plus `host_cost_s` per queue call).
struct FakeDevice {
  double region_s = 1e-3, host_cost_s = 1e-5;
  double host = 0.0, device_free_at = 0.0, idle = 0.0;
  std::vector<double> end_of_slot = std::vector<double>(8, -1.0);
  std::vector<bool> busy = std::vector<bool>(8, false);
  int max_in_flight = 0, in_flight = 0;
  bool reused_busy_slot = false;

  void enqueue(int slot) {
    host += host_cost_s;
    if (busy[slot]) reused_busy_slot = true;
    const double start = std::max(host, device_free_at);
    if (device_free_at > 0.0 && start > device_free_at) idle += start - device_free_at;
    device_free_at = start + region_s;
    end_of_slot[slot] = device_free_at;
    busy[slot] = true;
    max_in_flight = std::max(max_in_flight, ++in_flight);
  }
  double wait(int slot) {
    host = std::max(host, end_of_slot[slot]);
    busy[slot] = false;
    --in_flight;
    return region_s;
  }
};

triaudit::PipelineTimes run(FakeDevice& d, int depth, double warmup, double window) {
  return triaudit::run_pipelined_regions([&](int s) { d.enqueue(s); }, [&](int s) { return d.wait(s); },
                                         [&] { return d.host; }, depth, warmup, window);
}

}  // namespace

TEST(RegionPipeline, TheDeviceNeverIdlesWithThreeInFlight) {
  FakeDevice d;
  const auto t = run(d, 3, 0.2, 1.0);
  EXPECT_EQ(d.idle, 0.0);
  EXPECT_FALSE(d.reused_busy_slot);
  EXPECT_EQ(d.max_in_flight, 3);
  EXPECT_EQ(d.in_flight, 0);  // every queued region was waited for
  // About 0.2 s of warm-up and 1 s of timed regions of 1 ms each.
  EXPECT_NEAR(static_cast<double>(t.warmup.size()), 200, 5);
  EXPECT_NEAR(static_cast<double>(t.timed.size()), 1000, 5);
  EXPECT_NEAR(t.warmup_wall, 0.2, 0.01);
}

// One region in flight is the old schedule: the device idles for the host's turn around every region.
TEST(RegionPipeline, OneInFlightLeavesTheDeviceIdle) {
  FakeDevice d;
  (void)run(d, 1, 0.0, 0.1);
  EXPECT_GT(d.idle, 0.0);
}

TEST(RegionPipeline, AtLeastOneTimedRegionWithoutAWindow) {
  FakeDevice d;
  const auto t = run(d, 3, 0.0, 0.0);
  EXPECT_GE(t.timed.size(), 1u);
  EXPECT_TRUE(t.warmup.empty());
  EXPECT_EQ(d.in_flight, 0);
}
