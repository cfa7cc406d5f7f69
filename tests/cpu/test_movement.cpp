#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <set>
#include <string>

#include "host_info.hpp"
#include "latch_budget.hpp"
#include "linear_fit.hpp"
#include "movement_catalogue.hpp"
#include "region_plan.hpp"

using namespace triaudit;

TEST(MovementCatalogue, EveryKindTheIssueAsksFor) {
  std::set<std::string> names;
  for (const auto& k : copy_kinds()) names.insert(k.direction + "/" + k.memory);
  for (const char* want :
       {"h2d/pageable", "h2d/pinned", "h2d/registered", "h2d/write_combined", "h2d/zero_copy", "d2h/pageable",
        "d2h/pinned", "d2h/registered", "bidir/pinned", "d2d/copy_engine", "d2d/sm_kernel"})
    EXPECT_EQ(names.count(want), 1u) << want;
}

TEST(MovementCatalogue, BytesCountedOncePerDirection) {
  EXPECT_EQ(copy_bytes_counted({"h2d", "pinned"}, 1000), 1000u);
  EXPECT_EQ(copy_bytes_counted({"d2d", "copy_engine"}, 1000), 1000u);  // once, not read + write
  // Bidirectional as nvbandwidth reports it: the bandwidth of the measured direction while the
  // other direction is busy (bytes_per_second); both directions together are their own counter.
  EXPECT_EQ(copy_bytes_counted({"bidir", "pinned"}, 1000), 1000u);
  // The interfering copy is twice as large, so it covers the measured one from start to end.
  EXPECT_EQ(bidir_interfering_bytes(1000), 2000u);
}

TEST(MovementCatalogue, TimingMethodPerKind) {
  EXPECT_TRUE(copy_is_host_timed({"h2d", "pageable"}));
  EXPECT_TRUE(copy_is_host_timed({"d2h", "pageable"}));
  EXPECT_FALSE(copy_is_host_timed({"h2d", "pinned"}));
  EXPECT_FALSE(copy_is_host_timed({"d2d", "sm_kernel"}));
}

TEST(MovementCatalogue, SizesFrom4KiBTo1GiB) {
  const auto s = geometric_sizes(4096, 1ULL << 30, 4);
  ASSERT_EQ(s.size(), 10u);
  EXPECT_EQ(s.front(), 4096u);
  EXPECT_EQ(s.back(), 1ULL << 30);
  EXPECT_EQ(geometric_sizes(4096, 1ULL << 30, 2).size(), 19u);
  EXPECT_THROW(geometric_sizes(4096, 8192, 3), std::invalid_argument);
  EXPECT_TRUE(copy_applies_to_size({"h2d", "zero_copy"}, 64ULL << 20));
  EXPECT_FALSE(copy_applies_to_size({"h2d", "zero_copy"}, 256ULL << 20));
}

TEST(MovementCatalogue, SmallCopiesAreBatched) {
  const CopyKind pinned{"h2d", "pinned"};
  EXPECT_EQ(copies_per_region(pinned, 4096), 32);               // + 4 untimed copies, one entry each, behind one hold
  EXPECT_EQ(copies_per_region({"bidir", "pinned"}, 4096), 21);  // 5 entries a copy: (21 + 4) x 5 + 2 <= 128
  EXPECT_EQ(copies_per_region(pinned, 1ULL << 30), 1);
  EXPECT_EQ(copies_per_region(pinned, 16ULL << 20), 4);
  // Every region's queue fits behind one hold, warm-up copies included (entries, not copies).
  for (const CopyKind& k : copy_kinds())
    for (std::uint64_t size : geometric_sizes(4096, 1ULL << 30, 2)) {
      const int entries = (copies_per_region(k, size) + untimed_copies_in_region(k, size)) * copy_queue_entries(k) + 2;
      EXPECT_LE(entries, 128) << k.direction << "/" << k.memory << " " << size;
    }
}

