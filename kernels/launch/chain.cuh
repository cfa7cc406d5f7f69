// Kernel chains for the fusion experiment: K elementwise steps x <- a*x + b launched as K
// kernels, or as one kernel applying the K steps in registers. Both use the same fused
// multiply-add per step, so their outputs must be bit-identical.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace triaudit::kernels {

constexpr float kChainA = 0.999f;
constexpr float kChainB = 0.001f;

void chain_step(float* x, std::size_t n, cudaStream_t stream);              // one step
void chain_fused(float* x, std::size_t n, int steps, cudaStream_t stream);  // `steps` steps at once

}  // namespace triaudit::kernels
