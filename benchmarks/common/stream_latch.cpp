#include "stream_latch.hpp"

#include <atomic>
#include <cstdlib>
#include <string>

#include "common/spin.cuh"

namespace triaudit {

constexpr std::uint64_t kHoldTimeoutNs = 10ULL * 1000 * 1000 * 1000;

StreamLatch::StreamLatch() : flag_(1, cudaHostAllocMapped), timed_out_(1, cudaHostAllocMapped) {
  flag_[0] = 1;
  timed_out_[0] = 0;
  TRIAUDIT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_dev_), flag_.data(), 0));
  TRIAUDIT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&timed_out_dev_), timed_out_.data(), 0));
}

StreamLatch::~StreamLatch() { release(); }

namespace {
bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

std::atomic<bool>& broken_flag() {
  static std::atomic<bool> b{false};
  return b;
}
}  // namespace

void StreamLatch::mark_broken() { broken_flag() = true; }
bool StreamLatch::broken() { return broken_flag(); }

std::string StreamLatch::latch_label() {
  return broken() ? "stream latch off (a hold timed out earlier in this process): launch gaps are timed" : "";
}

const char* StreamLatch::disabled_reason() {
  if (broken()) return "a hold timed out earlier in this process";
  if (env_set("TRIAUDIT_NO_LATCH")) return "TRIAUDIT_NO_LATCH";
  if (env_set("CUDA_LAUNCH_BLOCKING")) return "CUDA_LAUNCH_BLOCKING";
  return "";
}

bool StreamLatch::disabled() { return *disabled_reason() != '\0'; }

void StreamLatch::hold(cudaStream_t stream) {
  if (disabled()) return;
  if (!held_) {
    // A new hold starts with a clean verdict: an earlier hold's timeout is not this one's.
    reinterpret_cast<volatile int*>(timed_out_.data())[0] = 0;
    reinterpret_cast<volatile int*>(flag_.data())[0] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    held_ = true;
  }
  kernels::hold_stream(flag_dev_, kHoldTimeoutNs, timed_out_dev_, stream);
  TRIAUDIT_CUDA_LAUNCH();
}

void StreamLatch::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  reinterpret_cast<volatile int*>(flag_.data())[0] = 1;
  held_ = false;
}

void StreamLatch::check() const {
  if (reinterpret_cast<volatile int*>(timed_out_.data())[0] != 0) {
    mark_broken();
    throw Error(
        "a held stream waited longer than 10 s for its release: the timing is void; the latch is off for the "
        "rest of this process (later cases time launch gaps and say so)");
  }
}

}  // namespace triaudit
