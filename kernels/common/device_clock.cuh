// The GPU's global nanosecond timer, for kernels that wait with a deadline (the stream latch,
// spin_for, the Hopper ladder levels' mbarrier waits). It ticks coarsely (about a microsecond):
// good for timeouts and spins, not for timing short code.
#pragma once
#include <cstdint>

namespace triaudit::kernels {

__device__ inline std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace triaudit::kernels
