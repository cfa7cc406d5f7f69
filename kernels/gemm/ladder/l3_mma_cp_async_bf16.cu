// Level 3: what a real Ampere/Hopper-era GEMM does without Hopper-only hardware.
//  - mma.sync m16n8k16 (BF16 in, FP32 accumulate) issued directly, fragments loaded with ldmatrix;
//  - a 128x128x64 block tile, 8 warps of 64x32, so each operand byte in shared memory feeds 4-8 MMAs;
//    BK = 64 means one block-wide barrier per 4 k16 steps (BK = 32 would need twice as many);
//  - cp.async with a 3-stage pipeline: the tiles for step k+2 stream in while step k computes;
//    3 x 36 KiB of shared memory and <= 128 registers per thread leave room for 2 blocks per SM
//    on H100/H200 (228 KiB per SM; A100's 164 KiB holds one); devices with under 108 KiB per
//    block (RTX 30/40/50) get 2 stages;
//  - rows padded by 16 bytes (144-byte stride), so the 8 row addresses of every ldmatrix land in
//    distinct banks.
// Needs K % 8 == 0 (16-byte copies); M and N are free (out-of-range rows are zero-filled).
#include <cuda_bf16.h>

#include "ladder.cuh"
#include "launch_once.hpp"

namespace triaudit::kernels {
namespace {

constexpr int BM = 128, BN = 128, BK = 64, LDS = BK + 8;  // LDS: padded row, in elements
template <int STAGES>
constexpr int smem_bytes() {
  return STAGES * (BM + BN) * LDS * 2;
}

__device__ inline unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ inline void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(valid ? 16 : 0));
}

__device__ inline void ldmatrix_x4(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

__device__ inline void mma_bf16(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int STAGES>
__global__ void __launch_bounds__(256, 2)
    mma_kernel(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ d,
               int m, int n, int k) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto* as = reinterpret_cast<__nv_bfloat16*>(smem);  // [STAGES][BM][LDS]
  auto* bs = as + STAGES * BM * LDS;                  // [STAGES][BN][LDS]
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / 4, warp_n = warp % 4;
  const int row0 = static_cast<int>(blockIdx.x) * BM, col0 = static_cast<int>(blockIdx.y) * BN;

  auto load_stage = [&](int stage, int k0) {
    for (int c = tid; c < BM * (BK / 8); c += 256) {  // 1024 16-byte chunks per operand
      const int r = c / (BK / 8), chunk = c % (BK / 8), gk = k0 + chunk * 8;
      const int gi = row0 + r, gj = col0 + r;
      const bool va = gi < m && gk < k, vb = gj < n && gk < k;
      cp_async16(as + (stage * BM + r) * LDS + chunk * 8, va ? a + static_cast<std::size_t>(gi) * k + gk : a, va);
      cp_async16(bs + (stage * BN + r) * LDS + chunk * 8, vb ? b + static_cast<std::size_t>(gj) * k + gk : b, vb);
    }
  };

  float acc[4][4][4] = {};
  const int kt_count = (k + BK - 1) / BK;
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < kt_count) load_stage(s, s * BK);
    asm volatile("cp.async.commit_group;\n" ::);
  }
  for (int kt = 0; kt < kt_count; ++kt) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
    __syncthreads();  // stage kt landed for everyone; everyone is done with stage kt-1
    const int next = kt + STAGES - 1;
    if (next < kt_count) load_stage(next % STAGES, next * BK);
    asm volatile("cp.async.commit_group;\n" ::);

    const __nv_bfloat16* at = as + (kt % STAGES) * BM * LDS;
    const __nv_bfloat16* bt = bs + (kt % STAGES) * BN * LDS;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned af[4][4], bf[2][4];
#pragma unroll
      for (int mt = 0; mt < 4; ++mt)
        ldmatrix_x4(af[mt], at + (warp_m * 64 + mt * 16 + lane % 16) * LDS + kk + (lane / 16) * 8);
#pragma unroll
      for (int p = 0; p < 2; ++p)
        ldmatrix_x4(bf[p], bt + (warp_n * 32 + p * 16 + lane % 8 + (lane / 16) * 8) * LDS + kk + ((lane / 8) % 2) * 8);
#pragma unroll
      for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
          mma_bf16(acc[mt][nt], af[mt], bf[nt / 2][(nt % 2) * 2], bf[nt / 2][(nt % 2) * 2 + 1]);
    }
  }
  asm volatile("cp.async.wait_all;\n" ::);

#pragma unroll
  for (int mt = 0; mt < 4; ++mt)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = row0 + warp_m * 64 + mt * 16 + lane / 4 + (e / 2) * 8;
        const int j = col0 + warp_n * 32 + nt * 8 + (lane % 4) * 2 + e % 2;
        if (i < m && j < n) d[static_cast<std::size_t>(j) * m + i] = __float2bfloat16_rn(acc[mt][nt][e]);
      }
}

template <int STAGES>
LadderLaunch shape(int m, int n) {
  LadderLaunch l;
  l.grid_x = (static_cast<std::uint64_t>(m) + BM - 1) / BM;
  l.grid_y = (static_cast<std::uint64_t>(n) + BN - 1) / BN;
  l.threads = 256;
  l.smem_bytes = smem_bytes<STAGES>();
  l.min_blocks_per_sm = 2;
  l.tile_m = BM;
  l.tile_n = BN;
  l.kernel = reinterpret_cast<const void*>(&mma_kernel<STAGES>);
  return l;
}

template <int STAGES>
void launch(const void* a, const void* b, void* d, int m, int n, int k, cudaStream_t s) {
  // Once per device (a process may use several). A failure surfaces as the launch error, which
  // the caller checks. The carveout asks for the most shared memory the SM can give, so two
  // 108 KiB blocks are resident at once (the default split may leave room for one).
  if (first_launch_on_this_device(reinterpret_cast<const void*>(&mma_kernel<STAGES>))) {
    (void)cudaFuncSetAttribute(mma_kernel<STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes<STAGES>());
    (void)cudaFuncSetAttribute(mma_kernel<STAGES>, cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxShared);
  }
  const LadderLaunch l = shape<STAGES>(m, n);
  mma_kernel<STAGES><<<l.grid(), l.threads, l.smem_bytes, s>>>(static_cast<const __nv_bfloat16*>(a),
                                                               static_cast<const __nv_bfloat16*>(b),
                                                               static_cast<__nv_bfloat16*>(d), m, n, k);
}

// 3 stages where a block may have that much shared memory, else 2 (RTX 30/40/50).
bool three_stages() {
  int dev = 0, optin = 0;
  (void)cudaGetDevice(&dev);
  (void)cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  return optin >= smem_bytes<3>();
}

}  // namespace

LadderLaunch gemm_l3_launch(int m, int n) { return three_stages() ? shape<3>(m, n) : shape<2>(m, n); }

void gemm_l3_mma_bf16(const void* a, const void* b, void* d, int m, int n, int k, cudaStream_t s) {
  if (three_stages())
    launch<3>(a, b, d, m, n, k, s);
  else
    launch<2>(a, b, d, m, n, k, s);
}

}  // namespace triaudit::kernels
