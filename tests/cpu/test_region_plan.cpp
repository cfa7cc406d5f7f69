// Regions sized by time and by the write-back a cold region leaves behind (region_plan.hpp), and
// the STREAM layout built on them (stream_plan.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "latch_budget.hpp"
#include "region_plan.hpp"
#include "sizes.hpp"
#include "stream/stream_plan.hpp"

using namespace triaudit;

namespace {
constexpr std::uint64_t MiB = 1ULL << 20, GiB = 1ULL << 30;
constexpr std::uint64_t kL2s[] = {40 * 1000 * 1000ULL, 50 * 1000 * 1000ULL, 60 * MiB, 126 * 1000 * 1000ULL};
}  // namespace

// The arithmetic, reproduced: one operation per cold region (0.3.0) missed the last
// L2-full of write-back, 50 MB of L2 a third dirty for a triad, half for a copy.
TEST(RegionPlan, OneColdOperationMissedTheLastL2FullOfWriteBack) {
  const std::uint64_t l2 = 50 * 1000 * 1000ULL;
  EXPECT_NEAR(writeback_residual(l2, GiB, 3 * GiB, 1), 0.0052, 0.0002);
  EXPECT_NEAR(writeback_residual(l2, 256 * MiB, 768 * MiB, 1), 0.021, 0.001);
  EXPECT_NEAR(writeback_residual(l2, 64 * MiB, 192 * MiB, 1), 0.083, 0.003);
  EXPECT_NEAR(writeback_residual(l2, 256 * MiB, 512 * MiB, 1), 0.047, 0.002);  // a device copy
  EXPECT_EQ(writeback_residual(l2, 4 * MiB, 12 * MiB, 1), 0.0);                // in the L2: no DRAM figure to bias
  EXPECT_EQ(writeback_residual(l2, 0, 2 * GiB, 1), 0.0);                       // dot writes nothing
  // n operations share it.
  EXPECT_NEAR(writeback_residual(l2, 64 * MiB, 192 * MiB, 17), 0.083 / 17, 0.0003);
  EXPECT_EQ(ops_for_writeback_residual(l2, 64 * MiB, 192 * MiB), 17);
  EXPECT_EQ(ops_for_writeback_residual(l2, 4 * MiB, 12 * MiB), 1);
}

// Every cold STREAM case that is a DRAM figure misses at most 0.5 % of its time, at every size of
// the default sweep, on A100 (40 MB), H100/H200 (50 MB), 60 MiB and B200 (126 MB) L2s, within what
// one hold queues. 0.3.0's regions held one operation.
TEST(RegionPlan, EveryColdStreamFigureMissesAtMostHalfAPercent) {
  for (std::uint64_t l2 : kL2s)
    for (StreamOp op : kStreamOps)
      for (std::uint64_t bytes : power_of_two_sweep(512ULL << 10, 1ULL << 30)) {
        const StreamRegionPlan p = stream_region_plan(op, bytes, true, false, l2);
        const std::string what = std::string(stream_op_name(op)) + " " + format_bytes(bytes) + " L2 " +
                                 std::to_string(l2) + ": " + std::to_string(p.min_ops) + " ops";
        EXPECT_TRUE(p.flush) << what;
        EXPECT_LE(p.min_ops, p.max_ops) << what;
        EXPECT_LE(p.max_ops * (op == StreamOp::Dot ? 2 : 1), kLatchEntriesForOps) << what;
        const std::uint64_t written = op == StreamOp::Dot ? 0 : bytes;
        const std::uint64_t traffic = static_cast<std::uint64_t>(stream_arrays_touched(op)) * bytes;
        EXPECT_LE(writeback_residual(l2, written, traffic, p.min_ops), kMaxWritebackResidual) << what;
        EXPECT_EQ(p.residual, writeback_residual(l2, written, traffic, p.min_ops)) << what;
        // Each operation finds its set out of the L2: between two uses, three L2s of other sets.
        if (p.sets > 1) {
          EXPECT_GE(static_cast<std::uint64_t>(p.sets - 1) * traffic, 3 * l2) << what;
        } else {
          EXPECT_GE(traffic, 3 * l2) << what;
        }
      }
}

TEST(RegionPlan, HotAndSustainedLayouts) {
  const std::uint64_t l2 = 50 * 1000 * 1000ULL;
  const StreamRegionPlan hot = stream_region_plan(StreamOp::Triad, 4 * MiB, false, false, l2);
  EXPECT_EQ(hot.sets, 1);
  EXPECT_EQ(hot.min_ops, 1);
  EXPECT_FALSE(hot.flush);
  EXPECT_EQ(hot.max_ops, kLatchEntriesForOps);
  EXPECT_EQ(stream_region_plan(StreamOp::Dot, 4 * MiB, false, false, l2).max_ops, kLatchEntriesForOps / 2);
  // Sustained over arrays of three L2s and more: back to back, no flush, no rotation needed.
  const StreamRegionPlan big = stream_region_plan(StreamOp::Triad, GiB, true, true, l2);
  EXPECT_FALSE(big.flush);
  EXPECT_EQ(big.sets, 1);
  EXPECT_EQ(big.residual, 0.0);
  // Smaller than that, it is flushed and laid out as a cold case.
  const StreamRegionPlan small = stream_region_plan(StreamOp::Triad, 16 * MiB, true, true, l2);
  EXPECT_TRUE(small.flush);
  EXPECT_GT(small.sets, 1);
}

TEST(RegionPlan, RegionsHoldHalfAMillisecondWhereTheQueueAllows) {
  EXPECT_EQ(ops_for_region_time(1e-3, 1, 126), 1);      // one operation is enough
  EXPECT_EQ(ops_for_region_time(50e-6, 1, 126), 10);    // 10 x 50 us
  EXPECT_EQ(ops_for_region_time(3e-6, 1, 126), 126);    // a 3 us copy: the queue's most, 0.38 ms
  EXPECT_EQ(ops_for_region_time(50e-6, 17, 126), 17);   // never below the write-back rule's count
  EXPECT_EQ(ops_for_region_time(0.0, 4, 126), 4);       // no estimate: the fewest
  EXPECT_EQ(ops_for_region_time(1e-6, 200, 126), 200);  // the fewest wins over a smaller most
}

TEST(RegionPlan, RotationSets) {
  const std::uint64_t l2 = 50 * 1000 * 1000ULL;
  EXPECT_EQ(cold_rotation_sets(3 * GiB, l2), 1);
  EXPECT_EQ(cold_rotation_sets(150 * 1000 * 1000ULL, l2), 1);  // exactly three L2s
  EXPECT_EQ(cold_rotation_sets(96 * MiB, l2), 3);              // (3 - 1) x 96 MiB >= 150 MB
  EXPECT_EQ(cold_rotation_sets(12 * MiB, l2), 13);
}
