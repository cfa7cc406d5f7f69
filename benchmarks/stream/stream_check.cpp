#include "stream_check.hpp"

#include <limits>
#include <thread>
#include <vector>

#include "common/fill.cuh"
#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "stream/dot_check.hpp"
#include "stream/stream_reference.hpp"
#include "stream/stream_verify.cuh"

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
                           cudaStream_t stream) {
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
  // Every element, on the device: a count and the first wrong index come back, not the array.
  DeviceBuffer<kernels::StreamMismatches> found(1);
  TRIAUDIT_CUDA(cudaMemsetAsync(&found.data()->wrong, 0, sizeof(unsigned long long), stream));
  TRIAUDIT_CUDA(cudaMemsetAsync(&found.data()->first, 0xFF, sizeof(unsigned long long), stream));
  kernels::stream_count_mismatches<T>(op, output_of(op, x), n, found.data(), stream);
  TRIAUDIT_CUDA_LAUNCH();
  kernels::StreamMismatches m;
  TRIAUDIT_CUDA(cudaMemcpyAsync(&m, found.data(), sizeof m, cudaMemcpyDeviceToHost, stream));
  TRIAUDIT_CUDA(cudaStreamSynchronize(stream));
  VerifyResult r;
  r.checked = n;
  r.wrong = m.wrong;
  if (m.wrong > 0 && m.first < n) {
    T got{};
    const auto* out = static_cast<const unsigned char*>(output_of(op, x));
    TRIAUDIT_CUDA(cudaMemcpy(&got, out + m.first * sizeof(T), sizeof(T), cudaMemcpyDeviceToHost));
    r.first_wrong = m.first;
    r.got = static_cast<double>(got);
    r.expected = static_cast<double>(stream_expected<T>(op, m.first));
  }
  return r;
}

template void stream_prepare<float>(StreamOp, const kernels::StreamArrays&, std::uint64_t, cudaStream_t);
template void stream_prepare<double>(StreamOp, const kernels::StreamArrays&, std::uint64_t, cudaStream_t);
template VerifyResult stream_verify<float>(StreamOp, const kernels::StreamArrays&, std::uint64_t, kernels::StreamLaunch,
                                           cudaStream_t);
template VerifyResult stream_verify<double>(StreamOp, const kernels::StreamArrays&, std::uint64_t,
                                            kernels::StreamLaunch, cudaStream_t);

}  // namespace triaudit
