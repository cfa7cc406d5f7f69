// One GPU-to-GPU copy kind at one size between an ordered pair: the buffers at both ends, the copy
// itself on the right device's stream, and the check that every word arrived. The copy is issued
// by the source for ce, sm_write and staged, by the destination for sm_read and ce_read (the side whose stream
// times it). A bidirectional copy at both ends holds a source and a destination of twice the size:
// the measured direction moves `bytes`, the interfering one, issued by the other side on its own
// stream, twice as much (nvbandwidth's method), so it runs for the whole measured copy.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "cuda_raii.hpp"
#include "p2p_catalogue.hpp"
#include "verify.hpp"

namespace triaudit {

// Makes `device` current for its scope, and restores the one before.
class PairRunner {
 public:
  // Allocates on both devices and fills the source(s); peer access must already be enabled both
  // ways (except for staged copies, which go through pinned host memory).
  PairRunner(P2pKind kind, int src, int dst, std::uint64_t bytes);
  ~PairRunner();
  PairRunner(const PairRunner&) = delete;
  PairRunner& operator=(const PairRunner&) = delete;

  const P2pKind& kind() const { return kind_; }
  int src() const { return src_; }
  int dst() const { return dst_; }
  std::uint64_t bytes() const { return bytes_; }

  // The device and stream that time the copy in one direction (forward: src -> dst). Only bidir
  // copies are timed in reverse.
  int timing_device(bool forward) const;
  cudaStream_t timing_stream(bool forward) const;

  // Overwrites the destination(s) so a copy that moved nothing cannot pass.
  void poison();
  // Queues one operation: the copy in direction `forward`, and for bidir the interfering copy the
  // other way, forked from the timing stream so both start together.
  void enqueue(bool forward);
  // Bidir, before a region: the timing stream waits for the last interfering copy.
  void join(bool forward);
  // The destination(s) against the pattern: every word, or every stride-th and the last.
  VerifyResult verify(std::uint64_t stride = 1);

 private:
  struct End;
  End& end(bool source) const;
  End& issuer(bool forward) const;  // who issues the copy from (forward ? src : dst)
  void copy(End& from, End& to, std::uint64_t bytes, End& by);

  P2pKind kind_;
  int src_, dst_;
  std::uint64_t bytes_;
  std::unique_ptr<End> src_end_, dst_end_;
  PinnedBuffer<std::uint32_t> staging_;  // staged: the host memory the copy passes through
};

// The pattern seeds: GPU g's source holds pattern_word(kSeedP2p + g, i).
constexpr std::uint64_t kSeedP2p = 301;

}  // namespace triaudit
