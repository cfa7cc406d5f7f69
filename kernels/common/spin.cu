#include "spin.cuh"

#include "device_clock.cuh"

namespace triaudit::kernels {
namespace {

__global__ void hold_kernel(const volatile int* flag, std::uint64_t timeout_ns, int* timed_out) {
  const std::uint64_t start = global_ns();
  while (*flag == 0) {
    if (global_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(1000);
  }
}

__global__ void spin_kernel(std::uint64_t ns) {
  const std::uint64_t start = global_ns();
  while (global_ns() - start < ns) {
  }
}

__global__ void nothing_kernel() {}

}  // namespace

void hold_stream(const volatile int* flag, std::uint64_t timeout_ns, int* timed_out, cudaStream_t stream) {
  hold_kernel<<<1, 1, 0, stream>>>(flag, timeout_ns, timed_out);
}

void spin_for(std::uint64_t nanoseconds, cudaStream_t stream) { spin_kernel<<<1, 1, 0, stream>>>(nanoseconds); }

void empty_kernel(cudaStream_t stream) { nothing_kernel<<<1, 32, 0, stream>>>(); }

}  // namespace triaudit::kernels
