// Timing building blocks: the L2 flush before a cold region, and the host clock. The measurement
// loop itself (warm-up, held regions, CUDA events, Google Benchmark's manual time) is measure.hpp.
#pragma once
#include <cstddef>

#include "cuda_raii.hpp"

namespace triaudit {

// Owns a buffer of a few times the L2 size and reads it through the cache before a cold region.
class L2Flusher {
 public:
  explicit L2Flusher(std::size_t l2_bytes);
  void flush(cudaStream_t stream) const;
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  DeviceBuffer<unsigned char> buffer_;
  DeviceBuffer<unsigned> sink_;
};

// The host clock, for work that is host-synchronous by nature (pageable copies, launch + sync):
// the caller makes sure the work has completed before it reads the clock again.
struct HostTimer {
  static double now();  // seconds, steady clock
};

}  // namespace triaudit
