// Inputs whose collective result is exactly predictable, and the value every output element must
// then hold, for every NCCL collective triaudit measures. Shared by the device fill/check kernels
// (pattern.cu) and the host (the CPU tests check it against each collective's definition).
//
// Reductions (allreduce, reduce_scatter) sum small integers: exact in FP16, BF16 and FP32 whatever
// the reduction order. Copies (allgather, alltoall, broadcast) move integers from -256 to 255 that
// differ from rank to rank at the same index and from element to element, so a block that lands in
// the wrong place, or shifted, is caught. Every value is an integer each element type holds exactly,
// so the check compares for equality.
#pragma once
#include <cstdint>

#include "common/host_device.hpp"
#include "common/random_values.hpp"

namespace triaudit {

// |value| <= amplitude and ranks x amplitude <= 256: every partial sum is an integer BF16 holds.
TRIAUDIT_HD inline int allreduce_amplitude_for(int ranks) {
  const int a = 256 / (ranks > 0 ? ranks : 1);
  return a < 1 ? 1 : (a > 8 ? 8 : a);
}

TRIAUDIT_HD inline int allreduce_value(int rank, std::uint64_t i, int ranks) {
  const int amp = allreduce_amplitude_for(ranks);
  const std::uint64_t h =
      (i * 2654435761ULL + static_cast<std::uint64_t>(rank) * 40503ULL) % static_cast<std::uint64_t>(2 * amp + 1);
  return static_cast<int>(h) - amp;
}

TRIAUDIT_HD inline int allreduce_sum(std::uint64_t i, int ranks) {
  int s = 0;
  for (int r = 0; r < ranks; ++r) s += allreduce_value(r, i, ranks);
  return s;
}

// What a copy moves: 512 distinct integers (-256 .. 255, exact in BF16, FP16, FP32). At one index
// every rank's value differs (for up to 512 ranks); along a rank's buffer the values are a hash of
// the index, so a shifted block matches in about 1 element of 512.
constexpr int kCopyValues = 512;
TRIAUDIT_HD inline int copy_value(int rank, std::uint64_t i) {
  const auto h = static_cast<std::uint32_t>(mix64(i) >> 40);
  return static_cast<int>((h + static_cast<std::uint32_t>(rank)) % kCopyValues) - kCopyValues / 2;
}

// Where output element k of a rank takes its value from, per collective:
//   allreduce       the sum over ranks of input k                        kSumOfRanks
//   reduce_scatter  the sum over ranks of input (my rank) x block + k    kSumOfRanks, from_my_block
//   allgather       input k % block of rank k / block                    kBlockOwner
//   alltoall        input (my rank) x block + k % block of rank k / block  kBlockOwner, from_my_block
//   broadcast       input k of the root                                  kRoot
enum class OutputSource : int { kSumOfRanks = 0, kRoot = 1, kBlockOwner = 2 };
struct OutputRule {
  OutputSource source = OutputSource::kSumOfRanks;
  bool from_my_block = false;  // the source index starts at (my rank) x block
};

// One case's rule with its numbers: block is the element count each NCCL call is given (nccl-tests'
// "count" column), ranks the communicator's size.
struct OutputLayout {
  OutputRule rule;
  std::uint64_t block = 1;
  int ranks = 1;
  int root = 0;
};

// Input element i of rank r: what every rank's send buffer holds (broadcast reads the root's).
TRIAUDIT_HD inline int input_value(const OutputLayout& l, int rank, std::uint64_t i) {
  return l.rule.source == OutputSource::kSumOfRanks ? allreduce_value(rank, i, l.ranks) : copy_value(rank, i);
}

// The value output element k of rank r must hold after the collective.
TRIAUDIT_HD inline int expected_value(const OutputLayout& l, int rank, std::uint64_t k) {
  const std::uint64_t b = l.block > 0 ? l.block : 1;
  const std::uint64_t index = (l.rule.from_my_block ? static_cast<std::uint64_t>(rank) * b : 0) + k % b;
  switch (l.rule.source) {
    case OutputSource::kSumOfRanks:
      return allreduce_sum(index, l.ranks);
    case OutputSource::kRoot:
      return copy_value(l.root, index);
    case OutputSource::kBlockOwner:
    default:
      return copy_value(static_cast<int>(k / b), index);
  }
}

}  // namespace triaudit
