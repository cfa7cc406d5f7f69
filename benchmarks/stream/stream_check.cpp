#include "stream_check.hpp"

#include <limits>
#include <thread>
#include <vector>

#include "../common/cuda_check.hpp"
#include "common/fill.cuh"
#include "stream/stream_reference.hpp"

namespace triaudit {
namespace {

void* output_of(StreamOp op, const kernels::StreamArrays& x) {
  switch (stream_output_array(op)) {
    case 'a': return x.a;
    case 'b': return x.b;
    case 'c': return x.c;
    default: return nullptr;
  }
}

// The host reference of a long dot product, split over the host's cores.
template <typename T>
DotReference dot_reference_parallel(std::uint64_t n) {
  const unsigned workers = std::max(1u, std::min(std::thread::hardware_concurrency(), 64u));
  std::vector<DotReference> parts(workers);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w)
    threads.emplace_back([&, w] { parts[w] = stream_dot_reference<T>(n * w / workers, n * (w + 1) / workers); });
  for (auto& t : threads) t.join();
  DotReference total;
  for (const auto& p : parts) {
    total.sum += p.sum;
    total.abs_sum += p.abs_sum;
  }
  return total;
}

}  // namespace

template <typename T>
void stream_prepare(StreamOp op, const kernels::StreamArrays& x, std::uint64_t n, cudaStream_t stream) {
  kernels::fill_random(static_cast<T*>(x.a), n, kSeedA, stream);
  TRIAUDIT_CUDA_LAUNCH();
  kernels::fill_random(static_cast<T*>(x.b), n, kSeedB, stream);
  TRIAUDIT_CUDA_LAUNCH();
  kernels::fill_random(static_cast<T*>(x.c), n, kSeedC, stream);
  TRIAUDIT_CUDA_LAUNCH();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  if (void* out = output_of(op, x)) {
    kernels::fill_value(static_cast<T*>(out), n, nan, stream);
  } else {
    kernels::fill_value(static_cast<T*>(x.result), 1, nan, stream);
  }
  TRIAUDIT_CUDA_LAUNCH();
  TRIAUDIT_CUDA(cudaStreamSynchronize(stream));
}

template <typename T>
VerifyResult stream_verify(StreamOp op, const kernels::StreamArrays& x, std::uint64_t n,
                           kernels::StreamLaunch launch, cudaStream_t stream, std::uint64_t stride) {
  TRIAUDIT_CUDA(cudaStreamSynchronize(stream));
  if (op == StreamOp::Dot) {
    T got = 0;
    TRIAUDIT_CUDA(cudaMemcpy(&got, x.result, sizeof(T), cudaMemcpyDeviceToHost));
    const DotReference ref = dot_reference_parallel<T>(n);
    const double tol =
        dot_tolerance<T>(n, std::uint64_t{launch.blocks} * launch.threads, launch.blocks, ref.abs_sum);
    const double expected = static_cast<double>(ref.sum);
    return verify_elements(&got, 1, [&](std::uint64_t) { return expected; },
                           [&](std::uint64_t) { return tol; });
  }
  std::vector<T> host(n);
  TRIAUDIT_CUDA(cudaMemcpy(host.data(), output_of(op, x), n * sizeof(T), cudaMemcpyDeviceToHost));
  return verify_elements(host.data(), n, [op](std::uint64_t i) { return stream_expected<T>(op, i); },
                         [](std::uint64_t) { return 0.0; }, stride);
}

template void stream_prepare<float>(StreamOp, const kernels::StreamArrays&, std::uint64_t, cudaStream_t);
template void stream_prepare<double>(StreamOp, const kernels::StreamArrays&, std::uint64_t, cudaStream_t);
template VerifyResult stream_verify<float>(StreamOp, const kernels::StreamArrays&, std::uint64_t,
                                           kernels::StreamLaunch, cudaStream_t, std::uint64_t);
template VerifyResult stream_verify<double>(StreamOp, const kernels::StreamArrays&, std::uint64_t,
                                            kernels::StreamLaunch, cudaStream_t, std::uint64_t);

}  // namespace triaudit
