#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "pattern.cuh"
#include "pattern.hpp"

namespace triaudit::kernels {
namespace {
template <typename T>
__device__ T from_int(int v);
template <>
__device__ float from_int<float>(int v) {
  return static_cast<float>(v);
}
template <>
__device__ __nv_bfloat16 from_int<__nv_bfloat16>(int v) {
  return __int2bfloat16_rn(v);
}
template <>
__device__ __half from_int<__half>(int v) {
  return __int2half_rn(v);
}
__device__ float as_float(float v) { return v; }
__device__ float as_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ float as_float(__half v) { return __half2float(v); }

template <typename T>
__global__ void fill_kernel(T* p, std::size_t n, int rank, OutputLayout layout) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = from_int<T>(input_value(layout, rank, i));
}

// Equality, not a tolerance: every expected value is an integer each type holds exactly.
template <typename T>
__global__ void check_kernel(const T* p, std::size_t n, int rank, OutputLayout layout, unsigned long long* wrong) {
  unsigned long long local = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    local += as_float(p[i]) != static_cast<float>(expected_value(layout, rank, i));
  if (local) atomicAdd(wrong, local);
}

unsigned blocks(std::size_t n) {
  const std::size_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 4096 ? (b == 0 ? 1 : b) : 4096);
}
}  // namespace

void fill_collective_input(void* p, ElementType t, std::size_t n, int rank, const OutputLayout& layout,
                           cudaStream_t s) {
  switch (t) {
    case ElementType::FP32:
      fill_kernel<<<blocks(n), 256, 0, s>>>(static_cast<float*>(p), n, rank, layout);
      break;
    case ElementType::BF16:
      fill_kernel<<<blocks(n), 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, rank, layout);
      break;
    case ElementType::FP16:
      fill_kernel<<<blocks(n), 256, 0, s>>>(static_cast<__half*>(p), n, rank, layout);
      break;
  }
}

void count_collective_wrong(const void* p, ElementType t, std::size_t n, int rank, const OutputLayout& layout,
                            unsigned long long* wrong, cudaStream_t s) {
  switch (t) {
    case ElementType::FP32:
      check_kernel<<<blocks(n), 256, 0, s>>>(static_cast<const float*>(p), n, rank, layout, wrong);
      break;
    case ElementType::BF16:
      check_kernel<<<blocks(n), 256, 0, s>>>(static_cast<const __nv_bfloat16*>(p), n, rank, layout, wrong);
      break;
    case ElementType::FP16:
      check_kernel<<<blocks(n), 256, 0, s>>>(static_cast<const __half*>(p), n, rank, layout, wrong);
      break;
  }
}

}  // namespace triaudit::kernels
