// Reference for the STREAM kernels: the expected value of every output element, computed
// independently from the same deterministic inputs, and the tolerance each op allows. Host and
// device: the host tests it, the device checks whole outputs with it (stream_verify.cuh).
// copy, scale and add are single IEEE operations: exact. Triad is one fused multiply-add on
// both sides: exact. Dot sums in a different order: bounded by the rounding error of the
// device's summation tree, block by block (dot_check.hpp).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "common/host_device.hpp"
#include "common/random_values.hpp"
#include "stream_ops.hpp"

namespace triaudit {

// One rounding of a * b + c: the device's fma and the host's std::fma are the same IEEE operation.
template <typename T>
TRIAUDIT_HD T fused_multiply_add(T a, T b, T c) {
#if defined(__CUDA_ARCH__)
  return fma(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

template <typename T>
TRIAUDIT_HD T stream_input(char array, std::uint64_t i) {
  const std::uint64_t seed = array == 'a' ? kSeedA : array == 'b' ? kSeedB : kSeedC;
  return random_pm1<T>(seed, i);
}

// Expected value of output element i of `op` (not for Dot: NaN).
template <typename T>
TRIAUDIT_HD T stream_expected(StreamOp op, std::uint64_t i) {
  const T s = static_cast<T>(kStreamScalar);
  switch (op) {
    case StreamOp::Copy:
      return stream_input<T>('a', i);
    case StreamOp::Scale:
      return s * stream_input<T>('c', i);
    case StreamOp::Add:
      return stream_input<T>('a', i) + stream_input<T>('b', i);
    case StreamOp::Triad:
      return fused_multiply_add(s, stream_input<T>('c', i), stream_input<T>('b', i));
    case StreamOp::Dot:
      break;
  }
  return static_cast<T>(NAN);
}

}  // namespace triaudit
