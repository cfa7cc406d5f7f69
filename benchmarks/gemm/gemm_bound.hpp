// The acceptance rule for a GEMM's output, and where it is sampled. Pure host code, unit-tested
// (tests/cpu/test_gemm_bound.cpp simulates correct and partial-K results at K up to 16384).
//
// An element D(i,j) passes when
//     |D - ref| <= eps_out * |ref| + eps_acc * sum_k |a_ik b_kj|
// with ref the FP64 dot product of the stored inputs. eps_out covers the rounding of the output
// to its storage type (and biased input rounding such as TF32's, which scales with the result);
// eps_acc covers the accumulation (FP32 accumulate: 2^-16), not the inputs' precision. The first
// rule used one term, tol * sum|ab| with tol = 1e-2 for BF16: it grows like K while |D| grows like
// sqrt(K), so at 8192^3 it allowed an error as large as a typical |D| and a result missing 4 of
// 128 k-tiles passed every sample.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace triaudit {

struct GemmBound {
  double eps_out = 0;                                          // relative to |ref|: the output's rounding
  double eps_acc = 0;                                          // relative to sum |a b|: the accumulation
  bool exact() const { return eps_out == 0 && eps_acc == 0; }  // integers: no error at all
};

// The error allowed at one element.
inline double gemm_allowed_error(double ref, double abs_ref, const GemmBound& b) {
  return b.eps_out * (ref < 0 ? -ref : ref) + b.eps_acc * abs_ref;
}

// Whether one sampled element passes. NaN and infinities never pass.
bool gemm_element_ok(double got, double ref, double abs_ref, const GemmBound& b);

// The edge of the blocks in which every one is sampled: no CTA tile of cuBLASLt is smaller, so a
// tile that was never written, or lost a k-slice, is always sampled. A kernel whose CTA writes a
// narrower block (ladder level 0: 128 rows of one column) is sampled in blocks of its own size.
constexpr std::uint64_t kGemmSampleBlock = 64;
// How many further elements are drawn at random over the whole matrix.
constexpr int kGemmRandomSamples = 1020;

// The (row, column) positions D is checked at: the four corners and the edges' middles, one
// pseudo-random element inside every block_m x block_n block (64 x 64 unless a kernel's CTA writes
// less; the last blocks may be partial), and kGemmRandomSamples elements anywhere. The same
// positions on every machine.
std::vector<std::pair<std::uint32_t, std::uint32_t>> gemm_sample_positions(std::uint64_t m, std::uint64_t n,
                                                                           std::uint64_t block_m = kGemmSampleBlock,
                                                                           std::uint64_t block_n = kGemmSampleBlock);

}  // namespace triaudit