// Pageable copies read their source from a warm CPU cache unless the caches are flushed: one copy
// per region, a 256 MiB host buffer written before each (bandwidthTest's method).
TEST(MovementCatalogue, PageableCopiesStartFromAFlushedHostCache) {
  EXPECT_EQ(copies_per_region({"h2d", "pageable"}, 4096), 1);
  EXPECT_EQ(copies_per_region({"d2h", "pageable"}, 4096), 1);
  EXPECT_GE(kHostFlushBytes, 256ULL << 20);
  EXPECT_EQ(untimed_copies_in_region({"h2d", "pageable"}, 4096), 0);  // host-timed: no hold
}

// Device-to-device copies up to about half the L2 would run from L2: the L2 is flushed before
// every copy, so d2d figures are HBM figures at every size.
TEST(MovementCatalogue, DeviceCopiesAreColdAtEverySize) {
  EXPECT_TRUE(copy_flushes_l2({"d2d", "copy_engine"}));
  EXPECT_TRUE(copy_flushes_l2({"d2d", "sm_kernel"}));
  EXPECT_FALSE(copy_flushes_l2({"h2d", "pinned"}));
  EXPECT_EQ(copies_per_region({"d2d", "copy_engine"}, 4096), 1);
  // No warm-up copy between the flush and the timed copy: it would fill the L2 again.
  EXPECT_EQ(untimed_copies_in_region({"d2d", "copy_engine"}, 4096), 0);
  EXPECT_EQ(untimed_copies_in_region({"d2d", "sm_kernel"}, 1ULL << 30), 0);
}

// nvbandwidth queues warm-up copies behind the spinning kernel, so the first timed copy does not
// pay the copy engine's start.
TEST(MovementCatalogue, WarmUpCopiesBehindTheHold) {
  EXPECT_EQ(untimed_copies_in_region({"h2d", "pinned"}, 4096), 4);
  EXPECT_EQ(untimed_copies_in_region({"h2d", "pinned"}, 1ULL << 30), 1);
  EXPECT_EQ(copy_queue_entries({"bidir", "pinned"}), 5);  // fork record, wait, two copies, done record
}

TEST(LineFit, RecoversFixedAndPerKernelCost) {
  // Constructed data: 4 us fixed + 1.5 us per kernel, with a little alternating noise.
  std::vector<double> x, y;
  for (int n : {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}) {
    x.push_back(n);
    y.push_back(4e-6 + 1.5e-6 * n + ((n % 2) ? 1e-8 : -1e-8));
  }
  const LineFit f = fit_line(x, y);
  EXPECT_NEAR(f.slope, 1.5e-6, 1e-9);
  EXPECT_NEAR(f.intercept, 4e-6, 2e-8);
  EXPECT_GT(f.r2, 0.9999);
  EXPECT_THROW(fit_line({1}, {2}), std::invalid_argument);
  EXPECT_THROW(fit_line({3, 3}, {1, 2}), std::invalid_argument);
}

