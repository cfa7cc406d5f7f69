// Evicting the L2 cache before a cold measurement.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace triaudit::kernels {

// Streams `bytes` of `buffer` through the L2 by reading it (a read leaves clean lines: no
// write-back of flush data lands inside the next timed region, as it would after a memset).
// `sink` receives a value only in the impossible case the data XORs to a magic number, which
// keeps the loads alive.
void read_through_l2(const void* buffer, std::size_t bytes, unsigned* sink, cudaStream_t stream);

}  // namespace triaudit::kernels
