#include "common/grid_stride.cuh"
#include "zero_copy.cuh"

namespace triaudit::kernels {
namespace {
// 16-byte copies, 4 in flight per thread: the SM copy is measured against the copy engine, so
// it should not be held back by one outstanding load per thread.
__global__ void copy16_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n) {
  grid_stride(n, [&](std::size_t i) { return src[i]; }, [&](std::size_t i, uint4 v) { dst[i] = v; });
}

unsigned grid_for(std::size_t n) {
  int dev = 0, sms = 1, per_sm = 1;
  (void)cudaGetDevice(&dev);
  (void)cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  (void)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, copy16_kernel, 256, 0);
  const std::size_t full = static_cast<std::size_t>(sms) * static_cast<std::size_t>(per_sm > 0 ? per_sm : 1);
  const std::size_t needed = (n + 255) / 256;
  return static_cast<unsigned>(needed < full ? (needed == 0 ? 1 : needed) : full);
}
}  // namespace

void zero_copy_read(const void* host_mapped, void* device_dst, std::size_t bytes, cudaStream_t stream) {
  const std::size_t n = bytes / 16;
  copy16_kernel<<<grid_for(n), 256, 0, stream>>>(static_cast<const uint4*>(host_mapped),
                                                 static_cast<uint4*>(device_dst), n);
}

void sm_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
  const std::size_t n = bytes / 16;
  copy16_kernel<<<grid_for(n), 256, 0, stream>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst), n);
}

}  // namespace triaudit::kernels
