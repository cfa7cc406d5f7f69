// Level 4: Hopper. The tensor memory accelerator (TMA) copies 128x64 BF16 tiles of A and B
// into shared memory in the 128-byte-swizzled layout the matrix units read, signalling an
// mbarrier when the bytes have landed; warpgroup MMAs (wgmma m64n128k16) read both operands
// straight from shared memory, asynchronously, with no ldmatrix and no register staging.
// Two warpgroups per block (128x128 outputs), a 3-stage TMA pipeline issued by one thread, two
// blocks per SM.
// sm_90a only (built as its own library); needs K % 8 == 0 (TMA's 16-byte row stride).
// Written without a GPU at hand: verified against the FP64 reference before any timing.
#include <cstdint>

#include "hopper.cuh"
#include "ladder.cuh"
#include "launch_once.hpp"

namespace triaudit::kernels {
namespace {
using namespace hopper;

// Three stages (97 KiB) rather than four: two blocks fit on an SM, so while one block drains its
// MMAs at the end of a k-tile (wait_group 0 + a block barrier) the other's keep the tensor cores busy.
constexpr int BM = 128, BN = 128, BK = 64, STAGES = 3;
constexpr int TILE_BYTES = BM * BK * 2;                     // A and B tiles are both 128 x 64 BF16 = 16 KiB
constexpr int SMEM_BYTES = STAGES * 2 * TILE_BYTES + 1024;  // + alignment slack (swizzle atoms are 1 KiB)

__device__ inline void wgmma_m64n128k16(float (&d)[64], std::uint64_t da, std::uint64_t db) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
      "%13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, "
      "%35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, "
      "%57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db));
}

__global__ void __launch_bounds__(256, 2)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 __nv_bfloat16* __restrict__ d, int m, int n, int k) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) std::uint64_t full[STAGES];
  // Align the tiles to 1 KiB: the 128-byte swizzle pattern repeats every 8 rows of 128 bytes.
  unsigned char* base = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
  auto tile_a = [&](int s) { return base + s * 2 * TILE_BYTES; };
  auto tile_b = [&](int s) { return base + s * 2 * TILE_BYTES + TILE_BYTES; };

  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128, t = tid % 128;
  const int row0 = static_cast<int>(blockIdx.x) * BM, col0 = static_cast<int>(blockIdx.y) * BN;
  const int kt_count = (k + BK - 1) / BK;

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1);
    mbar_init_fence();
  }
  __syncthreads();
  if (tid == 0)
    for (int s = 0; s < STAGES && s < kt_count; ++s) {
      mbar_expect(&full[s], 2 * TILE_BYTES);
      tma_load_2d(tile_a(s), &map_a, s * BK, row0, &full[s]);
      tma_load_2d(tile_b(s), &map_b, s * BK, col0, &full[s]);
    }

  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;

  for (int kt = 0; kt < kt_count; ++kt) {
    const int s = kt % STAGES;
    mbar_wait(&full[s], static_cast<std::uint32_t>((kt / STAGES) & 1));
    fence_accumulators(acc);
    wgmma_fence();
    const std::uint64_t da = kmajor_sw128_descriptor(tile_a(s) + wg * 64 * BK * 2);  // this warpgroup's 64 rows
    const std::uint64_t db = kmajor_sw128_descriptor(tile_b(s));
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) wgmma_m64n128k16(acc, da + 2 * kk, db + 2 * kk);  // +32 bytes per k16
    wgmma_commit();
    wgmma_wait<0>();
    fence_accumulators(acc);
    __syncthreads();  // both warpgroups are done with stage s: refill it
    if (tid == 0 && kt + STAGES < kt_count) {
      mbar_expect(&full[s], 2 * TILE_BYTES);
      tma_load_2d(tile_a(s), &map_a, (kt + STAGES) * BK, row0, &full[s]);
      tma_load_2d(tile_b(s), &map_b, (kt + STAGES) * BK, col0, &full[s]);
    }
  }

  // Accumulator layout of m64nN: warp w of the warpgroup owns rows 16w..16w+15; per 8-column
  // chunk j, values (0,1) sit in row lane/4 and (2,3) in row lane/4 + 8, columns (lane%4)*2 + {0,1}.
  const int warp = t / 32, lane = t % 32;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int i = row0 + wg * 64 + warp * 16 + lane / 4 + (e / 2) * 8;
      const int c = col0 + j * 8 + (lane % 4) * 2 + (e % 2);
      if (i < m && c < n) d[static_cast<std::size_t>(c) * m + i] = __float2bfloat16_rn(acc[j * 4 + e]);
    }
}

}  // namespace

LadderLaunch gemm_l4_launch(int m, int n) {
  LadderLaunch l;
  l.grid_x = (static_cast<std::uint64_t>(m) + BM - 1) / BM;
  l.grid_y = (static_cast<std::uint64_t>(n) + BN - 1) / BN;
  l.threads = 256;
  l.smem_bytes = SMEM_BYTES;
  l.min_blocks_per_sm = 2;
  l.tile_m = BM;
  l.tile_n = BN;
  l.kernel = reinterpret_cast<const void*>(&wgmma_kernel);
  return l;
}

void gemm_l4_wgmma_bf16(const void* a, const void* b, void* d, int m, int n, int k, cudaStream_t s) {
  const CUtensorMap* map_a = cached_kmajor_sw128_map(a, m, k, BM);
  const CUtensorMap* map_b = cached_kmajor_sw128_map(b, n, k, BN);
  if (map_a == nullptr || map_b == nullptr) {
    wgmma_kernel<<<0, 0, 0, s>>>(CUtensorMap{}, CUtensorMap{}, static_cast<__nv_bfloat16*>(d), m, n,
                                 k);  // surfaces as the launch error the caller checks
    return;
  }
  if (first_launch_on_this_device(reinterpret_cast<const void*>(&wgmma_kernel)))
    (void)cudaFuncSetAttribute(wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
  const LadderLaunch l = gemm_l4_launch(m, n);
  wgmma_kernel<<<l.grid(), l.threads, l.smem_bytes, s>>>(*map_a, *map_b, static_cast<__nv_bfloat16*>(d), m, n, k);
}

}  // namespace triaudit::kernels
