// Preparing STREAM arrays on the device and checking an operation's output on the host.
// Shared by the benchmark (once per case, outside timing) and the device tests.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "stream/stream_kernels.cuh"
#include "verify.hpp"

namespace triaudit {

// Fills a, b, c with their random inputs and poisons the output of `op` with NaN (so a kernel
// that writes nothing, or only part of the array, cannot pass).
template <typename T>
void stream_prepare(StreamOp op, const kernels::StreamArrays& arrays, std::uint64_t n, cudaStream_t stream);

// Checks `op`'s output: every element on the device against the reference computed there
// (stream_verify.cuh), only the count and the first wrong element coming back; Dot every block's
// partial and the fold on the host (dot_check.hpp).
template <typename T>
VerifyResult stream_verify(StreamOp op, const kernels::StreamArrays& arrays, std::uint64_t n,
                           kernels::StreamLaunch launch, cudaStream_t stream);

}  // namespace triaudit
