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

// Copies `op`'s output back and compares it with the host reference. stride > 1 checks every
// stride-th element (plus the last); Dot always checks its one result.
template <typename T>
VerifyResult stream_verify(StreamOp op, const kernels::StreamArrays& arrays, std::uint64_t n,
                           kernels::StreamLaunch launch, cudaStream_t stream, std::uint64_t stride = 1);

}  // namespace triaudit
