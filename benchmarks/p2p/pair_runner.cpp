#include "pair_runner.hpp"

#include <vector>

#include "common/fill.cuh"
#include "common/random_values.hpp"
#include "cuda_check.hpp"
#include "p2p/p2p_copy.cuh"

namespace triaudit {

// One GPU of the pair: what it sends (out), what it receives (in), its stream, and the events
// that fork a bidirectional copy from it (fork) or report its interfering copy done (done).
struct PairRunner::End {
  int device;
  DeviceBuffer<std::uint32_t> out, in;
  Stream stream;
  Event fork{cudaEventDisableTiming}, done{cudaEventDisableTiming};
  End(int d, std::uint64_t out_words, std::uint64_t in_words) : device(d), out(out_words), in(in_words) {}
};

namespace {
std::uint64_t seed_of(int device) { return kSeedP2p + static_cast<std::uint64_t>(device); }

VerifyResult check_device_words(int device, const std::uint32_t* dev_ptr, std::uint64_t words, std::uint64_t seed,
                                std::uint64_t stride) {
  std::vector<std::uint32_t> back(words);
  {
    DeviceGuard g(device);
    TRIAUDIT_CUDA(cudaMemcpy(back.data(), dev_ptr, words * 4, cudaMemcpyDeviceToHost));
  }
  return verify_elements(
      back.data(), words, [seed](std::uint64_t i) { return static_cast<double>(pattern_word(seed, i)); },
      [](std::uint64_t) { return 0.0; }, stride);
}

}  // namespace

PairRunner::PairRunner(P2pKind kind, int src, int dst, std::uint64_t bytes)
    : kind_(std::move(kind)), src_(src), dst_(dst), bytes_(bytes) {
  if (bytes == 0 || bytes % 4 != 0) throw Error("p2p copy size must be a positive multiple of 4 bytes");
  if (kind_.test == "staged" && kind_.direction != "uni") throw Error("staged copies are one-directional");
  const std::uint64_t words = bytes / 4;
  const bool bidir = kind_.direction == "bidir";
  // uni: the source sends `words`, the destination receives them; bidir: each end sends and
  // receives twice that (the interfering copy).
  {
    DeviceGuard g(src);
    src_end_ = std::make_unique<End>(src, bidir ? 2 * words : words, bidir ? 2 * words : 0);
    kernels::fill_pattern(src_end_->out.data(), src_end_->out.size(), seed_of(src), nullptr);
    TRIAUDIT_CUDA_LAUNCH();
    TRIAUDIT_CUDA(cudaDeviceSynchronize());
  }
  {
    DeviceGuard g(dst);
    dst_end_ = std::make_unique<End>(dst, bidir ? 2 * words : 0, bidir ? 2 * words : words);
    if (bidir) {
      kernels::fill_pattern(dst_end_->out.data(), dst_end_->out.size(), seed_of(dst), nullptr);
      TRIAUDIT_CUDA_LAUNCH();
    }
    TRIAUDIT_CUDA(cudaDeviceSynchronize());
  }
  if (kind_.test == "staged") staging_ = PinnedBuffer<std::uint32_t>(words);
}

PairRunner::~PairRunner() = default;

PairRunner::End& PairRunner::end(bool source) const { return source ? *src_end_ : *dst_end_; }

PairRunner::End& PairRunner::issuer(bool forward) const {
  // sm_read and ce_read run on the receiving GPU; every other kind is issued by the sending one.
  const bool from_is_src = forward;
  return kind_.test == "sm_read" || kind_.test == "ce_read" ? end(!from_is_src) : end(from_is_src);
}

int PairRunner::timing_device(bool forward) const { return issuer(forward).device; }
cudaStream_t PairRunner::timing_stream(bool forward) const { return issuer(forward).stream; }

void PairRunner::copy(End& from, End& to, std::uint64_t bytes, End& by) {
  DeviceGuard g(by.device);
  if (kind_.test == "ce" || kind_.test == "ce_read") {
    TRIAUDIT_CUDA(cudaMemcpyPeerAsync(to.in.data(), to.device, from.out.data(), from.device, bytes, by.stream));
  } else if (kind_.test == "sm_read" || kind_.test == "sm_write") {
    kernels::p2p_copy(from.out.data(), to.in.data(), bytes, by.stream);
    TRIAUDIT_CUDA_LAUNCH();
  } else if (kind_.test == "staged") {
    // Source GPU -> pinned host memory on the source's stream, then host -> destination GPU on
    // the destination's stream; the source's stream waits for the second copy, so the next copy
    // does not overwrite the staging buffer while it is read (and the timing stream sees the end).
    TRIAUDIT_CUDA(cudaMemcpyAsync(staging_.data(), from.out.data(), bytes, cudaMemcpyDeviceToHost, from.stream));
    from.fork.record(from.stream);
    {
      DeviceGuard to_device(to.device);
      TRIAUDIT_CUDA(cudaStreamWaitEvent(to.stream, from.fork.get(), 0));
      TRIAUDIT_CUDA(cudaMemcpyAsync(to.in.data(), staging_.data(), bytes, cudaMemcpyHostToDevice, to.stream));
      to.done.record(to.stream);
    }
    TRIAUDIT_CUDA(cudaStreamWaitEvent(from.stream, to.done.get(), 0));
  } else {
    throw Error("unknown p2p copy test " + kind_.test);
  }
}

void PairRunner::enqueue(bool forward) {
  End& from = end(forward);
  End& to = end(!forward);
  End& measured = issuer(forward);
  if (kind_.direction != "bidir") {
    if (!forward) throw Error("only bidirectional copies are timed in reverse");
    copy(from, to, bytes_, measured);
    return;
  }
  End& interfering = issuer(!forward);
  {
    DeviceGuard g(measured.device);
    measured.fork.record(measured.stream);
  }
  {
    DeviceGuard g(interfering.device);
    TRIAUDIT_CUDA(cudaStreamWaitEvent(interfering.stream, measured.fork.get(), 0));
  }
  copy(to, from, 2 * bytes_, interfering);
  copy(from, to, bytes_, measured);
  DeviceGuard g(interfering.device);
  interfering.done.record(interfering.stream);
}

void PairRunner::join(bool forward) {
  if (kind_.direction != "bidir") return;
  End& measured = issuer(forward);
  DeviceGuard g(measured.device);
  TRIAUDIT_CUDA(cudaStreamWaitEvent(measured.stream, issuer(!forward).done.get(), 0));
}

void PairRunner::poison() {
  for (End* e : {src_end_.get(), dst_end_.get()}) {
    if (e->in.size() == 0) continue;
    DeviceGuard g(e->device);
    TRIAUDIT_CUDA(cudaMemset(e->in.data(), 0xA5, e->in.bytes()));
    TRIAUDIT_CUDA(cudaDeviceSynchronize());
  }
}

VerifyResult PairRunner::verify(std::uint64_t stride) {
  for (End* e : {src_end_.get(), dst_end_.get()}) {
    DeviceGuard g(e->device);
    TRIAUDIT_CUDA(cudaDeviceSynchronize());
  }
  // Bidirectional: both directions moved twice the size (each was the interfering copy once).
  VerifyResult r = check_device_words(dst_, dst_end_->in.data(), dst_end_->in.size(), seed_of(src_), stride);
  if (kind_.direction == "bidir")
    r = combine_results(r, check_device_words(src_, src_end_->in.data(), src_end_->in.size(), seed_of(dst_), stride));
  return r;
}

}  // namespace triaudit
