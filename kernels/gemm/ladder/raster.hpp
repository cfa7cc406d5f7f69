// Level 5's block order: block b -> (M-tile, N-tile) in groups of `group_m` M-tiles, walked
// M-fastest inside a group, so the blocks of one wave share a band of A rows and of B columns
// and more of their operand bytes come from L2. Host-compilable: the CPU tests check that every
// tile is produced exactly once for any grid (tests/cpu/test_ladder_rules.cpp).
#pragma once
#include "common/host_device.hpp"

namespace triaudit::kernels {

TRIAUDIT_HD inline void grouped_tile(int b, int tiles_m, int tiles_n, int group_m, int& tm, int& tn) {
  const int per_group = group_m * tiles_n;
  const int first_m = (b / per_group) * group_m;
  const int rows = tiles_m - first_m < group_m ? tiles_m - first_m : group_m;
  const int in_group = b % per_group;
  tm = first_m + in_group % rows;
  tn = in_group / rows;
}

}  // namespace triaudit::kernels
