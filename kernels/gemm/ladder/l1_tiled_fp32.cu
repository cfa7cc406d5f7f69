// Level 1: shared-memory tiling. A block stages a 64x16 tile of A and a 64x16 tile of B in
// shared memory and every thread computes a 4x4 block of D from it: each operand loaded from
// global memory is reused 64 times. Still CUDA cores, FP32.
#include "ladder.cuh"

namespace triaudit::kernels {
namespace {
constexpr int TM = 64, TN = 64, TK = 16;

__global__ void __launch_bounds__(256)
    tiled_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ d, int m, int n, int k) {
  __shared__ float as[TK][TM + 1];  // [k][m]: +1 keeps the transposed stores free of bank conflicts
  __shared__ float bs[TK][TN + 1];
  const int tid = static_cast<int>(threadIdx.x);
  const int row0 = static_cast<int>(blockIdx.x) * TM, col0 = static_cast<int>(blockIdx.y) * TN;
  const int ty = tid / 16, tx = tid % 16;  // thread computes rows ty*4.., cols tx*4..
  float acc[4][4] = {};
  for (int k0 = 0; k0 < k; k0 += TK) {
    for (int e = tid; e < TM * TK; e += 256) {  // coalesced along k
      const int r = e / TK, c = e % TK;
      const int gi = row0 + r, gk = k0 + c;
      as[c][r] = (gi < m && gk < k) ? a[static_cast<std::size_t>(gi) * k + gk] : 0.0f;
      const int gj = col0 + r;
      bs[c][r] = (gj < n && gk < k) ? b[static_cast<std::size_t>(gj) * k + gk] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TK; ++kk) {
      float av[4], bv[4];
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        av[x] = as[kk][ty * 4 + x];
        bv[x] = bs[kk][tx * 4 + x];
      }
#pragma unroll
      for (int x = 0; x < 4; ++x)
#pragma unroll
        for (int y = 0; y < 4; ++y) acc[x][y] = fmaf(av[x], bv[y], acc[x][y]);
    }
    __syncthreads();
  }
  for (int x = 0; x < 4; ++x)
    for (int y = 0; y < 4; ++y) {
      const int i = row0 + ty * 4 + x, j = col0 + tx * 4 + y;
      if (i < m && j < n) d[static_cast<std::size_t>(j) * m + i] = acc[x][y];
    }
}
}  // namespace

LadderLaunch gemm_l1_launch(int m, int n) {
  LadderLaunch l;
  l.grid_x = (static_cast<std::uint64_t>(m) + TM - 1) / TM;
  l.grid_y = (static_cast<std::uint64_t>(n) + TN - 1) / TN;
  l.threads = 256;
  l.tile_m = TM;
  l.tile_n = TN;
  l.kernel = reinterpret_cast<const void*>(&tiled_kernel);
  return l;
}

void gemm_l1_tiled_fp32(const float* a, const float* b, float* d, int m, int n, int k, cudaStream_t s) {
  const LadderLaunch l = gemm_l1_launch(m, n);
  tiled_kernel<<<l.grid(), l.threads, 0, s>>>(a, b, d, m, n, k);
}

}  // namespace triaudit::kernels
