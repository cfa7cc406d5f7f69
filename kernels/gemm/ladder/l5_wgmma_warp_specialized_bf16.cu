// Level 5: Hopper, the structure fast GEMMs use. Level 4 made one thread both the loader and a
// consumer, and every warpgroup waited for its own MMAs before a stage could be refilled. Here:
//  - warp specialisation: warpgroup 0 only loads (one thread issues TMA), warpgroups 1 and 2 only
//    compute; they meet at two mbarriers per stage, "full" (TMA bytes landed) and "empty" (both
//    consumers are done reading), so loads run ahead for as long as stages are free;
//  - consumers keep one MMA group in flight (wgmma.wait_group 1): stage k-1 is released while
//    stage k's MMAs run, so the tensor cores do not drain between k-tiles;
//  - a 128x256 block tile (each consumer 64x256 with wgmma m64n256k16): a third more MMA work
//    per operand byte than level 4's 128x128; the 128 accumulators per thread fit because the
//    producer gives registers back (setmaxnreg: 40 for the producer, 232 for the consumers);
//  - grouped rasterisation: 16 M-tiles share a band of N-tiles, so one wave of blocks reads
//    about half the operand bytes of a row-by-row order and more of them hit L2;
//  - the epilogue goes through shared memory, so D (column-major) is written in 16-byte
//    coalesced stores instead of 2-byte scattered ones.
// sm_90a only (built with level 4 in its own library); needs K % 8 == 0 (TMA's 16-byte stride).
// Written without a GPU at hand: verified against the FP64 reference before any timing.
#include <cstdint>
#include <string>

#include "hopper.cuh"
#include "ladder.cuh"
#include "launch_once.hpp"
#include "raster.hpp"

namespace triaudit::kernels {
namespace {
using namespace hopper;

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, GROUP_M = 16;
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;  // 16 + 32 KiB
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;  // + slack to align the tiles to 1 KiB (swizzle atom)
constexpr int CONSUMERS = 2, THREADS = 128 * (1 + CONSUMERS);
// setmaxnreg moves registers between the warpgroups inside what the CTA was launched with: the
// producer gives back down to 40, the consumers take up to 232. The launch count ptxas chooses must
// cover both (168 x 384 = 128 x 40 + 256 x 232): with fewer, the increase waits forever for
// registers nobody frees. ladder_launch_check refuses such a build before it is launched, and
// tests/check_kernel_sass.py checks the count at build time.
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr int LAUNCH_REGS = (128 * PRODUCER_REGS + 128 * CONSUMERS * CONSUMER_REGS) / THREADS;
static_assert(LAUNCH_REGS * THREADS == 128 * PRODUCER_REGS + 128 * CONSUMERS * CONSUMER_REGS,
              "the register split must fill the CTA's allocation exactly");
constexpr int EPI_LD =
    BM + 8;  // staged D column stride in elements: +16 B puts the 4 columns a store touches in distinct banks
static_assert(BN * EPI_LD * 2 <= STAGES * STAGE_BYTES, "the staged D tile reuses the pipeline's shared memory");

__device__ inline void wgmma_m64n256k16(float (&d)[128], std::uint64_t da, std::uint64_t db) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "
      "%13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, "
      "%35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, "
      "%57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, "
      "%79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, "
      "%101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, "
      "%119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),
        "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),
        "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
        "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),
        "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]),
        "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
        "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db));
}

__global__ void __launch_bounds__(THREADS, 1)
    ws_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
              __nv_bfloat16* __restrict__ d, int m, int n, int k) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) std::uint64_t full[STAGES], empty[STAGES];
  unsigned char* base = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
  auto tile_a = [&](int s) { return base + s * STAGE_BYTES; };
  auto tile_b = [&](int s) { return base + s * STAGE_BYTES + A_BYTES; };

  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  int tm = 0, tn = 0;
  grouped_tile(static_cast<int>(blockIdx.x), (m + BM - 1) / BM, (n + BN - 1) / BN, GROUP_M, tm, tn);
  const int row0 = tm * BM, col0 = tn * BN;
  const int kt_count = (k + BK - 1) / BK;

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);               // the producer's arrive.expect_tx
      mbar_init(&empty[s], CONSUMERS * 4);  // one arrival per consumer warp
    }
    mbar_init_fence();
  }
  __syncthreads();  // the last block-wide barrier: the producer's idle threads leave below

  if (wg == 0) {
    // The producer needs few registers: hand them to the consumers (128 x 40 + 256 x 232 <= 64 Ki).
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS) : "memory");
    if (tid == 0)
      for (int kt = 0; kt < kt_count; ++kt) {
        const int s = kt % STAGES;
        if (kt >= STAGES) mbar_wait(&empty[s], static_cast<std::uint32_t>((kt / STAGES - 1) & 1));
        mbar_expect(&full[s], STAGE_BYTES);
        tma_load_2d(tile_a(s), &map_a, kt * BK, row0, &full[s]);
        tma_load_2d(tile_b(s), &map_b, kt * BK, col0, &full[s]);
      }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS)
               : "memory");  // 128 accumulators + addressing
  const int c = wg - 1, t = tid - 128, warp = (tid / 32) % 4, lane = tid % 32;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;

  for (int kt = 0; kt < kt_count; ++kt) {
    const int s = kt % STAGES;
    mbar_wait(&full[s], static_cast<std::uint32_t>((kt / STAGES) & 1));
    fence_accumulators(acc);
    wgmma_fence();
    const std::uint64_t da = kmajor_sw128_descriptor(tile_a(s) + c * 64 * BK * 2);  // this consumer's 64 rows
    const std::uint64_t db = kmajor_sw128_descriptor(tile_b(s));
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) wgmma_m64n256k16(acc, da + 2 * kk, db + 2 * kk);  // +32 bytes per k16
    wgmma_commit();
    // The previous k-tile's MMAs are done: its stage can be refilled. The last k-tile waits for
    // all of them *inside* the loop: ptxas does not order ordinary instructions after a wait that
    // follows the loop (it hoisted the epilogue's conversions above it; see hopper.cuh), but it
    // cannot move the epilogue into the loop. `kernel_sass_sm_90a` checks the order.
    if (kt + 1 < kt_count)
      wgmma_wait<1>();
    else
      wgmma_wait<0>();
    fence_accumulators(acc);
    if (kt > 0 && lane == 0) mbar_arrive(&empty[(kt - 1) % STAGES]);
  }
  // The last k-tile's wait above is what finishes the MMAs before the epilogue (ptxas places this
  // one's DEPBAR after the conversions). This wait stays all the same: without it ptxas cannot see
  // that the accumulators are final here and injects a wait of its own (advisory C7517).
  wgmma_wait<0>();
  fence_accumulators(acc);

  // Epilogue. Both consumers must be done reading the stages before either overwrites them.
  asm volatile("bar.sync 1, %0;\n" ::"n"(CONSUMERS * 128) : "memory");
  auto* staged = reinterpret_cast<__nv_bfloat16*>(base);  // [BN][EPI_LD]: D's tile, column-major
  // m64nN accumulator layout: warp w owns rows 16w..16w+15; per 8-column chunk j, values (0,1)
  // sit in row lane/4 and (2,3) in row lane/4 + 8, at columns (lane%4)*2 + {0,1}.
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = c * 64 + warp * 16 + lane / 4 + (e / 2) * 8;
      const int col = j * 8 + (lane % 4) * 2 + (e % 2);
      staged[col * EPI_LD + r] = __float2bfloat16_rn(acc[j * 4 + e]);
    }
  asm volatile("bar.sync 1, %0;\n" ::"n"(CONSUMERS * 128) : "memory");

  // 16-byte chunks of 8 rows: 16 per column, consecutive threads on consecutive chunks.
  constexpr int CHUNKS = BN * (BM / 8);
  for (int q = t; q < CHUNKS; q += CONSUMERS * 128) {
    const int col = q / (BM / 8), r = (q % (BM / 8)) * 8;
    const int gi = row0 + r, gj = col0 + col;
    if (gj >= n || gi >= m) continue;
    const __nv_bfloat16* src = staged + col * EPI_LD + r;
    __nv_bfloat16* dst = d + static_cast<std::size_t>(gj) * m + gi;
    if (m % 8 == 0) {  // then gi + 7 < m too, and dst is 16-byte aligned
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    } else {
      for (int e = 0; e < 8 && gi + e < m; ++e) dst[e] = src[e];
    }
  }
}

}  // namespace

