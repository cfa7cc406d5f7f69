#include "clock_summary.hpp"

#include <algorithm>
#include <cstdio>

namespace triaudit {

std::string clock_reason_names(std::uint64_t reasons) {
  static const struct {
    std::uint64_t bit;
    const char* name;
  } names[] = {
      {clock_reason::kGpuIdle, "gpu_idle"},
      {clock_reason::kApplicationsClocksSetting, "applications_clocks_setting"},
      {clock_reason::kSwPowerCap, "sw_power_cap"},
      {clock_reason::kHwSlowdown, "hw_slowdown"},
      {clock_reason::kSyncBoost, "sync_boost"},
      {clock_reason::kSwThermalSlowdown, "sw_thermal_slowdown"},
      {clock_reason::kHwThermalSlowdown, "hw_thermal_slowdown"},
      {clock_reason::kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
  };
  std::string out;
  std::uint64_t known = 0;
  for (const auto& n : names) {
    known |= n.bit;
    if (reasons & n.bit) out += (out.empty() ? "" : ",") + std::string(n.name);
  }
  if (reasons & ~known) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reasons & ~known));
    out += (out.empty() ? "other:" : ",other:") + std::string(buf);
  }
  return out;
}

ClockSummary summarize_clocks(const std::vector<ClockSample>& samples, unsigned max_clock_mhz,
                              double sag_fraction) {
  ClockSummary s;
  if (samples.empty()) return s;
  s.samples = static_cast<int>(samples.size());
  s.min_mhz = samples.front().sm_mhz;
  double sum = 0.0;
  for (const auto& x : samples) {
    s.min_mhz = std::min(s.min_mhz, x.sm_mhz);
    s.max_mhz = std::max(s.max_mhz, x.sm_mhz);
    sum += x.sm_mhz;
    s.reasons_seen |= x.reasons;
  }
  s.mean_mhz = sum / static_cast<double>(samples.size());
  const std::uint64_t slow = s.reasons_seen & clock_reason::kSlowdownMask;
  if (slow != 0) {
    s.throttled = true;
    s.why = "driver reported " + clock_reason_names(slow);
  }
  if (max_clock_mhz > 0 && s.mean_mhz < sag_fraction * max_clock_mhz) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "mean SM clock %.0f MHz below %.0f%% of max %u MHz", s.mean_mhz,
                  sag_fraction * 100.0, max_clock_mhz);
    s.why += (s.why.empty() ? "" : "; ") + std::string(buf);
    s.throttled = true;
  }
  return s;
}

}  // namespace triaudit
