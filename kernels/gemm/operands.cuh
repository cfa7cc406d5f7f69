// GEMM operands and their reference: random fills in every storage type, and the exact
// (FP64 / INT64) value of sampled output elements computed from the stored inputs.
// Column-major as cuBLAS: A is M x K (lda = M), or with transa stored K x M (lda = K);
// B is K x N (ldb = K); D is M x N (ldd = M).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace triaudit::kernels {

enum class ElemType { F64, F32, F16, BF16, E4M3, I8, I32 };

int elem_bytes(ElemType t);

// Values random_pm1(seed, i) rounded to the type (I8: round(127 x value), never all zero).
void fill_operand(void* p, ElemType t, std::size_t n, std::uint64_t seed, cudaStream_t stream);

struct Samples {
  const std::uint32_t* rows;  // device arrays of `count` indices
  const std::uint32_t* cols;
  int count;
};

// ref[s] = sum_k a(i,k) b(k,j), abs[s] = sum_k |a(i,k) b(k,j)|, got[s] = D(i,j), for sample s;
// sq_ref[s] = sum_k (a(i,k) b(k,j))^2 when sq_ref is given (the sqrt(K) terms of gemm_bound.hpp).
// Returns false for a combination of types it does not know (nothing is launched).
bool gemm_reference_samples(const void* a, const void* b, const void* d, ElemType ab_type, ElemType d_type,
                            std::uint64_t m, std::uint64_t n, std::uint64_t k, bool transa, Samples samples,
                            double* ref, double* abs_ref, double* got, cudaStream_t stream, double* sq_ref = nullptr);

}  // namespace triaudit::kernels
