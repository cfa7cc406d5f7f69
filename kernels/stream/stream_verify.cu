#include <cstdint>

#include "common/grid_stride.cuh"
#include "stream_reference.hpp"
#include "stream_verify.cuh"

namespace triaudit::kernels {
namespace {

template <typename T>
__global__ void mismatch_kernel(StreamOp op, const T* __restrict__ out, std::uint64_t n, StreamMismatches* result) {
  unsigned long long wrong = 0, first = ~0ULL;
  for (std::uint64_t i = grid_thread_index(); i < n; i += grid_thread_count()) {
    const T got = out[i];
    if (!(got == stream_expected<T>(op, i))) {  // NaN fails
      if (wrong++ == 0) first = i;
    }
  }
  if (wrong > 0) {
    atomicAdd(&result->wrong, wrong);
    atomicMin(&result->first, first);
  }
}

}  // namespace

template <typename T>
void stream_count_mismatches(StreamOp op, const void* out, std::uint64_t n, StreamMismatches* result,
                             cudaStream_t stream) {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>(sms > 0 ? 8 * sms : 1024);
  mismatch_kernel<T><<<blocks, threads, 0, stream>>>(op, static_cast<const T*>(out), n, result);
}

template void stream_count_mismatches<float>(StreamOp, const void*, std::uint64_t, StreamMismatches*, cudaStream_t);
template void stream_count_mismatches<double>(StreamOp, const void*, std::uint64_t, StreamMismatches*, cudaStream_t);

}  // namespace triaudit::kernels
