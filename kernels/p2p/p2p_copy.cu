#include <cstdint>
#include <vector>

#include "common/grid_stride.cuh"
#include "p2p_copy.cuh"
#include "p2p_copy_split.hpp"

namespace triaudit::kernels {
namespace {

// The bulk in 16-byte vectors with 4 loads in flight per thread (grid_stride), then the word
// tail (the words after the last vector) by the first threads. A peer's memory is read or written
// with the same instructions as local memory: the link is crossed by whichever side is remote.
__global__ void p2p_copy16_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t vectors,
                                  const std::uint32_t* src_tail, std::uint32_t* dst_tail, unsigned tail_words) {
  grid_stride(vectors, [&](std::size_t i) { return src[i]; }, [&](std::size_t i, uint4 v) { dst[i] = v; });
  const std::size_t t = grid_thread_index();
  if (t < tail_words) dst_tail[t] = src_tail[t];
}

constexpr int kThreads = 256;

// One full wave of the current device, computed once per device (the latency cases launch a
// hundred copies per region).
std::size_t wave_blocks() {
  static std::vector<std::size_t> per_device;
  int dev = 0;
  (void)cudaGetDevice(&dev);
  if (per_device.size() <= static_cast<std::size_t>(dev)) per_device.resize(static_cast<std::size_t>(dev) + 1, 0);
  std::size_t& w = per_device[static_cast<std::size_t>(dev)];
  if (w == 0) {
    int sms = 1, per_sm = 1;
    (void)cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    (void)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, p2p_copy16_kernel, kThreads, 0);
    w = static_cast<std::size_t>(sms > 0 ? sms : 1) * static_cast<std::size_t>(per_sm > 0 ? per_sm : 1);
  }
  return w;
}

}  // namespace

void p2p_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
  const P2pCopySplit s = p2p_copy_split(bytes);
  const std::size_t needed = (s.vectors + kThreads - 1) / kThreads;
  const std::size_t wave = wave_blocks();
  const auto blocks = static_cast<unsigned>(needed == 0 ? 1 : (needed < wave ? needed : wave));
  p2p_copy16_kernel<<<blocks, kThreads, 0, stream>>>(
      static_cast<const uint4*>(src), static_cast<uint4*>(dst), s.vectors,
      static_cast<const std::uint32_t*>(src) + s.tail_offset_words,
      static_cast<std::uint32_t*>(dst) + s.tail_offset_words, static_cast<unsigned>(s.tail_words));
}

}  // namespace triaudit::kernels