LadderLaunch gemm_l5_launch(int m, int n) {
  LadderLaunch l;  // a 1-D grid: the grouped order maps a block index to its tile
  l.grid_x = ((static_cast<std::uint64_t>(m) + BM - 1) / BM) * ((static_cast<std::uint64_t>(n) + BN - 1) / BN);
  l.grid_y = 1;
  l.threads = THREADS;
  l.smem_bytes = SMEM_BYTES;
  l.tile_m = BM;
  l.tile_n = BN;
  l.kernel = reinterpret_cast<const void*>(&ws_kernel);
  return l;
}

std::string gemm_l5_launch_check() {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, ws_kernel) != cudaSuccess) {
    (void)cudaGetLastError();
    return "level 5's kernel attributes could not be read (no sm_90a code for this device?)";
  }
  if (attr.numRegs < LAUNCH_REGS)
    return "level 5 was built with " + std::to_string(attr.numRegs) + " registers per thread; its setmaxnreg split (" +
           std::to_string(PRODUCER_REGS) + " / " + std::to_string(CONSUMER_REGS) + ") needs " +
           std::to_string(LAUNCH_REGS) + ": it would wait forever, so it is not launched";
  return "";
}

void gemm_l5_wgmma_ws_bf16(const void* a, const void* b, void* d, int m, int n, int k, cudaStream_t s) {
  const CUtensorMap* map_a = cached_kmajor_sw128_map(a, m, k, BM);
  const CUtensorMap* map_b = cached_kmajor_sw128_map(b, n, k, BN);
  if (map_a == nullptr || map_b == nullptr) {
    ws_kernel<<<0, 0, 0, s>>>(CUtensorMap{}, CUtensorMap{}, static_cast<__nv_bfloat16*>(d), m, n,
                              k);  // surfaces as the launch error the caller checks
    return;
  }
  static bool registers_ok = true;  // the build's register count: the same on every device
  if (first_launch_on_this_device(reinterpret_cast<const void*>(&ws_kernel))) {
    registers_ok = gemm_l5_launch_check().empty();
    (void)cudaFuncSetAttribute(ws_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
  }
  if (!registers_ok) {  // never launch a kernel that would spin: an empty launch reports an error
    ws_kernel<<<0, 0, 0, s>>>(*map_a, *map_b, static_cast<__nv_bfloat16*>(d), m, n, k);
    return;
  }
  const LadderLaunch l = gemm_l5_launch(m, n);
  ws_kernel<<<l.grid(), l.threads, l.smem_bytes, s>>>(*map_a, *map_b, static_cast<__nv_bfloat16*>(d), m, n, k);
}

}  // namespace triaudit::kernels
