// One copy kind at one size: its host and device buffers, the copy itself, and the check that
// every byte arrived. Shared by triaudit_memcpy and the device tests.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "cuda_raii.hpp"
#include "movement_catalogue.hpp"
#include "verify.hpp"

namespace triaudit {

class HostRegistration;

class CopyRunner {
 public:
  // Allocates what `kind` needs for `bytes` (a multiple of 16) and fills the source(s). A device
  // copy may have `sets` (source, destination) pairs, side by side, that its copies rotate through.
  CopyRunner(CopyKind kind, std::uint64_t bytes, int sets = 1);
  ~CopyRunner();
  CopyRunner(const CopyRunner&) = delete;
  CopyRunner& operator=(const CopyRunner&) = delete;

  const CopyKind& kind() const { return kind_; }
  std::uint64_t bytes() const { return bytes_; }
  int sets() const { return sets_; }

  // Overwrites the destination(s) so a copy that moved nothing cannot pass.
  void poison();
  // Queues one copy on `s` (not for bidir): the next set's, for a device copy of several sets.
  void enqueue(cudaStream_t s);
  // Bidirectional: the measured copy (host-to-device when `measure_h2d`, else device-to-host) on
  // `measured`, and the opposite direction, twice as large, on `interfering`, forked from
  // `measured` so both start together. The measured stream's events time the measured copy only
  // (nvbandwidth's per-direction method). join() makes `measured` wait for the interfering copy.
  void enqueue_bidir(cudaStream_t measured, cudaStream_t interfering, bool measure_h2d);
  void join(cudaStream_t measured, cudaStream_t interfering);
  // One copy, complete on return (pageable kinds).
  void run_synchronous();
  // The destination(s) against the pattern, every set's: every word, or every stride-th word and the last.
  VerifyResult verify(std::uint64_t stride = 1);

 private:
  std::uint32_t* host_ptr() const;
  CopyKind kind_;
  std::uint64_t bytes_, words_;
  int sets_ = 1, next_set_ = 0;
  std::vector<std::uint32_t> pageable_;
  PinnedBuffer<std::uint32_t> pinned_, pinned_second_;  // bidir: host source (2x) and host destination (2x)
  std::unique_ptr<HostRegistration> registered_;
  DeviceBuffer<std::uint32_t> dev_, dev_second_;  // bidir: device destination (2x) and source (2x)
  Event fork_, join_;
};

// The pattern seeds: sources hold pattern_word(kSeedCopy, i) (bidir's device-to-host source
// kSeedCopy + 1).
constexpr std::uint64_t kSeedCopy = 101;

}  // namespace triaudit
