// Samples the SM clock, the driver's clock-event reasons and the board power while a case is
// measured; `finish` turns the samples into a verdict (clock_summary.hpp).
//
// ClockSampler is what the measurement loop uses: it reads NVML only when asked, and the loop asks
// outside the timed regions (while a held stream waits for its release, or between host-timed
// regions, as nvbench samples), at most every 5 ms, so no NVML call's driver work can land inside a
// figure. ClockWatch, a thread reading every 5 ms whatever runs, was 0.3.0's way; it is kept for
// TRIAUDIT_CLOCK_SAMPLING=thread (the A/B of scripts/gpu_check.sh measures what it cost) and for the
// soak, which samples minutes of load.
#pragma once
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "clock_summary.hpp"
#include "nvml.hpp"

namespace triaudit {

class ClockWatch {
 public:
  // Starts sampling now; without NVML it records nothing and its summary is empty.
  ClockWatch(const NvmlDevice* nvml, unsigned rated_boost_mhz, int period_ms = 5);
  ~ClockWatch();
  ClockWatch(const ClockWatch&) = delete;
  ClockWatch& operator=(const ClockWatch&) = delete;

  // Stops sampling and summarises what was seen.
  ClockSummary finish();

 private:
  void stop();
  const NvmlDevice* nvml_;
  unsigned rated_boost_mhz_;
  std::atomic<bool> running_{false};
  std::mutex mutex_;
  std::vector<ClockSample> samples_;
  std::thread thread_;
};

// How the loop samples (TRIAUDIT_CLOCK_SAMPLING): regions (the default: outside the timed regions),
// thread (0.3.0's: every 5 ms from a thread, inside them too), off (no clock or power samples).
enum class ClockSamplingMode { Regions, Thread, Off };
// The environment's choice, read once; a value it does not know throws Error naming the three.
ClockSamplingMode clock_sampling_mode();
const char* clock_sampling_name(ClockSamplingMode m);

class ClockSampler {
 public:
  ClockSampler(const NvmlDevice* nvml, unsigned rated_boost_mhz, ClockSamplingMode mode,
               std::chrono::microseconds min_interval = std::chrono::milliseconds(5));
  // Regions: one reading of the clock, its reasons and the power, unless the last one was less
  // than min_interval ago. Thread and Off: nothing (the thread samples by itself).
  void sample();
  ClockSummary finish();

 private:
  const NvmlDevice* nvml_;
  unsigned rated_boost_mhz_;
  ClockSamplingMode mode_;
  std::chrono::microseconds min_interval_;
  std::chrono::steady_clock::time_point last_{};
  bool sampled_ = false;
  std::vector<ClockSample> samples_;
  std::unique_ptr<ClockWatch> thread_;
};

}  // namespace triaudit
