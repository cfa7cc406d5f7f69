#include "energy.hpp"

#include <cmath>
#include <cstdio>

namespace triaudit {

namespace {
// A delta above this mean power per GPU is not energy but a counter reset (driver reload): 20 kW
// is far beyond any single GPU board.
constexpr double kImplausibleWattsPerGpu = 20000.0;
}  // namespace

void EnergyAccount::add(double seconds, const EnergyReading& start, const EnergyReading& end, long long ops,
                        int devices) {
  if (!void_reason_.empty()) return;
  if (!start.millijoules || !end.millijoules) {
    void_reason_ = "unknown (NVML: " + (start.millijoules ? end.error : start.error) + ")";
    return;
  }
  // Unsigned subtraction: a wrap of the 64-bit counter is an ordinary delta.
  const std::uint64_t delta_mj = *end.millijoules - *start.millijoules;
  const double joules = static_cast<double>(delta_mj) / 1000.0;
  if (seconds <= 0.0 || joules / seconds > kImplausibleWattsPerGpu * (devices > 0 ? devices : 1)) {
    void_reason_ = "energy counter reset during the measurement (driver reload?): no energy figure";
    return;
  }
  ++windows_;
  devices_ = devices > devices_ ? devices : devices_;
  ops_ += ops;
  seconds_ += seconds;
  joules_ += joules;
}

EnergyFigures EnergyAccount::figures(double min_window_s) const {
  EnergyFigures f;
  f.windows = windows_;
  f.devices = devices_;
  f.ops = ops_;
  f.window_s = seconds_;
  if (!void_reason_.empty()) {
    f.why = void_reason_;
    return f;
  }
  if (windows_ == 0 || seconds_ < min_window_s) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "energy_window_too_short (%.2f s measured, %.1f s needed)", seconds_, min_window_s);
    f.why = buf;
    return f;
  }
  f.valid = true;
  f.joules = joules_;
  f.watts_mean = joules_ / seconds_;
  f.joules_per_op = ops_ > 0 ? joules_ / static_cast<double>(ops_) : 0.0;
  return f;
}

std::string power_disagreement(double counter_watts, double samples_watts, double tolerance) {
  if (samples_watts <= 0.0 || counter_watts <= 0.0) return "";
  const double rel = (samples_watts - counter_watts) / counter_watts;
  if (std::fabs(rel) <= tolerance) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "energy counter (%.0f W mean) and power samples (%.0f W mean) disagree by %.0f%%",
                counter_watts, samples_watts, std::fabs(rel) * 100.0);
  return buf;
}

std::string power_disagreement(const EnergyFigures& e, double samples_watts_one_gpu) {
  if (e.devices <= 1) return power_disagreement(e.watts_mean, samples_watts_one_gpu);
  const std::string d = power_disagreement(e.watts_mean / e.devices, samples_watts_one_gpu);
  return d.empty() ? d : d + " (counter: the mean over " + std::to_string(e.devices) + " GPUs; samples: one of them)";
}

}  // namespace triaudit
