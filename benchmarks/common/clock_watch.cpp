#include "clock_watch.hpp"

#include <chrono>

namespace triaudit {

ClockWatch::ClockWatch(const NvmlDevice* nvml, unsigned max_clock_mhz, int period_ms)
    : nvml_(nvml), max_clock_mhz_(max_clock_mhz) {
  if (nvml_ == nullptr || !nvml_->ok()) return;
  running_ = true;
  thread_ = std::thread([this, period_ms] {
    while (running_.load(std::memory_order_relaxed)) {
      const auto mhz = nvml_->sm_clock_mhz();
      const auto reasons = nvml_->clock_event_reasons();
      if (mhz) {
        std::lock_guard<std::mutex> lock(mutex_);
        samples_.push_back({*mhz, reasons.value_or(0)});
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

ClockSummary ClockWatch::finish(benchmark::State& state) {
  stop();
  std::lock_guard<std::mutex> lock(mutex_);
  const ClockSummary s = summarize_clocks(samples_, max_clock_mhz_);
  if (s.samples > 0) {
    state.counters["sm_clock_min_mhz"] = s.min_mhz;
    state.counters["sm_clock_mean_mhz"] = s.mean_mhz;
    state.counters["throttled"] = s.throttled ? 1.0 : 0.0;
    if (s.throttled) state.SetLabel("throttled: " + s.why);
  }
  return s;
}

}  // namespace triaudit
