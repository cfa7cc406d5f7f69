// Turning SM clock samples taken during a measurement into a verdict: did the clock sag, and
// did the driver report a slowdown (power cap, thermal, hardware brake)? Pure host code.
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
// The reasons that mean the card ran slower than it could have.
constexpr std::uint64_t kSlowdownMask =
    kSwPowerCap | kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
}  // namespace clock_reason

struct ClockSample {
  unsigned sm_mhz = 0;
  std::uint64_t reasons = 0;
};

struct ClockSummary {
  int samples = 0;
  unsigned min_mhz = 0, max_mhz = 0;
  double mean_mhz = 0.0;
  std::uint64_t reasons_seen = 0;  // OR of every sample's reasons
  bool throttled = false;
  std::string why;  // empty when not throttled
};

// A run counts as throttled when a slowdown reason was reported during it, or when its mean SM
// clock fell below `sag_fraction` of the card's maximum SM clock.
ClockSummary summarize_clocks(const std::vector<ClockSample>& samples, unsigned max_clock_mhz,
                              double sag_fraction = 0.9);

// "sw_power_cap,hw_thermal_slowdown" for the bits set in `reasons`.
std::string clock_reason_names(std::uint64_t reasons);

}  // namespace triaudit
