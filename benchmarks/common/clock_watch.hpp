// Samples the SM clock and the driver's clock-event reasons on a background thread while a
// case is measured, then writes what it saw as counters (sm_clock_min_mhz, sm_clock_mean_mhz,
// throttled) so a sagging clock is visible next to the number it affected.
#pragma once
#include <benchmark/benchmark.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "clock_summary.hpp"
#include "nvml.hpp"

namespace triaudit {

class ClockWatch {
 public:
  // Starts sampling now; without NVML it records nothing and reports nothing.
  ClockWatch(const NvmlDevice* nvml, unsigned max_clock_mhz, int period_ms = 5);
  ~ClockWatch();
  ClockWatch(const ClockWatch&) = delete;
  ClockWatch& operator=(const ClockWatch&) = delete;

  // Stops sampling and adds the counters to `state`; returns the summary.
  ClockSummary finish(benchmark::State& state);

 private:
  void stop();
  const NvmlDevice* nvml_;
  unsigned max_clock_mhz_;
  std::atomic<bool> running_{false};
  std::mutex mutex_;
  std::vector<ClockSample> samples_;
  std::thread thread_;
};

}  // namespace triaudit
