// How a STREAM case's timed regions are laid out: the buffer sets its operations rotate through,
// the fewest operations per region, the most the hold's queue takes, whether the L2 is flushed
// before each region. Pure host code, unit-tested (tests/cpu/test_region_plan.cpp); the harness then
// sizes each region to >= 0.5 ms of device time between the fewest and the most (region_plan.hpp).
#pragma once
#include <algorithm>
#include <cstdint>

#include "latch_budget.hpp"
#include "region_plan.hpp"
#include "stream/stream_ops.hpp"

namespace triaudit {

struct StreamRegionPlan {
  int sets = 1;         // buffer sets (a, b, c) the operations rotate through
  int min_ops = 1;      // operations per region at least
  int max_ops = 1;      // at most: what one hold's queue takes
  bool flush = false;   // the L2 is flushed (a read of 3x L2) before each region
  bool hbm = false;     // the working set exceeds the L2: a DRAM figure (peak_fraction)
  double residual = 0;  // the write-back a region of min_ops misses, as a fraction of its time
};

// Hot: one set, the data left in the L2 by the previous operation. Cold: the L2 flushed before each
// region, then operations back to back over rotating sets, each finding its data out of the L2,
// enough of them that the last L2-full of write-back, left in the L2 at the stop event, is at most
// 0.5 % of a DRAM figure. Sustained: regions back to back (no flush when one operation is at least
// three L2s: nothing of one is left for the next, and the write-back each leaves is paid by the next).
inline StreamRegionPlan stream_region_plan(StreamOp op, std::uint64_t array_bytes, bool cold, bool sustained,
                                           std::uint64_t l2_bytes) {
  StreamRegionPlan p;
  const int entries = op == StreamOp::Dot ? 2 : 1;  // dot: its two launches
  p.max_ops = std::max(1, kLatchEntriesForOps / entries);
  const std::uint64_t traffic = static_cast<std::uint64_t>(stream_arrays_touched(op)) * array_bytes;
  const std::uint64_t written = op == StreamOp::Dot ? 0 : array_bytes;
  p.hbm = stream_peak_fraction_applies(traffic, l2_bytes);
  if (!cold) return p;
  p.flush = stream_flush_between_regions(cold, sustained, traffic, l2_bytes);
  p.sets = cold_rotation_sets(traffic, l2_bytes);
  if (p.flush) p.min_ops = std::min(p.max_ops, ops_for_writeback_residual(l2_bytes, written, traffic));
  p.residual = p.flush ? writeback_residual(l2_bytes, written, traffic, p.min_ops) : 0.0;
  return p;
}

}  // namespace triaudit
