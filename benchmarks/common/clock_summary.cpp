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

ClockSummary summarize_clocks(const std::vector<ClockSample>& samples, unsigned rated_boost_mhz, double low_fraction) {
  ClockSummary s;
  s.samples = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  double sum = 0.0, power_sum = 0.0;
  int capped = 0;
  for (const auto& x : samples) {
    if (x.reasons & clock_reason::kGpuIdle) continue;
    s.min_mhz = s.busy_samples == 0 ? x.sm_mhz : std::min(s.min_mhz, x.sm_mhz);
    s.max_mhz = std::max(s.max_mhz, x.sm_mhz);
    sum += x.sm_mhz;
    s.reasons_seen |= x.reasons;
    capped += (x.reasons & clock_reason::kSwPowerCap) != 0;
    if (x.power_mw > 0) {
      power_sum += x.power_mw / 1000.0;
      s.power_max_w = std::max(s.power_max_w, x.power_mw / 1000.0);
      ++s.power_samples;
    }
    ++s.busy_samples;
  }
  if (s.busy_samples == 0) {
    s.note = "SMs idle while measured: no clock verdict";
    return s;
  }
  s.mean_mhz = sum / s.busy_samples;
  s.sw_power_cap_fraction = static_cast<double>(capped) / s.busy_samples;
  if (s.power_samples > 0) s.power_mean_w = power_sum / s.power_samples;
  std::string note;
  auto add = [&note](const std::string& part) { note += (note.empty() ? "" : "; ") + part; };
  if (const std::uint64_t slow = s.reasons_seen & clock_reason::kThrottleMask; slow != 0) {
    s.throttled = true;
    add("throttled: driver reported " + clock_reason_names(slow));
  }
  if (rated_boost_mhz > 0 && s.mean_mhz < low_fraction * rated_boost_mhz) {
    s.clock_low = true;
    char buf[160];
    std::snprintf(buf, sizeof buf, "mean SM clock %.0f MHz below %.0f%% of the rated boost %u MHz", s.mean_mhz,
                  low_fraction * 100.0, rated_boost_mhz);
    add(buf);
  }
  if (capped > 0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "sw_power_cap in %.0f%% of busy samples", 100.0 * s.sw_power_cap_fraction);
    add(buf);
  }
  s.note = note;
  return s;
}

}  // namespace triaudit
