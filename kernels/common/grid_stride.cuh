// A grid-stride loop with memory-level parallelism: each thread takes kGridStrideUnroll indices
// of a step (i, i + g, i + 2g, ...) and issues every load of the step before its first store, so
// 4 x 16 bytes per thread and array are in flight. Written out because nvcc compiles the plain
// loop (trip count unknown) to one load in flight per thread, too few to cover HBM latency with
// one wave of threads (tests/check_kernel_sass.py checks the machine code).
#pragma once
#include <cstddef>

namespace triaudit::kernels {

constexpr int kGridStrideUnroll = 4;

__device__ inline std::size_t grid_thread_index() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::size_t grid_thread_count() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

// load(i) returns what index i needs; store(i, value) consumes it. Every i in [0, count) is
// visited exactly once across the grid.
template <typename Load, typename Store>
__device__ inline void grid_stride(std::size_t count, Load load, Store store) {
  const std::size_t g = grid_thread_count();
  std::size_t i = grid_thread_index();
  for (; i + (kGridStrideUnroll - 1) * g < count; i += kGridStrideUnroll * g) {
    decltype(load(i)) in[kGridStrideUnroll];
#pragma unroll
    for (int u = 0; u < kGridStrideUnroll; ++u) in[u] = load(i + u * g);
#pragma unroll
    for (int u = 0; u < kGridStrideUnroll; ++u) store(i + u * g, in[u]);
  }
  for (; i < count; i += g) store(i, load(i));
}

}  // namespace triaudit::kernels
