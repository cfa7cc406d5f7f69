#include "gpu_timer.hpp"

#include <chrono>

#include "common/l2_flush.cuh"

namespace triaudit {

// Three times the L2: the cache's replacement is not strict LRU, so one pass of exactly its
// size would leave some lines of the previous data behind.
L2Flusher::L2Flusher(std::size_t l2_bytes) : buffer_(3 * (l2_bytes > 0 ? l2_bytes : (64u << 20))), sink_(1) {
  TRIAUDIT_CUDA(cudaMemset(buffer_.data(), 0, buffer_.bytes()));
  TRIAUDIT_CUDA(cudaMemset(sink_.data(), 0, sizeof(unsigned)));
  TRIAUDIT_CUDA(cudaDeviceSynchronize());
}

void L2Flusher::flush(cudaStream_t stream) const {
  kernels::read_through_l2(buffer_.data(), buffer_.bytes(), sink_.data(), stream);
  TRIAUDIT_CUDA_LAUNCH();
}

}  // namespace triaudit

namespace triaudit {

double HostTimer::now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace triaudit