TEST(HostInfo, CpuListsAndPciNames) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5\n"), (std::vector<int>{5}));
  EXPECT_THROW(parse_cpu_list("3-1"), std::invalid_argument);
  EXPECT_THROW(parse_cpu_list("a-b"), std::invalid_argument);
  EXPECT_EQ(sysfs_pci_name("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(sysfs_pci_name("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(gpu_numa_node("0000:ff:1f.7"), -1);  // no such device: unknown, not a crash
}

// Binding to a NUMA node binds the memory policy too (in a child process: the binding is the
// process's own). Needs node 0, which every Linux machine has.
TEST(HostInfo, BindingSetsCpusAndMemoryPolicy) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string what = bind_to_numa_node(0);
    int mode = -1;
    unsigned long mask[16] = {};
    const long r = syscall(SYS_get_mempolicy, &mode, mask, sizeof mask * 8 + 1, nullptr, 0);
    _exit(what.rfind("bound to the CPUs and memory of NUMA node 0", 0) == 0 && r == 0 && mode == 2 && (mask[0] & 1)
              ? 0
              : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// chain_fit: an ordinary least-squares fit over 1..1000 is ruled by the longest chains, and
// the fixed cost comes out poorly determined. Log-spaced lengths weighted by 1/y^2 (errors
// proportional to the time, as timing noise is) recover both, with standard errors that cover
// the truth.
TEST(LineFit, WeightedFitOnLogSpacedChainsRecoversTheFixedCost) {
  const std::vector<double> counts = chain_fit_lengths();
  ASSERT_GE(counts.size(), 8u);
  EXPECT_EQ(counts.front(), 1.0);
  EXPECT_EQ(counts.back(), 1024.0);
  for (std::size_t i = 1; i < counts.size(); ++i) EXPECT_NEAR(counts[i] / counts[i - 1], 2.0, 1e-12);
  // 20 us fixed + 2 us per kernel, +-3 % relative noise (a fixed pattern, so the test is exact).
  const double noise[] = {0.03, -0.025, 0.02, -0.03, 0.015, -0.02, 0.03, -0.015, 0.025, -0.03, 0.02};
  std::vector<double> x, y;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    x.push_back(counts[i]);
    y.push_back((20e-6 + 2e-6 * counts[i]) * (1.0 + noise[i % 11]));
  }
  const LineFit w = fit_line_relative(x, y);
  EXPECT_NEAR(w.slope, 2e-6, 0.05e-6);
  EXPECT_NEAR(w.intercept, 20e-6, 2e-6);
  EXPECT_GT(w.slope_se, 0.0);
  EXPECT_GT(w.intercept_se, 0.0);
  EXPECT_LT(std::fabs(w.intercept - 20e-6), 3 * w.intercept_se);
  // The ordinary fit of the same data misses the fixed cost by more than the weighted one does.
  const LineFit o = fit_line(x, y);
  EXPECT_GT(std::fabs(o.intercept - 20e-6), std::fabs(w.intercept - 20e-6));
}

// A device copy after an L2 flush leaves its last L2-full of write-back (half the L2 dirty: a copy
// writes half its traffic) in the L2 at the region's stop event. One copy per region (0.3.0) missed
// ~5 % of a 256 MiB copy's time; the region now holds enough copies, over rotating (source,
// destination) sets each out of the L2, that at most 0.5 % is missed wherever the copy's traffic
// exceeds the L2, within one hold's queue, on 40 MB to 126 MB L2s.
TEST(MovementCatalogue, DeviceCopiesMissAtMostHalfAPercentOfWriteBack) {
  const CopyKind kinds[] = {{"d2d", "copy_engine"}, {"d2d", "sm_kernel"}};
  for (std::uint64_t l2 : {40000000ULL, 50000000ULL, 60ULL << 20, 126000000ULL})
    for (const CopyKind& k : kinds)
      for (std::uint64_t size : geometric_sizes(4096, 1ULL << 30, 2)) {
        const CopyRegionPlan p = copy_region_plan(k, size, l2);
        const std::string what = k.memory + " " + std::to_string(size) + " L2 " + std::to_string(l2);
        EXPECT_LE(writeback_residual(l2, size, 2 * size, p.min_ops), kMaxWritebackResidual) << what;
        EXPECT_LE((p.min_ops + untimed_copies_in_region(k, size)) * copy_queue_entries(k) + 2, kLatchMaxQueuedEntries)
            << what;
        if (p.sets > 1) {
          EXPECT_GE(static_cast<std::uint64_t>(p.sets - 1) * 2 * size, 3 * l2) << what;
        } else {
          EXPECT_GE(2 * size, 3 * l2) << what;
        }
      }
  // Host copies are not flushed nor rotated: the plan is the by-size rule's.
  const CopyRegionPlan pinned = copy_region_plan({"h2d", "pinned"}, 4096, 50000000ULL);
  EXPECT_EQ(pinned.sets, 1);
  EXPECT_EQ(pinned.min_ops, copies_per_region({"h2d", "pinned"}, 4096));
}
