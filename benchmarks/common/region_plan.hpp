// How many operations a timed region holds, sized by time and, for cold regions, by the write-back
// the region leaves in the L2 at its stop event. Pure host code, unit-tested (tests/cpu/test_region_plan.cpp).
//
// Time: a region pays a fixed cost (its two events, the hold's release: 1-3 us) that its
// operations share. Sized by bytes, the smallest cold regions (one 4 MiB triad, one 4 KiB device
// copy) were a few microseconds long and the fixed cost 30-60 % of their figure. A region holds at
// least kRegionMinSeconds of device time (GEMM's rule) where the hold's queue allows; where it
// cannot, the case says it is latency-bound.
//
// Write-back: a cold region starts from a flushed L2 (the flush, a read, leaves no dirty line) and
// its operations' writes are written back to DRAM while later operations run, except the last
// L2-full, still dirty in the L2 at the stop event and written back after it, untimed. That share of
// the L2 is the share of the traffic that is written; the time it would take is missing from the
// region. One triad per region missed ~0.5 % at 1 GiB arrays, 2 % at 256 MiB, 9 % at 64 MiB; a
// 256 MiB device copy ~5 %. A region of enough operations (back to back over rotating buffers, so
// each still finds its data out of the L2, as BabelStream pays the write-back inside the next
// kernel) brings the missing share under kMaxWritebackResidual.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace triaudit {

constexpr double kRegionMinSeconds = 5e-4;
constexpr double kMaxWritebackResidual = 0.005;

// Operations per region for >= min_seconds of device time, from one operation's time, within
// [min_ops, max_ops] (max_ops: the hold's queue). seconds_per_op <= 0: min_ops.
inline int ops_for_region_time(double seconds_per_op, int min_ops, int max_ops,
                               double min_seconds = kRegionMinSeconds) {
  min_ops = std::max(1, min_ops);
  max_ops = std::max(min_ops, max_ops);
  if (!(seconds_per_op > 0)) return min_ops;
  const double want = std::ceil(min_seconds / seconds_per_op);
  return static_cast<int>(std::clamp(want, static_cast<double>(min_ops), static_cast<double>(max_ops)));
}

// The time a cold region of `ops` operations misses, as a fraction of its time: the L2's dirty
// share at the stop event (l2 x written / traffic of one operation) over the region's DRAM traffic.
// Operations whose traffic fits in the L2 are not DRAM figures: 0 (nothing to compare with).
inline double writeback_residual(std::uint64_t l2_bytes, std::uint64_t written_per_op, std::uint64_t traffic_per_op,
                                 int ops) {
  if (traffic_per_op == 0 || ops < 1 || traffic_per_op <= l2_bytes) return 0.0;
  const double dirty =
      static_cast<double>(l2_bytes) * static_cast<double>(written_per_op) / static_cast<double>(traffic_per_op);
  return dirty / (static_cast<double>(traffic_per_op) * ops);
}

// The fewest operations per cold region whose missing write-back is at most `max_residual`.
inline int ops_for_writeback_residual(std::uint64_t l2_bytes, std::uint64_t written_per_op,
                                      std::uint64_t traffic_per_op, double max_residual = kMaxWritebackResidual) {
  const double one = writeback_residual(l2_bytes, written_per_op, traffic_per_op, 1);
  return std::max(1, static_cast<int>(std::ceil(one / max_residual)));
}

// Buffer sets a cold region's operations rotate through so that each finds its data out of the L2:
// between two uses of a set, the other sets' traffic is at least three L2s (L2 replacement is not
// strict LRU). One set when an operation alone is three L2s: it has left nothing of its start
// behind when it comes round again.
inline int cold_rotation_sets(std::uint64_t traffic_per_set, std::uint64_t l2_bytes) {
  if (traffic_per_set == 0) return 1;
  if (traffic_per_set >= 3 * l2_bytes) return 1;
  return static_cast<int>((3 * l2_bytes + traffic_per_set - 1) / traffic_per_set) + 1;
}

}  // namespace triaudit
