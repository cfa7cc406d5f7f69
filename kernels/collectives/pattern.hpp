// Allreduce inputs whose sum is exact in FP16, BF16 and FP32 whatever the reduction order:
// small integers. Shared by the device fill/check kernels and the host (tests, bootstrap).
#pragma once
#include <cstdint>

#include "common/host_device.hpp"

namespace triaudit {

// |value| <= amplitude and ranks x amplitude <= 256: every partial sum is an integer BF16 holds.
TRIAUDIT_HD inline int allreduce_amplitude_for(int ranks) {
  const int a = 256 / (ranks > 0 ? ranks : 1);
  return a < 1 ? 1 : (a > 8 ? 8 : a);
}

TRIAUDIT_HD inline int allreduce_value(int rank, std::uint64_t i, int ranks) {
  const int amp = allreduce_amplitude_for(ranks);
  const std::uint64_t h =
      (i * 2654435761ULL + static_cast<std::uint64_t>(rank) * 40503ULL) % static_cast<std::uint64_t>(2 * amp + 1);
  return static_cast<int>(h) - amp;
}

TRIAUDIT_HD inline int allreduce_sum(std::uint64_t i, int ranks) {
  int s = 0;
  for (int r = 0; r < ranks; ++r) s += allreduce_value(r, i, ranks);
  return s;
}

}  // namespace triaudit
