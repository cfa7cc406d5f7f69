// Level 0: one thread per output element, every operand read straight from global memory.
// Shows the floor: no reuse at all, so it is bound by L1/L2 bandwidth, not arithmetic.
#include "ladder.cuh"

namespace triaudit::kernels {
namespace {
__global__ void naive_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ d, int m,
                             int n, int k) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);  // row of D: consecutive threads, coalesced D
  const int j = static_cast<int>(blockIdx.y);
  if (i >= m) return;
  float acc = 0.0f;
  for (int kk = 0; kk < k; ++kk)
    acc = fmaf(a[static_cast<std::size_t>(i) * k + kk], b[static_cast<std::size_t>(j) * k + kk], acc);
  d[static_cast<std::size_t>(j) * m + i] = acc;
}
}  // namespace

LadderLaunch gemm_l0_launch(int m, int n) {
  LadderLaunch l;
  l.grid_x = (static_cast<std::uint64_t>(m) + 127) / 128;
  l.grid_y = static_cast<std::uint64_t>(n);  // one column of D per block row: N <= 65535
  l.threads = 128;
  l.tile_m = 128;  // 128 rows of one column
  l.tile_n = 1;
  l.kernel = reinterpret_cast<const void*>(&naive_kernel);
  return l;
}

void gemm_l0_naive_fp32(const float* a, const float* b, float* d, int m, int n, int k, cudaStream_t s) {
  const LadderLaunch l = gemm_l0_launch(m, n);
  naive_kernel<<<l.grid(), l.threads, 0, s>>>(a, b, d, m, n, k);
}

}  // namespace triaudit::kernels
