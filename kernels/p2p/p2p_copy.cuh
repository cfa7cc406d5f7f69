// The SM copy between two GPUs: a kernel on the current device moving `bytes` from `src` to `dst`,
// either of which may be a peer's memory (peer access enabled). Launched on the destination it is
// nvbandwidth's SM read (loads cross the link), on the source its SM write (stores cross it).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace triaudit::kernels {

// `bytes` a multiple of 4, both pointers 16-byte aligned. One wave of resident blocks of the
// current device at most (fewer for small copies); 4 x 16 bytes in flight per thread.
void p2p_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream);

}  // namespace triaudit::kernels
