// Filling a rank's allreduce input and counting wrong elements of the result on the device.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace triaudit::kernels {

enum class ReduceType { FP32, BF16, FP16 };

void fill_allreduce_input(void* p, ReduceType t, std::size_t n, int rank, int ranks, cudaStream_t stream);
// *wrong (device memory, zeroed by the caller) += elements != the exact sum over ranks.
void count_allreduce_wrong(const void* p, ReduceType t, std::size_t n, int ranks, unsigned long long* wrong,
                           cudaStream_t stream);

}  // namespace triaudit::kernels
