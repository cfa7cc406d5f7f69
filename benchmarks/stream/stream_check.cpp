#include "stream_check.hpp"

#include <limits>
#include <thread>
#include <vector>

#include "common/fill.cuh"
#include "cuda_check.hpp"
#include "stream/dot_check.hpp"
#include "stream/stream_reference.hpp"

namespace triaudit {
namespace {

void* output_of(StreamOp op, const kernels::StreamArrays& x) {
  switch (stream_output_array(op)) {
    case 'a':
      return x.a;
    case 'b':
      return x.b;
    case 'c':
      return x.c;
    default:
      return nullptr;
  }
}

// The per-block FP64 reference of a dot product, computed once per shape of the tree.
template <typename T>
const DotBlocks& dot_blocks_for(const DotTree& t) {
  static DotTree cached_tree{};
  static DotBlocks cached;
  if (cached_tree.n != t.n || cached_tree.blocks != t.blocks || cached_tree.threads != t.threads ||
      cached_tree.width != t.width || cached.sum.empty()) {
    cached = dot_block_reference<T>(t);
    cached_tree = t;
  }
  return cached;
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

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
VerifyResult stream_verify(StreamOp op, const kernels::StreamArrays& x, std::uint64_t n, kernels::StreamLaunch launch,
                           cudaStream_t stream, std::uint64_t stride) {
  TRIAUDIT_CUDA(cudaStreamSynchronize(stream));
  if (op == StreamOp::Dot) {
    // Every block's partial against the FP64 sum of the elements it visits, then the fold
    // (kernels/stream/dot_check.hpp): a lost block cannot hide inside one loose bound.
    std::vector<T> partials(launch.blocks);
    T got = 0;
    TRIAUDIT_CUDA(cudaMemcpy(partials.data(), x.partial, partials.size() * sizeof(T), cudaMemcpyDeviceToHost));
    TRIAUDIT_CUDA(cudaMemcpy(&got, x.result, sizeof(T), cudaMemcpyDeviceToHost));
    const bool vec = aligned16(x.a) && aligned16(x.b) && aligned16(x.c);  // as stream_run chooses
    const DotTree tree{n, launch.blocks, launch.threads, vec ? 16u / static_cast<unsigned>(sizeof(T)) : 1u};
    const DotVerdict d = verify_dot<T>(partials, got, dot_blocks_for<T>(tree), launch.threads);
    VerifyResult r;
    r.checked = launch.blocks + 1;
    if (!d.ok) {
      r.wrong = 1;
      r.detail = d.message;
    }
    return r;
  }
  if (stride <= 1) {
    std::vector<T> host(n);
    TRIAUDIT_CUDA(cudaMemcpy(host.data(), output_of(op, x), n * sizeof(T), cudaMemcpyDeviceToHost));
    return verify_elements(
        host.data(), n, [op](std::uint64_t i) { return stream_expected<T>(op, i); }, [](std::uint64_t) { return 0.0; },
        1);
  }
  // A sample: only the sampled elements cross to the host (one strided copy, plus the last
  // element), not the whole array (1 GiB for the sustained triad, between repetitions).
  const std::vector<std::uint64_t> at = sampled_indices(n, stride);
  std::vector<T> got(at.size());
  const auto* out = static_cast<const unsigned char*>(output_of(op, x));
  const std::size_t strided = at.size() - (n > 0 && (n - 1) % stride != 0 ? 1 : 0);
  TRIAUDIT_CUDA(
      cudaMemcpy2D(got.data(), sizeof(T), out, stride * sizeof(T), sizeof(T), strided, cudaMemcpyDeviceToHost));
  if (strided < at.size())
    TRIAUDIT_CUDA(cudaMemcpy(&got.back(), out + (n - 1) * sizeof(T), sizeof(T), cudaMemcpyDeviceToHost));
  VerifyResult r = verify_elements(
      got.data(), got.size(), [&](std::uint64_t k) { return stream_expected<T>(op, at[k]); },
      [](std::uint64_t) { return 0.0; }, 1);
  if (r.wrong > 0) r.first_wrong = at[r.first_wrong];
  return r;
}

template void stream_prepare<float>(StreamOp, const kernels::StreamArrays&, std::uint64_t, cudaStream_t);
template void stream_prepare<double>(StreamOp, const kernels::StreamArrays&, std::uint64_t, cudaStream_t);
template VerifyResult stream_verify<float>(StreamOp, const kernels::StreamArrays&, std::uint64_t, kernels::StreamLaunch,
                                           cudaStream_t, std::uint64_t);
template VerifyResult stream_verify<double>(StreamOp, const kernels::StreamArrays&, std::uint64_t,
                                            kernels::StreamLaunch, cudaStream_t, std::uint64_t);

}  // namespace triaudit
