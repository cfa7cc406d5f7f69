// The fusion chain's known input and its host reference: K steps of x <- fma(a, x, b) from
// x = random_pm1(seed, i), computed on the host with the same fused multiply-add.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "verify.hpp"

namespace triaudit {

void chain_prepare(float* x, std::uint64_t n, cudaStream_t stream);
VerifyResult chain_verify(const float* x, std::uint64_t n, int steps, cudaStream_t stream);

}  // namespace triaudit
