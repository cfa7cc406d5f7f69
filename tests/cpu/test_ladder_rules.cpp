// Which ladder level may run which shape on which device: host logic, no GPU needed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm/ladder/ladder.cuh"
#include "gemm/ladder/raster.hpp"

using triaudit::kernels::ladder_levels;
using triaudit::kernels::ladder_unsupported;

TEST(LadderRules, LevelsAreNumberedInOrder) {
  int count = 0;
  const auto* levels = ladder_levels(&count);
  ASSERT_EQ(count, 6);
  for (int l = 0; l < count; ++l) EXPECT_EQ(levels[l].level, l);
  EXPECT_FALSE(levels[1].bf16);
  EXPECT_TRUE(levels[5].bf16);
  EXPECT_EQ(levels[5].min_cc, 90);
}

TEST(LadderRules, HopperLevelsRunOnComputeCapability90Only) {
  for (int level : {4, 5}) {
    EXPECT_EQ(ladder_unsupported(level, 8192, 8192, 8192, 90), "") << level;
    EXPECT_NE(ladder_unsupported(level, 8192, 8192, 8192, 80).find("sm_90a"), std::string::npos) << level;
    EXPECT_NE(ladder_unsupported(level, 8192, 8192, 8192, 100).find("sm_90a"), std::string::npos) << level;
    // TMA rows are strided in 16-byte units: K must be a multiple of 8 BF16 values; M, N are free.
    EXPECT_NE(ladder_unsupported(level, 8192, 8192, 8191, 90).find("multiple of 8"), std::string::npos) << level;
    EXPECT_EQ(ladder_unsupported(level, 8191, 8193, 8192, 90), "") << level;
  }
}

TEST(LadderRules, ShapeLimitsOfTheEarlierLevels) {
  EXPECT_EQ(ladder_unsupported(0, 1000, 1000, 1000, 80), "");
  EXPECT_NE(ladder_unsupported(2, 1000, 1024, 1024, 90), "");  // WMMA: multiples of 16
  EXPECT_EQ(ladder_unsupported(2, 1024, 1024, 1024, 120), "");
  EXPECT_NE(ladder_unsupported(3, 1024, 1024, 1020, 90), "");  // cp.async 16 B: K % 8
  EXPECT_EQ(ladder_unsupported(3, 1000, 1000, 1024, 86), "");
  EXPECT_NE(ladder_unsupported(1, 1024, 1024, 1024, 75), "");  // below the ladder's 8.0
  EXPECT_NE(ladder_unsupported(6, 1024, 1024, 1024, 90).find("no such level"), std::string::npos);
  EXPECT_NE(ladder_unsupported(-1, 1024, 1024, 1024, 90).find("no such level"), std::string::npos);
  EXPECT_NE(ladder_unsupported(3, 1ULL << 31, 1024, 1024, 90), "");
}

TEST(LadderRules, DimensionsWhoseTileCountsOverflowIntAreRefused) {
  // The kernels count tiles in int: (k + BK - 1) / BK with K = 2^31 - 8 (a multiple of 8, A only
  // 4 GiB) wrapped negative and D came out as zeros. Up to 255 below INT_MAX every ceil-division
  // by a tile of at most 256 stays in range.
  const std::uint64_t k = (1ULL << 31) - 8;
  for (int level : {3, 4, 5}) EXPECT_NE(ladder_unsupported(level, 1024, 1024, k, 90), "") << level;
  EXPECT_NE(ladder_unsupported(5, k, 256, 1024, 90), "");
  EXPECT_EQ(ladder_unsupported(5, (1ULL << 31) - 256, 256, 1024, 90), "");
}

TEST(LadderRules, GroupedOrderProducesEveryTileOnce) {
  for (int tiles_m : {1, 2, 15, 16, 17, 18, 33, 64})
    for (int tiles_n : {1, 3, 32}) {
      std::vector<int> seen(static_cast<std::size_t>(tiles_m * tiles_n), 0);
      for (int b = 0; b < tiles_m * tiles_n; ++b) {
        int tm = -1, tn = -1;
        triaudit::kernels::grouped_tile(b, tiles_m, tiles_n, 16, tm, tn);
        ASSERT_TRUE(tm >= 0 && tm < tiles_m && tn >= 0 && tn < tiles_n) << b;
        ++seen[static_cast<std::size_t>(tm * tiles_n + tn)];
      }
      for (int s : seen) ASSERT_EQ(s, 1) << tiles_m << "x" << tiles_n;
    }
  // Within a group the M index moves fastest: blocks 0..15 share N-tile 0.
  int tm = 0, tn = 0;
  triaudit::kernels::grouped_tile(15, 64, 32, 16, tm, tn);
  EXPECT_EQ(tm, 15);
  EXPECT_EQ(tn, 0);
  triaudit::kernels::grouped_tile(16, 64, 32, 16, tm, tn);
  EXPECT_EQ(tm, 0);
  EXPECT_EQ(tn, 1);
}

// Grid limits: a launch with gridDim.y > 65535 fails; such shapes are refused with the reason.
TEST(LadderRules, ShapesBeyondTheGridLimitAreRefused) {
  // Level 0 puts one column of D per block row: N > 65535 cannot launch.
  EXPECT_EQ(ladder_unsupported(0, 1024, 65535, 64, 90), "");
  EXPECT_NE(ladder_unsupported(0, 1024, 65536, 64, 90).find("grid"), std::string::npos);
  // Tiled levels: 64- or 128-wide N tiles along y.
  EXPECT_EQ(ladder_unsupported(1, 1024, 65535ULL * 64, 64, 90), "");
  EXPECT_NE(ladder_unsupported(1, 1024, 65535ULL * 64 + 1, 64, 90).find("grid"), std::string::npos);
  EXPECT_NE(ladder_unsupported(3, 1024, 65535ULL * 128 + 1, 64, 90).find("grid"), std::string::npos);
  EXPECT_NE(ladder_unsupported(4, 1024, 65535ULL * 128 + 1, 64, 90).find("grid"), std::string::npos);
  // Level 5 launches a 1-D grid of tiles: no y limit.
  EXPECT_EQ(ladder_unsupported(5, 1024, 65535ULL * 256 + 1, 64, 90), "");
}

// Each level's launch shape comes from one place, used both by its launcher and by these rules.
TEST(LadderRules, LaunchShapes) {
  const auto l0 = triaudit::kernels::ladder_launch(0, 1000, 7);
  EXPECT_EQ(l0.grid_x, 8u);  // ceil(1000 / 128)
  EXPECT_EQ(l0.grid_y, 7u);
  const auto l5 = triaudit::kernels::ladder_launch(5, 8192, 8192);
  EXPECT_EQ(l5.grid_x, 64u * 32u);  // 128x256 tiles, one dimension
  EXPECT_EQ(l5.grid_y, 1u);
  EXPECT_EQ(l5.threads, 384u);  // a producer and two consumer warpgroups
  for (int level = 0; level < 6; ++level) EXPECT_NE(triaudit::kernels::ladder_launch(level, 256, 256).kernel, nullptr);
}

// Level 4 keeps its simple one-thread-loads-all structure, but two blocks fit on an SM so one
// block's MMAs overlap the other's drain (H100/H200: 228 KiB of shared memory per SM, 1 KiB of it
// reserved per block).
TEST(LadderRules, Level4FitsTwoBlocksPerSm) {
  const auto l4 = triaudit::kernels::ladder_launch(4, 8192, 8192);
  EXPECT_LE(2 * (l4.smem_bytes + 1024), 228 * 1024);
  EXPECT_EQ(l4.min_blocks_per_sm, 2);
}
