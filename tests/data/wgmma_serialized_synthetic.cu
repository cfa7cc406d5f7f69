// Synthetic: a kernel written to make ptxas serialise its wgmma pipeline (an accumulator is
// touched while an MMA is in flight). `ptxas_advisory_guard` compiles it through
// cmake/ptxas_advisories.sh and expects the compile to fail: the guard must catch C75xx.
#include "gemm/ladder/hopper.cuh"

using namespace triaudit::kernels::hopper;

__device__ inline void mma_m64n16k16(float (&d)[8], std::uint64_t da, std::uint64_t db) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "l"(da), "l"(db));
}

__global__ void serialised(float* out, int k) {
  __shared__ __align__(1024) unsigned char tiles[16384];
  float acc[8] = {};
  for (int i = 0; i < k; ++i) {
    wgmma_fence();
    mma_m64n16k16(acc, kmajor_sw128_descriptor(tiles), kmajor_sw128_descriptor(tiles + 8192));
    wgmma_commit();
    acc[i % 8] += 1.0f;  // an accumulator touched while the MMA is in flight
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
  for (int i = 0; i < 8; ++i) out[threadIdx.x * 8 + i] = acc[i];
}
