#include <limits>

#include "ladder.cuh"

namespace triaudit::kernels {

const LadderLevel* ladder_levels(int* count) {
  static const LadderLevel levels[] = {
      {0, "naive_fp32", "one thread per output, no reuse (CUDA cores)", false, 80},
      {1, "tiled_fp32", "shared-memory tiles, 4x4 outputs per thread (CUDA cores)", false, 80},
      {2, "wmma_bf16", "Tensor Cores through WMMA fragments from global memory", true, 80},
      {3, "mma_cp_async_bf16", "mma.sync + ldmatrix, 3-stage cp.async pipeline, padded shared memory", true, 80},
      {4, "wgmma_tma_bf16", "Hopper: TMA tiles into swizzled shared memory, mbarriers, warpgroup MMA (sm_90a)", true,
       90},
      {5, "wgmma_warp_specialized_bf16",
       "Hopper: producer/consumer warpgroups, MMAs kept in flight, 128x256 tiles, grouped order, staged epilogue "
       "(sm_90a)",
       true, 90},
  };
  *count = 6;
  return levels;
}

std::string ladder_unsupported(int level, std::uint64_t m, std::uint64_t n, std::uint64_t k, int cc) {
  if (level < 0 || level > 5) return "no such level: the ladder has levels 0-5";
  // The kernels count tiles in int ((k + BK - 1) / BK, tiles of at most 256): 255 below INT_MAX
  // keeps every such ceil-division in range.
  const std::uint64_t big = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  if (m > big - 255 || n > big - 255 || k > big - 255) return "dimensions above 2^31 - 256";
  if (cc < 80) return "the ladder targets compute capability 8.0 and newer";
  if (level == 2 && (m % 16 || n % 16 || k % 16)) return "level 2 (WMMA) needs M, N, K multiples of 16";
  if (level == 3 && k % 8) return "level 3 (16-byte cp.async) needs K a multiple of 8";
  if (level >= 4 && cc != 90)
    return "level " + std::to_string(level) + " (wgmma, TMA) is built for sm_90a: H100/H200 only";
  if (level >= 4 && k % 8) return "level " + std::to_string(level) + " (TMA) needs K a multiple of 8";
  // Launch limits: gridDim.y at most 65535, .x at most 2^31 - 1.
  const LadderLaunch l = ladder_launch(level, static_cast<int>(m), static_cast<int>(n));
  if (l.grid_y > 65535)
    return "the grid would need " + std::to_string(l.grid_y) + " blocks along y (the limit is 65535)";
  if (l.grid_x > big)
    return "the grid would need " + std::to_string(l.grid_x) + " blocks along x (the limit is 2^31 - 1)";
  return "";
}

std::string ladder_launch_check(int level) { return level == 5 ? gemm_l5_launch_check() : std::string(); }

LadderLaunch ladder_launch(int level, int m, int n) {
  switch (level) {
    case 0:
      return gemm_l0_launch(m, n);
    case 1:
      return gemm_l1_launch(m, n);
    case 2:
      return gemm_l2_launch(m, n);
    case 3:
      return gemm_l3_launch(m, n);
    case 4:
      return gemm_l4_launch(m, n);
    case 5:
      return gemm_l5_launch(m, n);
    default:
      return {};
  }
}

void ladder_gemm(int level, const void* a, const void* b, void* d, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                 cudaStream_t s) {
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  switch (level) {
    case 0:
      gemm_l0_naive_fp32(static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(d), M, N, K,
                         s);
      break;
    case 1:
      gemm_l1_tiled_fp32(static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(d), M, N, K,
                         s);
      break;
    case 2:
      gemm_l2_wmma_bf16(a, b, d, M, N, K, s);
      break;
    case 3:
      gemm_l3_mma_bf16(a, b, d, M, N, K, s);
      break;
    case 4:
      gemm_l4_wgmma_bf16(a, b, d, M, N, K, s);
      break;
    case 5:
      gemm_l5_wgmma_ws_bf16(a, b, d, M, N, K, s);
      break;
    default:
      break;
  }
}

}  // namespace triaudit::kernels
