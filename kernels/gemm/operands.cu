#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "common/random_values.hpp"
#include "operands.cuh"

namespace triaudit::kernels {
namespace {

template <typename T>
__device__ T from_float(float v);
template <>
__device__ double from_float<double>(float v) {
  return v;
}
template <>
__device__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}
template <>
__device__ std::int8_t from_float<std::int8_t>(float v) {
  return static_cast<std::int8_t>(__float2int_rn(127.0f * v));
}
template <>
__device__ std::int32_t from_float<std::int32_t>(float v) {
  return __float2int_rn(127.0f * v);
}

template <typename T>
__device__ double to_double(T v) {
  return static_cast<double>(v);
}
template <>
__device__ double to_double<__half>(__half v) {
  return __half2float(v);
}
template <>
__device__ double to_double<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <>
__device__ double to_double<__nv_fp8_e4m3>(__nv_fp8_e4m3 v) {
  return static_cast<float>(v);
}

template <typename T>
__global__ void fill_kernel(T* p, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = from_float<T>(random_pm1<float>(seed, i));
}

// One warp per sample: lanes stride over k, then a warp sum.
template <typename AB, typename D>
__global__ void reference_kernel(const AB* a, const AB* b, const D* d, std::uint64_t m, std::uint64_t k, bool transa,
                                 Samples s, double* ref, double* abs_ref, double* got, double* sq_ref) {
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (warp >= s.count) return;
  const std::uint64_t i = s.rows[warp], j = s.cols[warp];
  double sum = 0, abs_sum = 0, sq_sum = 0;
  for (std::uint64_t kk = static_cast<std::uint64_t>(lane); kk < k; kk += 32) {
    const double av = to_double(transa ? a[kk + i * k] : a[i + kk * m]);
    const double bv = to_double(b[kk + j * k]);
    const double p = av * bv;
    sum += p;
    abs_sum += fabs(p);
    sq_sum += p * p;
  }
  for (int off = 16; off > 0; off /= 2) {
    sum += __shfl_down_sync(0xffffffffu, sum, off);
    abs_sum += __shfl_down_sync(0xffffffffu, abs_sum, off);
    sq_sum += __shfl_down_sync(0xffffffffu, sq_sum, off);
  }
  if (lane == 0) {
    ref[warp] = sum;
    abs_ref[warp] = abs_sum;
    got[warp] = to_double(d[i + j * m]);
    if (sq_ref != nullptr) sq_ref[warp] = sq_sum;
  }
}

unsigned blocks(std::size_t n) {
  const std::size_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 65536 ? (b == 0 ? 1 : b) : 65536);
}

template <typename AB, typename D>
void launch_reference(const void* a, const void* b, const void* d, std::uint64_t m, std::uint64_t k, bool transa,
                      Samples s, double* ref, double* abs_ref, double* got, double* sq_ref, cudaStream_t stream) {
  const unsigned warps_per_block = 8;
  const unsigned grid = static_cast<unsigned>((s.count + warps_per_block - 1) / warps_per_block);
  reference_kernel<AB, D><<<grid == 0 ? 1 : grid, 32 * warps_per_block, 0, stream>>>(
      static_cast<const AB*>(a), static_cast<const AB*>(b), static_cast<const D*>(d), m, k, transa, s, ref, abs_ref,
      got, sq_ref);
}

}  // namespace

int elem_bytes(ElemType t) {
  switch (t) {
    case ElemType::F64:
      return 8;
    case ElemType::F32:
    case ElemType::I32:
      return 4;
    case ElemType::F16:
    case ElemType::BF16:
      return 2;
    case ElemType::E4M3:
    case ElemType::I8:
      return 1;
  }
  return 0;
}

void fill_operand(void* p, ElemType t, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  switch (t) {
    case ElemType::F64:
      fill_kernel<<<blocks(n), 256, 0, stream>>>(static_cast<double*>(p), n, seed);
      break;
    case ElemType::F32:
      fill_kernel<<<blocks(n), 256, 0, stream>>>(static_cast<float*>(p), n, seed);
      break;
    case ElemType::F16:
      fill_kernel<<<blocks(n), 256, 0, stream>>>(static_cast<__half*>(p), n, seed);
      break;
    case ElemType::BF16:
      fill_kernel<<<blocks(n), 256, 0, stream>>>(static_cast<__nv_bfloat16*>(p), n, seed);
      break;
    case ElemType::E4M3:
      fill_kernel<<<blocks(n), 256, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed);
      break;
    case ElemType::I8:
      fill_kernel<<<blocks(n), 256, 0, stream>>>(static_cast<std::int8_t*>(p), n, seed);
      break;
    case ElemType::I32:
      fill_kernel<<<blocks(n), 256, 0, stream>>>(static_cast<std::int32_t*>(p), n, seed);
      break;
  }
}

bool gemm_reference_samples(const void* a, const void* b, const void* d, ElemType ab, ElemType dt, std::uint64_t m,
                            std::uint64_t /*n*/, std::uint64_t k, bool transa, Samples s, double* ref, double* abs_ref,
                            double* got, cudaStream_t stream, double* sq_ref) {
#define TRIAUDIT_REF(AB, D) launch_reference<AB, D>(a, b, d, m, k, transa, s, ref, abs_ref, got, sq_ref, stream)
  if (ab == ElemType::F64)
    TRIAUDIT_REF(double, double);
  else if (ab == ElemType::F32)
    TRIAUDIT_REF(float, float);
  else if (ab == ElemType::F16 && dt == ElemType::F16)
    TRIAUDIT_REF(__half, __half);
  else if (ab == ElemType::BF16 && dt == ElemType::BF16)
    TRIAUDIT_REF(__nv_bfloat16, __nv_bfloat16);
  else if (ab == ElemType::BF16 && dt == ElemType::F32)
    TRIAUDIT_REF(__nv_bfloat16, float);
  else if (ab == ElemType::E4M3)
    TRIAUDIT_REF(__nv_fp8_e4m3, __nv_bfloat16);
  else if (ab == ElemType::I8)
    TRIAUDIT_REF(std::int8_t, std::int32_t);
  else
    return false;
#undef TRIAUDIT_REF
  return true;
}

}  // namespace triaudit::kernels
