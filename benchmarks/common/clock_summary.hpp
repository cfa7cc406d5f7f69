// Turning SM clock, reason and power samples taken during a measurement into a verdict. Pure host
// code, unit-tested on recorded masks and clock series.
//
// The policy (nvbench's, adapted):
// - only samples the driver does not mark idle count: the SM clock falls toward idle whenever the
//   SMs wait (copy-engine copies, host-timed copies, launch gaps), which says nothing about the
//   card under load;
// - "throttled" means a hardware slowdown, a thermal slowdown or the power brake was reported;
// - the software power cap is the normal state of A100/H100/H200 under GEMM: it is reported as the
//   fraction of busy samples that showed it (sw_power_cap_fraction), not as throttling;
// - the mean busy clock is compared with the rated boost clock (cudaDevAttrClockRate), flagged below
//   75 % of it (nvbench's threshold). NVML's "max" SM clock is the top of the V/F curve, above what
//   a card runs at stock, so it is not the yardstick.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace triaudit {

// NVML "clocks event reasons" bits (nvmlClocksEventReason*), as the driver reports them.
namespace clock_reason {
constexpr std::uint64_t kGpuIdle = 0x1;
constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
constexpr std::uint64_t kSwPowerCap = 0x4;
constexpr std::uint64_t kHwSlowdown = 0x8;
constexpr std::uint64_t kSyncBoost = 0x10;
constexpr std::uint64_t kSwThermalSlowdown = 0x20;
constexpr std::uint64_t kHwThermalSlowdown = 0x40;
constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
// The reasons that mean the card ran slower than its normal operating state.
constexpr std::uint64_t kThrottleMask = kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
}  // namespace clock_reason

struct ClockSample {
  unsigned sm_mhz = 0;
  std::uint64_t reasons = 0;
  unsigned power_mw = 0;  // 0: not read
};

struct ClockSummary {
  int samples = 0, busy_samples = 0, power_samples = 0;
  unsigned min_mhz = 0, max_mhz = 0;  // over busy samples
  double mean_mhz = 0.0;
  std::uint64_t reasons_seen = 0;  // OR of the busy samples' reasons
  double sw_power_cap_fraction = 0.0;
  double power_mean_w = 0.0, power_max_w = 0.0;
  bool throttled = false;  // hardware/thermal slowdown or power brake
  bool clock_low = false;  // mean busy clock below the threshold of the rated boost
  std::string note;        // for the label: what was seen; empty when nothing to say
};

ClockSummary summarize_clocks(const std::vector<ClockSample>& samples, unsigned rated_boost_mhz,
                              double low_fraction = 0.75);

// "sw_power_cap,hw_thermal_slowdown" for the bits set in `reasons`.
std::string clock_reason_names(std::uint64_t reasons);

}  // namespace triaudit
