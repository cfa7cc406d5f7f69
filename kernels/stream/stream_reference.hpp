// Host reference for the STREAM kernels: the expected value of every output element, computed
// independently from the same deterministic inputs, and the tolerance each op allows.
// copy, scale and add are single IEEE operations: exact. Triad is one fused multiply-add on
// both sides: exact. Dot sums in a different order: bounded by the rounding error of the
// device's summation tree (see dot_tolerance).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "../common/random_values.hpp"
#include "stream_ops.hpp"

namespace triaudit {

template <typename T>
T stream_input(char array, std::uint64_t i) {
  const std::uint64_t seed = array == 'a' ? kSeedA : array == 'b' ? kSeedB : kSeedC;
  return random_pm1<T>(seed, i);
}

// Expected value of output element i of `op` (not for Dot).
template <typename T>
T stream_expected(StreamOp op, std::uint64_t i) {
  const T s = static_cast<T>(kStreamScalar);
  switch (op) {
    case StreamOp::Copy:
      return stream_input<T>('a', i);
    case StreamOp::Scale:
      return s * stream_input<T>('c', i);
    case StreamOp::Add:
      return stream_input<T>('a', i) + stream_input<T>('b', i);
    case StreamOp::Triad:
      return std::fma(s, stream_input<T>('c', i), stream_input<T>('b', i));
    case StreamOp::Dot:
      break;
  }
  return std::numeric_limits<T>::quiet_NaN();
}

struct DotReference {
  long double sum = 0;      // the exact-ish value (80-bit accumulation on x86-64)
  long double abs_sum = 0;  // sum of |a_i * b_i|, the scale of the rounding error
};

template <typename T>
DotReference stream_dot_reference(std::uint64_t begin, std::uint64_t end) {
  DotReference r;
  for (std::uint64_t i = begin; i < end; ++i) {
    const long double p = static_cast<long double>(stream_input<T>('a', i)) * stream_input<T>('b', i);
    r.sum += p;
    r.abs_sum += std::fabs(p);
  }
  return r;
}

// Worst-case error of a summation whose longest chain of dependent additions has `depth`
// terms: gamma(depth) * sum|a_i b_i| (Higham), with gamma(k) = k u / (1 - k u). The device's
// chain is: a per-thread grid-stride loop over n / threads elements (x vector width), a
// block tree of 8 levels, then a sequential fold of blocks / 256 partials and another tree.
template <typename T>
double dot_tolerance(std::uint64_t n, std::uint64_t grid_threads, std::uint64_t blocks, long double abs_sum) {
  const double u = std::numeric_limits<T>::epsilon() / 2;
  const std::uint64_t per_thread = grid_threads > 0 ? (n + grid_threads - 1) / grid_threads : n;
  const double depth = static_cast<double>(per_thread + 1 + 8 + (blocks + 255) / 256 + 8 + 2);
  const double gamma = depth * u / (1.0 - depth * u);
  return gamma * static_cast<double>(abs_sum) + std::numeric_limits<T>::min();
}

}  // namespace triaudit
