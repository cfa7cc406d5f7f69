#include "fill.cuh"
#include "random_values.hpp"

namespace triaudit::kernels {
namespace {

template <typename T>
__global__ void fill_random_kernel(T* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = random_pm1<T>(seed, i);
}

template <typename T>
__global__ void fill_value_kernel(T* x, std::size_t n, T value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = value;
}

__global__ void fill_pattern_kernel(std::uint32_t* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = pattern_word(seed, i);
}

unsigned blocks_for(std::size_t n) {
  const std::size_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 65536 ? (b == 0 ? 1 : b) : 65536);
}

}  // namespace

template <typename T>
void fill_random(T* x, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  fill_random_kernel<T><<<blocks_for(n), 256, 0, stream>>>(x, n, seed);
}

template <typename T>
void fill_value(T* x, std::size_t n, T value, cudaStream_t stream) {
  fill_value_kernel<T><<<blocks_for(n), 256, 0, stream>>>(x, n, value);
}

void fill_pattern(std::uint32_t* x, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  fill_pattern_kernel<<<blocks_for(n), 256, 0, stream>>>(x, n, seed);
}

template void fill_random<float>(float*, std::size_t, std::uint64_t, cudaStream_t);
template void fill_random<double>(double*, std::size_t, std::uint64_t, cudaStream_t);
template void fill_value<float>(float*, std::size_t, float, cudaStream_t);
template void fill_value<double>(double*, std::size_t, double, cudaStream_t);

}  // namespace triaudit::kernels
