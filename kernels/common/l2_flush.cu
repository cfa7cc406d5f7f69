#include "l2_flush.cuh"

namespace triaudit::kernels {
namespace {
__global__ void read_through_l2_kernel(const uint4* p, std::size_t n, unsigned* sink) {
  unsigned acc = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}
}  // namespace

void read_through_l2(const void* buffer, std::size_t bytes, unsigned* sink, cudaStream_t stream) {
  const std::size_t n = bytes / sizeof(uint4);
  read_through_l2_kernel<<<1024, 256, 0, stream>>>(static_cast<const uint4*>(buffer), n, sink);
}

}  // namespace triaudit::kernels
