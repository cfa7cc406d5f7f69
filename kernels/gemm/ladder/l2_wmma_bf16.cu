// Level 2: Tensor Cores through WMMA. Each warp owns a 32x32 tile of D as 2x2 16x16 fragments
// and loads 16x16 operand fragments straight from global memory (BF16 in, FP32 accumulate).
// The idea: the matrix units, nothing else — no shared-memory staging, no pipelining.
// Needs M, N, K multiples of 16 (fragment loads are not predicated).
#include <cuda_bf16.h>
#include <mma.h>

#include "ladder.cuh"

namespace triaudit::kernels {
namespace {
using namespace nvcuda;

__global__ void __launch_bounds__(128)
    wmma_kernel(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ d,
                int m, int n, int k) {
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int row0 = static_cast<int>(blockIdx.x) * 64 + (warp / 2) * 32;  // block 64x64 = 2x2 warps of 32x32
  const int col0 = static_cast<int>(blockIdx.y) * 64 + (warp % 2) * 32;
  if (row0 >= m || col0 >= n) return;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
  for (auto& r : acc)
    for (auto& f : r) wmma::fill_fragment(f, 0.0f);
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[2];
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb[2];
  for (int k0 = 0; k0 < k; k0 += 16) {
    for (int x = 0; x < 2; ++x) {
      const int i = row0 + 16 * x, j = col0 + 16 * x;
      if (i < m) wmma::load_matrix_sync(fa[x], a + static_cast<std::size_t>(i) * k + k0, static_cast<unsigned>(k));
      if (j < n) wmma::load_matrix_sync(fb[x], b + static_cast<std::size_t>(j) * k + k0, static_cast<unsigned>(k));
    }
    for (int x = 0; x < 2; ++x)
      for (int y = 0; y < 2; ++y)
        if (row0 + 16 * x < m && col0 + 16 * y < n) wmma::mma_sync(acc[x][y], fa[x], fb[y], acc[x][y]);
  }
  // FP32 fragments -> BF16 D (column-major), element by element through shared memory.
  // store_matrix_sync needs a 256-bit (32-byte) aligned pointer; each warp's 1 KiB row keeps it.
  __shared__ __align__(32) float stage[4][16 * 16];
  static_assert(__alignof__(stage) >= 32, "wmma::store_matrix_sync needs 32-byte aligned shared memory");
  for (int x = 0; x < 2; ++x)
    for (int y = 0; y < 2; ++y) {
      const int i0 = row0 + 16 * x, j0 = col0 + 16 * y;
      if (i0 >= m || j0 >= n) continue;
      wmma::store_matrix_sync(stage[warp], acc[x][y], 16, wmma::mem_col_major);
      __syncwarp();
      for (int e = static_cast<int>(threadIdx.x % 32); e < 256; e += 32) {
        const int r = e % 16, c = e / 16;
        d[static_cast<std::size_t>(j0 + c) * m + (i0 + r)] = __float2bfloat16_rn(stage[warp][e]);
      }
      __syncwarp();
    }
}
}  // namespace

LadderLaunch gemm_l2_launch(int m, int n) {
  LadderLaunch l;
  l.grid_x = (static_cast<std::uint64_t>(m) + 64 - 1) / 64;
  l.grid_y = (static_cast<std::uint64_t>(n) + 64 - 1) / 64;
  l.threads = 128;
  l.tile_m = l.tile_n = 64;
  l.kernel = reinterpret_cast<const void*>(&wmma_kernel);
  return l;
}

void gemm_l2_wmma_bf16(const void* a, const void* b, void* d, int m, int n, int k, cudaStream_t s) {
  const LadderLaunch l = gemm_l2_launch(m, n);
  wmma_kernel<<<l.grid(), l.threads, 0, s>>>(static_cast<const __nv_bfloat16*>(a), static_cast<const __nv_bfloat16*>(b),
                                             static_cast<__nv_bfloat16*>(d), m, n, k);
}

}  // namespace triaudit::kernels
