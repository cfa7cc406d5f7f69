// A kernel reading mapped (zero-copy) host memory over the bus and writing it to device memory:
// the alternative to one cudaMemcpy that the seeds warn can be slower for small tensors.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace triaudit::kernels {

// Copies `bytes` (a multiple of 16) from `host_mapped` (a device pointer to mapped host memory)
// to `device_dst` with 16-byte loads from every SM.
void zero_copy_read(const void* host_mapped, void* device_dst, std::size_t bytes, cudaStream_t stream);

// The SM copy of device memory: 16-byte loads and stores from a full grid (for d2d by SMs).
void sm_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream);

}  // namespace triaudit::kernels
