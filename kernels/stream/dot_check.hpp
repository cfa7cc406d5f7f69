// Verifying STREAM dot against an FP64 replay of the device's summation tree, block by block.
//
// The device sums in two stages: each block reduces the products of the elements its threads
// visit (a grid-stride loop over 16-byte vectors, then a scalar tail) into partial[block]; one
// block then folds the partials. A single tolerance on the final sum has to allow the worst-case
// rounding of the whole tree (~4e3 for 1 GiB of FP32), more than one block's whole contribution,
// so a dropped block would pass. Here every partial is checked against the FP64 sum of exactly
// the elements that block visits, with the bound of that block's own chain, and the final result
// against the FP64 fold of the device's partials. Host code, unit-tested on the CPU.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "stream_reference.hpp"

namespace triaudit {

struct DotTree {
  std::uint64_t n = 0;  // elements
  unsigned blocks = 0, threads = 0;
  unsigned width = 1;  // elements per 16-byte vector (1: the scalar path)
};

struct DotBlocks {
  std::vector<long double> sum, abs_sum;  // per block
  std::uint64_t longest_chain = 0;        // most products one thread adds up
};

// Which block sums element i: vectors v < n / width go to thread v % (blocks x threads); the
// scalar tail element i (from n / width x width on) to thread (i - tail_start) % (blocks x threads).
inline unsigned dot_block_of(const DotTree& t, std::uint64_t i) {
  const std::uint64_t stride = std::uint64_t{t.blocks} * t.threads;
  const std::uint64_t tail_start = t.n / t.width * t.width;
  const std::uint64_t thread = i < tail_start ? (i / t.width) % stride : (i - tail_start) % stride;
  return static_cast<unsigned>(thread / t.threads);
}

template <typename T>
DotBlocks dot_block_reference(const DotTree& t) {
  const unsigned workers = std::max(1u, std::min(std::thread::hardware_concurrency(), 64u));
  std::vector<DotBlocks> parts(workers);
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      DotBlocks& p = parts[w];
      p.sum.assign(t.blocks, 0.0L);
      p.abs_sum.assign(t.blocks, 0.0L);
      for (std::uint64_t i = t.n * w / workers; i < t.n * (w + 1) / workers; ++i) {
        const long double prod = static_cast<long double>(stream_input<T>('a', i)) * stream_input<T>('b', i);
        const unsigned b = dot_block_of(t, i);
        p.sum[b] += prod;
        p.abs_sum[b] += std::fabs(prod);
      }
    });
  for (auto& th : pool) th.join();
  DotBlocks total;
  total.sum.assign(t.blocks, 0.0L);
  total.abs_sum.assign(t.blocks, 0.0L);
  for (const auto& p : parts)
    for (unsigned b = 0; b < t.blocks; ++b) {
      total.sum[b] += p.sum[b];
      total.abs_sum[b] += p.abs_sum[b];
    }
  const std::uint64_t stride = std::uint64_t{t.blocks} * t.threads;
  total.longest_chain = ((t.n / t.width + stride - 1) / stride) * t.width + (t.n % t.width + stride - 1) / stride;
  return total;
}

// gamma(k) = k u / (1 - k u) (Higham): the worst-case relative error of k dependent additions.
template <typename T>
double dot_gamma(double depth) {
  const double u = std::numeric_limits<T>::epsilon() / 2;
  return depth * u / (1.0 - depth * u);
}

struct DotVerdict {
  bool ok = false;
  std::string message;  // the first problem, or a summary when ok
};

// `partials` and `result` as the device left them.
template <typename T>
DotVerdict verify_dot(const std::vector<T>& partials, T result, const DotBlocks& ref, unsigned threads_per_block) {
  DotVerdict v;
  if (partials.size() != ref.sum.size()) {
    v.message =
        "dot: " + std::to_string(partials.size()) + " partial sums for " + std::to_string(ref.sum.size()) + " blocks";
    return v;
  }
  // A block: its threads' chains, then a reduction tree of log2(threads) levels (+ slack).
  const double block_depth =
      static_cast<double>(ref.longest_chain) + 2.0 * std::log2(std::max(2u, threads_per_block)) + 2.0;
  long double fold = 0.0L, fold_abs = 0.0L;
  for (std::size_t b = 0; b < partials.size(); ++b) {
    const double got = static_cast<double>(partials[b]);
    const double want = static_cast<double>(ref.sum[b]);
    const double tol = dot_gamma<T>(block_depth) * static_cast<double>(ref.abs_sum[b]) + std::numeric_limits<T>::min();
    if (!(std::fabs(got - want) <= tol)) {
      std::ostringstream os;
      os.precision(9);
      os << "dot: block " << b << " of " << partials.size() << " summed " << got << ", its elements sum to " << want
         << " (allowed rounding " << tol << ")";
      v.message = os.str();
      return v;
    }
    fold += partials[b];
    fold_abs += std::fabs(static_cast<long double>(partials[b]));
  }
  // The fold: one block strides over the partials, then its own tree.
  const double fold_depth = std::ceil(static_cast<double>(partials.size()) / threads_per_block) +
                            2.0 * std::log2(std::max(2u, threads_per_block)) + 2.0;
  const double tol = dot_gamma<T>(fold_depth) * static_cast<double>(fold_abs) + std::numeric_limits<T>::min();
  if (!(std::fabs(static_cast<double>(result) - static_cast<double>(fold)) <= tol)) {
    std::ostringstream os;
    os.precision(9);
    os << "dot: the fold of the " << partials.size() << " partial sums gave " << static_cast<double>(result)
       << ", their sum is " << static_cast<double>(fold) << " (allowed rounding " << tol << ")";
    v.message = os.str();
    return v;
  }
  v.ok = true;
  v.message = "dot: " + std::to_string(partials.size()) + " block partials and their fold within rounding";
  return v;
}

}  // namespace triaudit
