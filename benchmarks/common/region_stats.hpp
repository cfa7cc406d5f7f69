// Statistics of a case's timed regions (each region's time per operation): the mean, the
// median and nvbench's "noise", the relative standard deviation. Host code, unit-tested.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace triaudit {

struct RegionStats {
  double mean = 0.0, median = 0.0, noise = 0.0;
};

inline RegionStats region_stats(const std::vector<double>& v) {
  RegionStats s;
  if (v.empty()) return s;
  double sum = 0.0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  if (n > 1 && s.mean > 0.0) {
    double ss = 0.0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.noise = std::sqrt(ss / static_cast<double>(n - 1)) / s.mean;
  }
  return s;
}

}  // namespace triaudit
