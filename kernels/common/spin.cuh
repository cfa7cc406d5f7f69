// Kernels that occupy a stream on purpose.
//  - hold_stream: spins until the host sets a flag in mapped host memory, so copies or kernels
//    queued behind it start back-to-back once released and launch cost stays out of the timing
//    (nvbandwidth's method). Gives up after `timeout_ns` and records that, so a lost release can
//    never hang the process.
//  - spin_for: runs for a known device time (the globaltimer), for copy/compute overlap.
//  - empty_kernel: does nothing: the unit of launch cost.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace triaudit::kernels {

void hold_stream(const volatile int* flag, std::uint64_t timeout_ns, int* timed_out, cudaStream_t stream);
void spin_for(std::uint64_t nanoseconds, cudaStream_t stream);
void empty_kernel(cudaStream_t stream);

}  // namespace triaudit::kernels
