#include "clock_watch.hpp"

#include <chrono>

namespace triaudit {

ClockWatch::ClockWatch(const NvmlDevice* nvml, unsigned rated_boost_mhz, int period_ms)
    : nvml_(nvml), rated_boost_mhz_(rated_boost_mhz) {
  if (nvml_ == nullptr || !nvml_->ok()) return;
  running_ = true;
  thread_ = std::thread([this, period_ms] {
    while (running_.load(std::memory_order_relaxed)) {
      const auto mhz = nvml_->sm_clock_mhz();
      const auto reasons = nvml_->clock_event_reasons();
      const auto power = nvml_->power_usage_mw();
      if (mhz) {
        std::lock_guard<std::mutex> lock(mutex_);
        samples_.push_back({*mhz, reasons.value_or(0), power.value_or(0)});
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
    }
  });
}

ClockWatch::~ClockWatch() { stop(); }

void ClockWatch::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

ClockSummary ClockWatch::finish() {
  stop();
  std::lock_guard<std::mutex> lock(mutex_);
  return summarize_clocks(samples_, rated_boost_mhz_);
}

}  // namespace triaudit
