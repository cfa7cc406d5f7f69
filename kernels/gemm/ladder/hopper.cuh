// Hopper building blocks shared by ladder levels 4 and 5 (sm_90a only): shared-memory matrix
// descriptors for wgmma, mbarriers with a bounded wait, and TMA tile loads with their tensor maps.
// Every function is a thin wrapper over one PTX instruction; the comments say the rule each
// encodes, because a wrong bit here gives wrong numbers or a hang, not a compile error.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "common/device_clock.cuh"

namespace triaudit::kernels::hopper {

__device__ inline std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// wgmma shared-memory descriptor for a K-major operand in the 128-byte-swizzled layout TMA writes:
// start address >> 4 in bits 0-13, leading-dimension offset (unused by this layout; 1 by
// convention) in 16-29, stride offset 1024 B >> 4 (8 rows of 128 B, one swizzle atom) in 32-45,
// swizzle mode 1 = 128 B in bits 62-63. The tile must be 1 KiB aligned. Moving 16 elements
// (32 B) along K inside the atom is +2 on the descriptor: the swizzle is applied to the address.
__device__ inline std::uint64_t kmajor_sw128_descriptor(const void* tile) {
  const std::uint64_t addr = smem_u32(tile);
  return ((addr & 0x3FFFF) >> 4) | (std::uint64_t{1} << 16) | (std::uint64_t{1024 >> 4} << 32) |
         (std::uint64_t{1} << 62);
}

__device__ inline void mbar_init(std::uint64_t* bar, std::uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(arrivals));
}
// Makes the barriers' initialisation visible to the async proxy (TMA) before any use.
__device__ inline void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// One arrival that also announces `bytes` of TMA traffic the phase must wait for.
__device__ inline void mbar_expect(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ inline void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

// Waits until the barrier's phase of this parity has completed. A phase that never completes
// (a wrong descriptor, a byte count that does not match, a lost arrival) traps after 2 s, so the
// case fails with a CUDA error instead of hanging the GPU.
__device__ inline void mbar_wait(std::uint64_t* bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  const std::uint64_t start = global_ns();
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
    if (!done && global_ns() - start > 2000000000ULL) __trap();
  }
}

// TMA: one box of the 2-D tensor `map` at (c0 = column along K, c1 = row) into shared memory;
// completion is counted in bytes on `bar`. Rows or columns outside the tensor arrive as zeros
// and still count, so a partial tile completes the same phase as a full one.
__device__ inline void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];\n" ::"r"(smem_u32(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

// wgmma ordering: fence before the first MMA that reads registers written by ordinary
// instructions; commit closes a group; wait<N> leaves at most N groups in flight.
__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Ties the accumulator registers to the surrounding wgmma instructions for the compiler front end
// (CUTLASS's warpgroup_fence_operand): wgmma's asm names its accumulators, but the wait does not,
// and an empty asm that "modifies" every accumulator keeps NVVM from moving their reads and writes
// across a wait. It emits no PTX, so it does not bind ptxas: ptxas hoisted level 5's epilogue
// conversions above a wait that followed the loop even with this fence there (HGMMA has no
// scoreboard on its outputs, so D lost its last k-tile). What protects level 5 is that its last
// k-tile waits for every group inside the loop; `kernel_sass_sm_90a` checks the order in the binary.
template <int N>
__device__ inline void fence_accumulators(float (&acc)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}

// A rows x K row-major BF16 matrix (K contiguous) as a 2-D tensor read in boxes of
// 64 (K, = 128 bytes, the 128-byte swizzle's row) x box_rows. False when the driver entry point
// is missing or the driver refuses the map (e.g. K not a multiple of 8: strides are 16-byte units).
inline bool make_kmajor_sw128_map(CUtensorMap* map, const void* ptr, int rows, int k, int box_rows) {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      p = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k) * 2};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem[2] = {1, 1};
  return encode != nullptr &&
         encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(ptr), dims, strides, box, elem,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The map of one operand, encoded once per (pointer, rows, k, box) and kept: a timed loop over
// rotated operand sets reuses its maps instead of encoding two per launch. A map holds only the
// address and the shape, so a buffer freed and allocated again at the same address with the same
// shape gets a map that is still right. nullptr when the encode failed.
inline const CUtensorMap* cached_kmajor_sw128_map(const void* ptr, int rows, int k, int box_rows) {
  using Key = std::tuple<const void*, int, int, int>;
  static std::mutex lock;
  static std::map<Key, CUtensorMap> maps;
  const std::lock_guard<std::mutex> hold(lock);
  const Key key{ptr, rows, k, box_rows};
  if (auto it = maps.find(key); it != maps.end()) return &it->second;
  if (maps.size() >= 4096) maps.clear();  // a bound; rotations use at most a few hundred
  CUtensorMap map{};
  if (!make_kmajor_sw128_map(&map, ptr, rows, k, box_rows)) return nullptr;
  return &maps.emplace(key, map).first->second;
}

}  // namespace triaudit::kernels::hopper
