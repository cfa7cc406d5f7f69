// Samples the SM clock, the driver's clock-event reasons and the board power on a background
// thread while a case is measured; `finish` turns the samples into a verdict (clock_summary.hpp).
#pragma once
#include <atomic>
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

}  // namespace triaudit
