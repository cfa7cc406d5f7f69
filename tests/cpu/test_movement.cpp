#include <gtest/gtest.h>

#include <set>

#include "host_info.hpp"
#include "linear_fit.hpp"
#include "movement_catalogue.hpp"

using namespace triaudit;

TEST(MovementCatalogue, EveryKindTheIssueAsksFor) {
  std::set<std::string> names;
  for (const auto& k : copy_kinds()) names.insert(k.direction + "/" + k.memory);
  for (const char* want : {"h2d/pageable", "h2d/pinned", "h2d/registered", "h2d/write_combined", "h2d/zero_copy",
                           "d2h/pageable", "d2h/pinned", "d2h/registered", "bidir/pinned", "d2d/copy_engine",
                           "d2d/sm_kernel"})
    EXPECT_EQ(names.count(want), 1u) << want;
}

TEST(MovementCatalogue, BytesCountedOncePerDirection) {
  EXPECT_EQ(copy_bytes_counted({"h2d", "pinned"}, 1000), 1000u);
  EXPECT_EQ(copy_bytes_counted({"d2d", "copy_engine"}, 1000), 1000u);  // once, not read + write
  EXPECT_EQ(copy_bytes_counted({"bidir", "pinned"}, 1000), 2000u);     // one copy each way
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
  EXPECT_EQ(copies_per_region(4096), 32);
  EXPECT_EQ(copies_per_region(1ULL << 30), 1);
  EXPECT_EQ(copies_per_region(16ULL << 20), 4);
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
