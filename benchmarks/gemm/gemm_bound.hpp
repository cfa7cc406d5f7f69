// The acceptance rule for a GEMM's output, and where it is sampled. Pure host code, unit-tested
// (tests/cpu/test_gemm_bound.cpp simulates correct results, partial-K results and results of a
// cheaper arithmetic than the one declared, at K up to 16384).
//
// Each sampled element D(i,j) must pass
//     |D - ref| <= eps_out * |ref| + eps_acc * sum_k |a_ik b_kj| + z * sigma(K, sum_k (a_ik b_kj)^2)
// with ref the FP64 dot product of the stored inputs. eps_out covers the rounding of the output to
// its storage type (and biased input rounding such as TF32's truncation, which scales with the
// result); eps_acc a fixed share of the accumulation (FP32 accumulate: 2^-16); sigma the error of
// the declared arithmetic that grows with K: the hardware's rounding of the stored inputs (TF32's
// 10-bit conversion) and the accumulator's rounding, modelled from K, the accumulator's ulp and
// both rounding modes (to nearest: a random walk; toward zero: a drift, since every step loses
// towards zero). The first rule used one term, tol * sum|ab|, which grows like K while |D| grows
// like sqrt(K): at 8192^3 it allowed an error as large as a typical |D|.
//
// And over all samples, the error's mean square may not exceed kGemmMeanSquareLimit times what the
// declared arithmetic gives (gemm_model_square_error): a result computed in a cheaper precision
// differs from the declared one by an error that also grows like sqrt(K), so no per-element rule
// that lets the accumulation through catches it at large K (TF32 computed from BF16 inputs passed
// every sample at K = 16384); their mean square does (TF32 from BF16 inputs: 2.2-3 times TF32's
// model, a correct TF32 result 0.3).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace triaudit {

// The declared arithmetic of a GEMM precision, and the per-element rule built from it.
struct GemmBound {
  double eps_out = 0;  // relative to |ref|: the output's rounding (and a biased input rounding)
  double eps_acc = 0;  // relative to sum |a b|: a fixed share of the accumulation
  // The hardware's rounding of each stored input, relative: its mean square and its mean (|bias|).
  // 0 when the stored type is what the arithmetic reads (FP16, BF16, FP8, FP32 without TF32).
  double input_var = 0, input_bias = 0;
  int acc_bits = 0;     // the accumulator's explicit mantissa bits (FP32 23, FP16 10); 0: exact (integers)
  int acc_k = 1;        // k summed exactly inside one accumulation step (an MMA instruction's k)
  int promote_k = 0;    // partial sums added into an FP32 accumulator every promote_k of k (0: never)
  bool acc_rz = false;  // the accumulator may round toward zero (Tensor Cores), not only to nearest
  int out_bits = 0;     // the output's explicit mantissa bits (for the mean-square model)
  bool exact() const { return eps_out == 0 && eps_acc == 0 && acc_bits == 0; }
};

// One sampled element: the device's value and the FP64 reference sums of its dot product.
struct GemmSample {
  double got = 0;
  double ref = 0;      // sum a b
  double abs_ref = 0;  // sum |a b|
  double sq_ref = 0;   // sum (a b)^2
};

// How many standard deviations of the modelled error an element may be off (up to ~10^6 samples
// per check: a correct element outside 6 sigma is a 2e-9 event, and the model errs high).
constexpr double kGemmSigmas = 6.0;
// The most the errors' mean square may be, as a multiple of the declared arithmetic's model.
constexpr double kGemmMeanSquareLimit = 1.25;

// The standard deviation of the error the declared arithmetic makes on an element whose products
// have sum (a b)^2 = sq_ref, at depth k: inputs' rounding and the accumulator's (gemm_bound.cpp).
double gemm_sigma(double sq_ref, std::uint64_t k, const GemmBound& b);

// The error allowed at one element.
double gemm_allowed_error(const GemmSample& s, std::uint64_t k, const GemmBound& b);
// Whether one sampled element passes. NaN and infinities never pass; integers must be exact.
bool gemm_element_ok(const GemmSample& s, std::uint64_t k, const GemmBound& b);
// The two fixed terms alone (eps_out |ref| + eps_acc sum|ab|), for callers that know neither K nor
// sum (a b)^2 (triaudit_soak's BF16 check, where the sqrt(K) terms are negligible).
bool gemm_element_ok(double got, double ref, double abs_ref, const GemmBound& b);

// The mean square error the declared arithmetic makes at one element (its model, an upper bound:
// the worse rounding mode, the largest ulp in each binade), the FP64 reference's own included.
double gemm_model_square_error(const GemmSample& s, std::uint64_t k, const GemmBound& b);

// The errors of all samples against the model: sum (D - ref)^2 / sum model. Above
// kGemmMeanSquareLimit, the result is not the declared arithmetic. 0 for an exact bound.
struct GemmMeanSquare {
  double observed = 0, model = 0;
  void add(const GemmSample& s, std::uint64_t k, const GemmBound& b);
  double ratio() const { return model > 0 ? observed / model : 0.0; }
  bool ok() const { return !(ratio() > kGemmMeanSquareLimit); }
};

// The edge of the blocks in which every one is sampled: no CTA tile of cuBLASLt is smaller, so a
// tile that was never written, or lost a k-slice, is always sampled. A kernel whose CTA writes a
// narrower block (ladder level 0: 128 rows of one column) is sampled in blocks of its own size.
constexpr std::uint64_t kGemmSampleBlock = 64;
// How many further elements are drawn at random over the whole matrix.
constexpr int kGemmRandomSamples = 1020;
// The k-tile whose loss in one CTA the sampling must catch.
constexpr std::uint64_t kGemmLostTileK = 64;
// Samples per block at most: where more would be needed, a lost k-tile can hardly be told from the
// arithmetic's own error at one element; one is taken and the check says with what probability a
// lost k-tile is caught.
constexpr int kGemmMaxSamplesPerBlock = 64;
// The probability with which a k-tile lost in any one CTA must be caught.
constexpr double kGemmLostTileCatch = 0.99;

// The probability that one sampled element of a K-deep GEMM whose CTA lost one k-tile of
// kGemmLostTileK fails the rule, for the suite's inputs (random in [-1, 1]): the lost products'
// sum against the allowed error, averaged over the distribution of ref. 1 for exact rules.
double gemm_lost_tile_detection(std::uint64_t k, const GemmBound& b);

// Samples per block so that a CTA that lost one k-tile is caught with kGemmLostTileCatch (one where
// that would take more than kGemmMaxSamplesPerBlock), and with what probability that many catch it.
struct GemmBlockSampling {
  int per_block = 1;
  double catch_probability = 1.0;  // of a k-tile lost in one CTA, with per_block samples in each block
};
GemmBlockSampling gemm_block_sampling(std::uint64_t k, const GemmBound& b);

// The (row, column) positions D is checked at: the four corners and the edges' middles,
// `per_block` pseudo-random elements inside every block_m x block_n block (64 x 64 unless a
// kernel's CTA writes less; the last blocks may be partial), and kGemmRandomSamples elements
// anywhere. The same positions on every machine.
std::vector<std::pair<std::uint32_t, std::uint32_t>> gemm_sample_positions(std::uint64_t m, std::uint64_t n,
                                                                           std::uint64_t block_m = kGemmSampleBlock,
                                                                           std::uint64_t block_n = kGemmSampleBlock,
                                                                           int per_block = 1);

}  // namespace triaudit
