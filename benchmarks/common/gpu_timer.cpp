#include "gpu_timer.hpp"

#include <chrono>

#include "../../kernels/common/l2_flush.cuh"

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

GpuTimer::GpuTimer(cudaStream_t stream, const L2Flusher* flusher) : stream_(stream), flusher_(flusher) {}

GpuTimer::Region GpuTimer::region(benchmark::State& state, int ops, StreamLatch* latch) {
  check();
  if (ops < 1) throw Error("GpuTimer::region: ops must be >= 1");
  if (latch != nullptr && ops > StreamLatch::kMaxQueuedOps) throw Error("GpuTimer::region: too many ops behind a latch");
  if (flusher_ != nullptr) flusher_->flush(stream_);
  if (latch != nullptr) latch->hold(stream_);
  start_.record(stream_);
  return Region(*this, state, ops, latch);
}

void GpuTimer::check() const {
  if (!deferred_error_.empty()) throw Error(deferred_error_);
}

GpuTimer::Region::Region(GpuTimer& timer, benchmark::State& state, int ops, StreamLatch* latch)
    : timer_(timer), latch_(latch), state_(state), ops_(ops), uncaught_(std::uncaught_exceptions()) {}

GpuTimer::Region::~Region() {
  if (std::uncaught_exceptions() > uncaught_) {  // unwinding: the case is failing anyway
    if (latch_ != nullptr) latch_->release();
    return;
  }
  try {
    timer_.stop_.record(timer_.stream_);
    if (latch_ != nullptr) latch_->release();
    timer_.stop_.synchronize();
    const double t = Event::seconds_between(timer_.start_, timer_.stop_);
    timer_.total_seconds_ += t;
    timer_.total_ops_ += ops_;
    state_.SetIterationTime(t / static_cast<double>(ops_));
    if (latch_ != nullptr) latch_->check();
  } catch (const std::exception& e) {
    if (latch_ != nullptr) latch_->release();
    if (timer_.deferred_error_.empty()) timer_.deferred_error_ = e.what();
    state_.SetIterationTime(0.0);
  }
}

}  // namespace triaudit

namespace triaudit {

double HostTimer::now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

HostTimer::Region::Region(HostTimer& t, benchmark::State& state, int ops)
    : timer_(t), state_(state), ops_(ops < 1 ? 1 : ops), uncaught_(std::uncaught_exceptions()), start_(now()) {}

HostTimer::Region::~Region() {
  if (std::uncaught_exceptions() > uncaught_) return;
  const double t = now() - start_;
  timer_.total_seconds_ += t;
  timer_.total_ops_ += ops_;
  state_.SetIterationTime(t / static_cast<double>(ops_));
}

}  // namespace triaudit
