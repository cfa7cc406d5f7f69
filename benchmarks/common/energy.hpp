// Energy per case from NVML's total energy counter (mJ since the driver loaded), read at the start
// and end of every measured window (warm-up + timed regions of one call: the same work). The
// counter updates every 10-100 ms and NVML's power readings average over about a second, so a
// figure needs windows adding up to >= 1 s: a case's windows accumulate over Google Benchmark's
// calls (repetitions); until they reach the minimum the case says energy_window_too_short
// instead of printing noise. Pure host logic, unit-tested on recorded readings.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace triaudit {

struct EnergyReading {
  std::optional<std::uint64_t> millijoules;  // nullopt: not readable
  std::string error;                         // NVML's reason when not readable
};

struct EnergyFigures {
  bool valid = false;
  std::string why;  // when !valid: "energy_window_too_short (...)", "unknown (NVML: ...)", "... reset ..."
  int windows = 0;
  int devices = 1;  // the GPUs whose counters were summed (an allreduce: every rank's)
  long long ops = 0;
  double window_s = 0.0, joules = 0.0, joules_per_op = 0.0, watts_mean = 0.0;
};

class EnergyAccount {
 public:
  // One window: counter readings at its start and end, its length and the operations it held.
  // `devices`: the GPUs whose counters the readings sum (the plausibility limit scales with them).
  void add(double seconds, const EnergyReading& start, const EnergyReading& end, long long ops, int devices = 1);
  EnergyFigures figures(double min_window_s = 1.0) const;

 private:
  int windows_ = 0, devices_ = 1;
  long long ops_ = 0;
  double seconds_ = 0.0, joules_ = 0.0;
  std::string void_reason_;  // set once a window could not be used: the whole account is void
};

// "" when the counter's mean power and the power samples' mean agree within `tolerance`, else a
// sentence for the label. No samples (0): nothing to compare.
std::string power_disagreement(double counter_watts, double samples_watts, double tolerance = 0.10);

// The same check for a case's figures against the power samples of one of its GPUs: a counter
// summed over several GPUs is compared per GPU (their mean).
std::string power_disagreement(const EnergyFigures& e, double samples_watts_one_gpu);

}  // namespace triaudit
