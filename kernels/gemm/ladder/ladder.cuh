// The hand-written GEMM ladder: each level adds one idea (see kernels/gemm/README.md).
// All levels compute D = A * B with A stored K-major (M x K row-major, i.e. cuBLAS "T") and
// B stored K-major (K x N column-major, cuBLAS "N"): the TN layout, natural for Tensor Cores.
// D is M x N column-major. Levels 0-1: FP32 in, FP32 out. Levels 2-3: BF16 in, FP32
// accumulate, BF16 out, as cuBLASLt's BF16 GEMM.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace triaudit::kernels {

struct LadderLevel {
  int level;
  const char* name;  // naive_fp32, tiled_fp32, wmma_bf16, mma_cp_async_bf16
  const char* idea;  // what this level adds
  bool bf16;         // BF16 operands (else FP32)
  int min_cc;        // x10
};

const LadderLevel* ladder_levels(int* count);

// Empty string when `level` can run this shape on a device of compute capability cc (x10),
// otherwise the reason.
std::string ladder_unsupported(int level, std::uint64_t m, std::uint64_t n, std::uint64_t k, int cc);

// Empty string when the built kernel of `level` may be launched on the current device, otherwise
// the reason (level 5: a register count below what its setmaxnreg split needs would hang it).
// Needs a device; called before a level's first launch.
std::string ladder_launch_check(int level);
std::string gemm_l5_launch_check();  // sm_90a

// How a level launches for an M x N output: one definition per level, used by its launcher, by
// the shape rules (grid limits) and by the occupancy counter.
struct LadderLaunch {
  std::uint64_t grid_x = 0, grid_y = 0;  // 64-bit: the rules check them against the launch limits
  unsigned threads = 0;
  int smem_bytes = 0;          // dynamic shared memory per block
  int min_blocks_per_sm = 1;   // what the level is written for (its __launch_bounds__)
  int tile_m = 0, tile_n = 0;  // the block of D one CTA writes: the check samples every one
  const void* kernel = nullptr;
  dim3 grid() const { return dim3(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y)); }
};
LadderLaunch ladder_launch(int level, int m, int n);

// Enqueues one GEMM. Pointers: A, B of the level's input type, D of its output type.
void ladder_gemm(int level, const void* a, const void* b, void* d, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                 cudaStream_t stream);

// Per-level launch shapes and launchers (one file each).
LadderLaunch gemm_l0_launch(int m, int n);
LadderLaunch gemm_l1_launch(int m, int n);
LadderLaunch gemm_l2_launch(int m, int n);
LadderLaunch gemm_l3_launch(int m, int n);
LadderLaunch gemm_l4_launch(int m, int n);  // sm_90a
LadderLaunch gemm_l5_launch(int m, int n);  // sm_90a
void gemm_l0_naive_fp32(const float* a, const float* b, float* d, int m, int n, int k, cudaStream_t s);
void gemm_l1_tiled_fp32(const float* a, const float* b, float* d, int m, int n, int k, cudaStream_t s);
void gemm_l2_wmma_bf16(const void* a, const void* b, void* d, int m, int n, int k, cudaStream_t s);
void gemm_l3_mma_bf16(const void* a, const void* b, void* d, int m, int n, int k, cudaStream_t s);
void gemm_l4_wgmma_bf16(const void* a, const void* b, void* d, int m, int n, int k, cudaStream_t s);     // sm_90a
void gemm_l5_wgmma_ws_bf16(const void* a, const void* b, void* d, int m, int n, int k, cudaStream_t s);  // sm_90a

}  // namespace triaudit::kernels
