// The device side of grid_stride.hpp: this thread's place in the grid.
#pragma once
#include <cstddef>

#include "grid_stride.hpp"

namespace triaudit::kernels {

__device__ inline std::size_t grid_thread_index() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::size_t grid_thread_count() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

template <typename Load, typename Store>
__device__ inline void grid_stride(std::size_t count, Load load, Store store) {
  grid_stride_from(grid_thread_index(), grid_thread_count(), count, load, store);
}

}  // namespace triaudit::kernels
