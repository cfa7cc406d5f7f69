#include "copy_runner.hpp"

#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/fill.cuh"
#include "common/random_values.hpp"
#include "cuda_check.hpp"
#include "movement/zero_copy.cuh"

namespace triaudit {

// malloc'd, page-aligned memory pinned with cudaHostRegister.
class HostRegistration {
 public:
  explicit HostRegistration(std::uint64_t bytes) {
    if (posix_memalign(&ptr_, 4096, bytes) != 0)
      throw Error("posix_memalign failed for " + std::to_string(bytes) + " bytes");
    const cudaError_t e = cudaHostRegister(ptr_, bytes, cudaHostRegisterDefault);
    if (e != cudaSuccess) {
      std::free(ptr_);
      TRIAUDIT_CUDA(e);
    }
  }
  ~HostRegistration() {
    (void)cudaHostUnregister(ptr_);
    std::free(ptr_);
  }
  std::uint32_t* data() const { return static_cast<std::uint32_t*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

namespace {
void fill_host_pattern(std::uint32_t* p, std::uint64_t n, std::uint64_t seed) {
  const unsigned workers = std::max(1u, std::min(std::thread::hardware_concurrency(), 32u));
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w)
    threads.emplace_back([=] {
      for (std::uint64_t i = n * w / workers; i < n * (w + 1) / workers; ++i) p[i] = pattern_word(seed, i);
    });
  for (auto& t : threads) t.join();
}

VerifyResult check_words(const std::uint32_t* p, std::uint64_t n, std::uint64_t seed, std::uint64_t stride) {
  return verify_elements(
      p, n, [seed](std::uint64_t i) { return static_cast<double>(pattern_word(seed, i)); },
      [](std::uint64_t) { return 0.0; }, stride);
}

}  // namespace

CopyRunner::CopyRunner(CopyKind kind, std::uint64_t bytes, int sets)
    : kind_(std::move(kind)),
      bytes_(bytes),
      words_(bytes / 4),
      sets_(kind_.direction == "d2d" ? std::max(1, sets) : 1),
      fork_(cudaEventDisableTiming),
      join_(cudaEventDisableTiming) {
  if (bytes % 16 != 0 || bytes == 0) throw Error("copy size must be a positive multiple of 16 bytes");
  const std::string& m = kind_.memory;
  if (kind_.direction == "bidir") {  // pinned, every buffer large enough for the interfering (2x) copy
    pinned_ = PinnedBuffer<std::uint32_t>(2 * words_);
    pinned_second_ = PinnedBuffer<std::uint32_t>(2 * words_);
    dev_ = DeviceBuffer<std::uint32_t>(2 * words_);
    dev_second_ = DeviceBuffer<std::uint32_t>(2 * words_);
  } else {
    if (m == "pageable") pageable_.resize(words_);
    if (m == "pinned") pinned_ = PinnedBuffer<std::uint32_t>(words_);
    if (m == "write_combined") pinned_ = PinnedBuffer<std::uint32_t>(words_, cudaHostAllocWriteCombined);
    if (m == "zero_copy") pinned_ = PinnedBuffer<std::uint32_t>(words_, cudaHostAllocMapped);
    if (m == "registered") registered_ = std::make_unique<HostRegistration>(bytes);
    dev_ = DeviceBuffer<std::uint32_t>(words_ * static_cast<std::uint64_t>(sets_));
  }
  if (kind_.direction == "d2d") dev_second_ = DeviceBuffer<std::uint32_t>(words_ * static_cast<std::uint64_t>(sets_));

  // Sources: host memory for h2d and bidir's first direction, device memory otherwise.
  const std::uint64_t source_words = kind_.direction == "bidir" ? 2 * words_ : words_;
  if (kind_.direction == "h2d" || kind_.direction == "bidir") fill_host_pattern(host_ptr(), source_words, kSeedCopy);
  if (kind_.direction == "d2h") kernels::fill_pattern(dev_.data(), words_, kSeedCopy, nullptr);
  // A device copy's sets lie side by side: one pattern over all of them, each set's copy keeping
  // its offset, so every destination word is checked against the same pattern.
  if (kind_.direction == "d2d")
    kernels::fill_pattern(dev_second_.data(), words_ * static_cast<std::uint64_t>(sets_), kSeedCopy, nullptr);
  if (kind_.direction == "bidir") kernels::fill_pattern(dev_second_.data(), source_words, kSeedCopy + 1, nullptr);
  TRIAUDIT_CUDA_LAUNCH();
  TRIAUDIT_CUDA(cudaDeviceSynchronize());
}

CopyRunner::~CopyRunner() = default;

std::uint32_t* CopyRunner::host_ptr() const {
  if (!pageable_.empty()) return const_cast<std::uint32_t*>(pageable_.data());
  if (registered_) return registered_->data();
  return pinned_.data();
}

void CopyRunner::poison() {
  const std::string& d = kind_.direction;
  const std::uint64_t dest_bytes = d == "bidir" ? 2 * bytes_ : bytes_ * static_cast<std::uint64_t>(sets_);
  if (d == "h2d" || d == "d2d" || d == "bidir") TRIAUDIT_CUDA(cudaMemset(dev_.data(), 0xA5, dest_bytes));
  if (d == "d2h") std::memset(host_ptr(), 0xA5, bytes_);
  if (d == "bidir") std::memset(pinned_second_.data(), 0xA5, dest_bytes);
  TRIAUDIT_CUDA(cudaDeviceSynchronize());
}

void CopyRunner::enqueue_bidir(cudaStream_t measured, cudaStream_t interfering, bool measure_h2d) {
  if (kind_.direction != "bidir") throw Error("enqueue_bidir: not a bidirectional copy");
  fork_.record(measured);
  TRIAUDIT_CUDA(cudaStreamWaitEvent(interfering, fork_.get(), 0));
  const std::uint64_t big = bidir_interfering_bytes(bytes_);
  if (measure_h2d) {
    TRIAUDIT_CUDA(cudaMemcpyAsync(pinned_second_.data(), dev_second_.data(), big, cudaMemcpyDeviceToHost, interfering));
    TRIAUDIT_CUDA(cudaMemcpyAsync(dev_.data(), pinned_.data(), bytes_, cudaMemcpyHostToDevice, measured));
  } else {
    TRIAUDIT_CUDA(cudaMemcpyAsync(dev_.data(), pinned_.data(), big, cudaMemcpyHostToDevice, interfering));
    TRIAUDIT_CUDA(cudaMemcpyAsync(pinned_second_.data(), dev_second_.data(), bytes_, cudaMemcpyDeviceToHost, measured));
  }
  join_.record(interfering);
}

void CopyRunner::join(cudaStream_t measured, cudaStream_t) {
  TRIAUDIT_CUDA(cudaStreamWaitEvent(measured, join_.get(), 0));
}

void CopyRunner::enqueue(cudaStream_t s1) {
  const std::string& d = kind_.direction;
  const std::string& m = kind_.memory;
  if (d == "h2d" && m == "zero_copy") {
    void* mapped = nullptr;
    TRIAUDIT_CUDA(cudaHostGetDevicePointer(&mapped, pinned_.data(), 0));
    kernels::zero_copy_read(mapped, dev_.data(), bytes_, s1);
    TRIAUDIT_CUDA_LAUNCH();
  } else if (d == "h2d") {
    TRIAUDIT_CUDA(cudaMemcpyAsync(dev_.data(), host_ptr(), bytes_, cudaMemcpyHostToDevice, s1));
  } else if (d == "d2h") {
    TRIAUDIT_CUDA(cudaMemcpyAsync(host_ptr(), dev_.data(), bytes_, cudaMemcpyDeviceToHost, s1));
  } else if (d == "d2d") {
    const std::uint64_t at = static_cast<std::uint64_t>(next_set_) * words_;
    next_set_ = (next_set_ + 1) % sets_;
    if (m == "sm_kernel") {
      kernels::sm_copy(dev_second_.data() + at, dev_.data() + at, bytes_, s1);
      TRIAUDIT_CUDA_LAUNCH();
    } else {
      TRIAUDIT_CUDA(cudaMemcpyAsync(dev_.data() + at, dev_second_.data() + at, bytes_, cudaMemcpyDeviceToDevice, s1));
    }
  } else {
    throw Error("unknown copy kind " + d + "/" + m);
  }
}

void CopyRunner::run_synchronous() {
  const std::string& d = kind_.direction;
  if (d == "h2d")
    TRIAUDIT_CUDA(cudaMemcpy(dev_.data(), host_ptr(), bytes_, cudaMemcpyHostToDevice));
  else if (d == "d2h")
    TRIAUDIT_CUDA(cudaMemcpy(host_ptr(), dev_.data(), bytes_, cudaMemcpyDeviceToHost));
  else
    throw Error("run_synchronous: only host copies");
}

VerifyResult CopyRunner::verify(std::uint64_t stride) {
  TRIAUDIT_CUDA(cudaDeviceSynchronize());
  const std::string& d = kind_.direction;
  if (d == "d2h") return check_words(host_ptr(), words_, kSeedCopy, stride);
  // Bidirectional: both directions ran at full size (each was the interfering copy once). A device
  // copy of several sets: every set's destination, side by side.
  const std::uint64_t words = d == "bidir" ? 2 * words_ : words_ * static_cast<std::uint64_t>(sets_);
  std::vector<std::uint32_t> back(words);
  TRIAUDIT_CUDA(cudaMemcpy(back.data(), dev_.data(), words * 4, cudaMemcpyDeviceToHost));
  VerifyResult r = check_words(back.data(), words, kSeedCopy, stride);
  if (d == "bidir") r = combine_results(r, check_words(pinned_second_.data(), words, kSeedCopy + 1, stride));
  return r;
}

}  // namespace triaudit
