// The five STREAM operations, their byte accounting and their exact definitions, shared by the
// device kernels, the host reference and the benchmark. Following BabelStream's choice of
// arrays (a, b, c) and scalar, but each operation writes an array it does not read, so running
// it any number of times leaves a result that depends only on the inputs: verifiable after
// timing.
//   copy:  c = a             2 arrays
//   scale: b = s * c         2 arrays
//   add:   c = a + b         3 arrays
//   triad: a = b + s * c     3 arrays
//   dot:   sum(a * b)        2 arrays
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace triaudit {

enum class StreamOp { Copy, Scale, Add, Triad, Dot };

constexpr std::array<StreamOp, 5> kStreamOps = {StreamOp::Copy, StreamOp::Scale, StreamOp::Add, StreamOp::Triad,
                                                StreamOp::Dot};

// BabelStream's scalar.
constexpr double kStreamScalar = 0.4;

// Seeds of the inputs a, b, c (random_pm1): fixed, so every run sees the same data.
constexpr std::uint64_t kSeedA = 1, kSeedB = 2, kSeedC = 3;

inline const char* stream_op_name(StreamOp op) {
  switch (op) {
    case StreamOp::Copy:
      return "copy";
    case StreamOp::Scale:
      return "scale";
    case StreamOp::Add:
      return "add";
    case StreamOp::Triad:
      return "triad";
    case StreamOp::Dot:
      return "dot";
  }
  return "?";
}

// Arrays read plus arrays written per element: the STREAM / BabelStream byte convention.
constexpr int stream_arrays_touched(StreamOp op) { return (op == StreamOp::Add || op == StreamOp::Triad) ? 3 : 2; }

// Bytes one operation moves on arrays of `n` elements of `elem_bytes` each.
constexpr std::uint64_t stream_bytes_moved(StreamOp op, std::uint64_t n, std::uint64_t elem_bytes) {
  return static_cast<std::uint64_t>(stream_arrays_touched(op)) * n * elem_bytes;
}

// Arrays that must be allocated (always a, b, c: each op reads or writes a subset).
constexpr int kStreamArraysAllocated = 3;

// Whether a case's figure is a fraction of the DRAM peak: only where its data comes from DRAM.
// An L2-resident case (the hot 4 MiB triad) runs at L2 speed and would read above 1.
constexpr bool stream_peak_fraction_applies(std::uint64_t touched_bytes, std::uint64_t l2_bytes) {
  return l2_bytes > 0 && touched_bytes > l2_bytes;
}

// Whether a cold case's regions need an L2 flush between them. Each operation of a burst case
// starts from a flushed L2; a sustained window over arrays of at least 3x L2 leaves nothing of one
// triad in L2 for the next, and a flush would be load the window does not count.
constexpr bool stream_flush_between_regions(bool cold, bool sustained, std::uint64_t touched_bytes,
                                            std::uint64_t l2_bytes) {
  return cold && !(sustained && touched_bytes >= 3 * l2_bytes);
}

// Which array holds the op's output: 'a', 'b' or 'c' (dot: none, '-').
constexpr char stream_output_array(StreamOp op) {
  switch (op) {
    case StreamOp::Copy:
      return 'c';
    case StreamOp::Scale:
      return 'b';
    case StreamOp::Add:
      return 'c';
    case StreamOp::Triad:
      return 'a';
    case StreamOp::Dot:
      return '-';
  }
  return '-';
}

}  // namespace triaudit
