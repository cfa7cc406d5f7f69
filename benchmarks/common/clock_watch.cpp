#include "clock_watch.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "error.hpp"

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

ClockSamplingMode clock_sampling_mode() {
  static const ClockSamplingMode mode = [] {
    const char* v = std::getenv("TRIAUDIT_CLOCK_SAMPLING");
    if (v == nullptr || *v == '\0' || std::strcmp(v, "regions") == 0) return ClockSamplingMode::Regions;
    if (std::strcmp(v, "thread") == 0) return ClockSamplingMode::Thread;
    if (std::strcmp(v, "off") == 0) return ClockSamplingMode::Off;
    throw Error(std::string("TRIAUDIT_CLOCK_SAMPLING=") + v + ": one of regions, thread, off");
  }();
  return mode;
}

const char* clock_sampling_name(ClockSamplingMode m) {
  switch (m) {
    case ClockSamplingMode::Regions:
      return "regions";
    case ClockSamplingMode::Thread:
      return "thread";
    case ClockSamplingMode::Off:
      return "off";
  }
  return "?";
}

ClockSampler::ClockSampler(const NvmlDevice* nvml, unsigned rated_boost_mhz, ClockSamplingMode mode,
                           std::chrono::microseconds min_interval)
    : nvml_(nvml != nullptr && nvml->ok() ? nvml : nullptr),
      rated_boost_mhz_(rated_boost_mhz),
      mode_(mode),
      min_interval_(min_interval) {
  if (mode_ == ClockSamplingMode::Thread && nvml_ != nullptr)
    thread_ = std::make_unique<ClockWatch>(nvml_, rated_boost_mhz_);
}

void ClockSampler::sample() {
  if (mode_ != ClockSamplingMode::Regions || nvml_ == nullptr) return;
  const auto now = std::chrono::steady_clock::now();
  if (sampled_ && now - last_ < min_interval_) return;
  sampled_ = true;
  last_ = now;
  const auto mhz = nvml_->sm_clock_mhz();
  const auto reasons = nvml_->clock_event_reasons();
  const auto power = nvml_->power_usage_mw();
  if (mhz) samples_.push_back({*mhz, reasons.value_or(0), power.value_or(0)});
}

ClockSummary ClockSampler::finish() {
  if (thread_) return thread_->finish();
  return summarize_clocks(samples_, rated_boost_mhz_);
}

}  // namespace triaudit
