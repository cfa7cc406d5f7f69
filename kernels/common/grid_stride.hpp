// A grid-stride loop with memory-level parallelism: the thread whose first index is `first`
// (of `stride` threads in the grid) takes kGridStrideUnroll indices of a step (i, i + stride,
// i + 2 stride, ...) and issues every load of the step before its first store, so 4 x 16 bytes
// per thread and array are in flight. Written out because nvcc compiles the plain loop (trip
// count unknown) to one load in flight per thread, too few to cover HBM latency with one wave
// of threads (tests/check_kernel_sass.py checks the machine code). Host-compilable, so the
// visiting order is unit-tested on the CPU (tests/cpu/test_grid_stride.cpp).
#pragma once
#include <cstddef>

#include "host_device.hpp"

namespace triaudit::kernels {

constexpr int kGridStrideUnroll = 4;

// load(i) returns what index i needs; store(i, value) consumes it. Over all `stride` threads,
// every i in [0, count) is visited exactly once.
template <typename Load, typename Store>
TRIAUDIT_HD inline void grid_stride_from(std::size_t first, std::size_t stride, std::size_t count, Load load,
                                         Store store) {
  std::size_t i = first;
  for (; i + (kGridStrideUnroll - 1) * stride < count; i += kGridStrideUnroll * stride) {
    decltype(load(i)) in[kGridStrideUnroll];
    TRIAUDIT_UNROLL
    for (int u = 0; u < kGridStrideUnroll; ++u) in[u] = load(i + u * stride);
    TRIAUDIT_UNROLL
    for (int u = 0; u < kGridStrideUnroll; ++u) store(i + u * stride, in[u]);
  }
  for (; i < count; i += stride) store(i, load(i));
}

}  // namespace triaudit::kernels
