// A STREAM output checked on the device, every element, against the reference computed there from
// the same deterministic inputs (stream_reference.hpp): only a count and the first wrong index
// cross to the host, not the array (1 GiB for the largest case, copied to pageable memory and
// checked on the host, took a second between a sustained case's repetitions).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "stream_ops.hpp"

namespace triaudit::kernels {

struct StreamMismatches {
  unsigned long long wrong = 0;
  unsigned long long first = ~0ULL;  // the lowest wrong index; ~0 when none
};

// Counts, into *result (device memory, reset by the caller: wrong 0, first all ones), the elements
// of `out` (n of T, op's output array) that are not bit for bit stream_expected<T>(op, i) (NaN never
// equals: the poison fails), and the lowest such index. Not for Dot. Launch errors: cudaGetLastError.
template <typename T>
void stream_count_mismatches(StreamOp op, const void* out, std::uint64_t n, StreamMismatches* result,
                             cudaStream_t stream);

}  // namespace triaudit::kernels
