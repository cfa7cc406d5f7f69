// The GEMM acceptance rule (gemm_bound.hpp) on simulated device results: the suite's own inputs
// (random_pm1, rounded to each storage type as fill_operand does), accumulated as the Tensor Cores
// do (exact products summed per MMA k-step, added into an accumulator of the precision's kind,
// rounded to nearest or toward zero), rounded to the output type. A correct result must pass with
// room to spare at K up to 16384 in every precision and either rounding mode; a result missing one
// k-tile of 64 must be caught in any one CTA with probability >= 0.99 where the rule says it can
// be; a result computed in a cheaper arithmetic than the one declared must fail at every K.
// Deterministic (fixed inputs and positions) and a few seconds long.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "common/random_values.hpp"
#include "gemm_bound.hpp"
#include "gemm_catalogue.hpp"

namespace triaudit {
namespace {

// ---- host rounding ------------------------------------------------------------------------------
// x rounded to `bits` explicit mantissa bits, to nearest (ties to even) or toward zero; no range limit.
double round_bits(double x, int bits, bool toward_zero) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  const double m = std::frexp(x, &e);  // x = m 2^e, 0.5 <= |m| < 1
  const double y = std::ldexp(m, bits + 1);
  return std::ldexp(toward_zero ? std::trunc(y) : std::nearbyint(y), e - bits - 1);
}
float to_bf16(float x) { return static_cast<float>(round_bits(x, 7, false)); }
float to_fp16(float x) { return static_cast<float>(static_cast<_Float16>(x)); }
float to_e4m3(float x) {  // 3 mantissa bits, exponent from -6 (subnormals below 2^-6), max 448
  const float a = std::fabs(x);
  if (a == 0) return 0;
  if (a < 0x1p-6f) return std::copysign(std::nearbyint(a / 0x1p-9f) * 0x1p-9f, x);
  return std::copysign(std::fmin(static_cast<float>(round_bits(a, 3, false)), 448.0f), x);
}
float keep(float x) { return x; }
float int8(float x) { return std::nearbyint(127.0f * x); }

// What the hardware does to a stored input before it multiplies.
enum class Convert { None, Tf32Truncate, Tf32Nearest, Bf16, Fp16 };
double convert(float x, Convert c) {
  switch (c) {
    case Convert::Tf32Truncate:
      return round_bits(x, 10, true);
    case Convert::Tf32Nearest:
      return round_bits(x, 10, false);
    case Convert::Bf16:
      return round_bits(x, 7, false);
    case Convert::Fp16:
      return to_fp16(x);
    case Convert::None:
      break;
  }
  return x;
}

// A simulated device: storage, conversion, accumulator (bits 0: exact), output rounding.
struct Device {
  std::string name;
  GemmPrecision declared;
  float (*in)(float);
  Convert conv;
  int acc_bits;
  bool acc_toward_zero;
  int acc_k;      // k per MMA step: products inside one step are summed exactly
  int promote_k;  // the partial sum is added into FP32 every promote_k (0: never)
  int out_bits;   // 0: the output is exact (FP64 or integers)
};

// Every precision as a correct device computes it, in each rounding mode the hardware might use.
std::vector<Device> correct_devices() {
  using P = GemmPrecision;
  return {
      {"fp64", P::FP64, keep, Convert::None, 0, false, 4, 0, 0},
      {"fp32", P::FP32, keep, Convert::None, 23, false, 1, 0, 23},
      {"tf32 truncating, rz", P::TF32, keep, Convert::Tf32Truncate, 23, true, 8, 0, 23},
      {"tf32 to nearest", P::TF32, keep, Convert::Tf32Nearest, 23, false, 8, 0, 23},
      {"fp16 rz", P::FP16, to_fp16, Convert::None, 23, true, 16, 0, 10},
      {"fp16 rn", P::FP16, to_fp16, Convert::None, 23, false, 16, 0, 10},
      {"fp16acc16 rn", P::FP16Acc16, to_fp16, Convert::None, 10, false, 16, 0, 10},
      {"fp16acc16 rz", P::FP16Acc16, to_fp16, Convert::None, 10, true, 16, 0, 10},
      {"bf16 rz", P::BF16, to_bf16, Convert::None, 23, true, 16, 0, 7},
      {"bf16 rn", P::BF16, to_bf16, Convert::None, 23, false, 16, 0, 7},
      {"fp8 promoted every 128", P::FP8, to_e4m3, Convert::None, 13, true, 32, 128, 7},
      {"fp8 promoted every 512", P::FP8, to_e4m3, Convert::None, 13, true, 32, 512, 7},
      {"fp8 fast", P::FP8FastAccum, to_e4m3, Convert::None, 13, true, 32, 0, 7},
      {"int8", P::INT8, int8, Convert::None, 0, false, 32, 0, 0},
  };
}

// D(i, j) of a K-long GEMM on the suite's inputs; `skip_tile` >= 0 leaves that 64-wide k-tile out.
GemmSample simulate(const Device& d, std::uint64_t i, std::uint64_t j, std::uint64_t k, long skip_tile) {
  GemmSample e;
  double acc = 0, outer = 0;
  const auto step_k = static_cast<std::uint64_t>(d.acc_k);
  for (std::uint64_t k0 = 0; k0 < k; k0 += step_k) {
    double step = 0;
    for (std::uint64_t kk = k0; kk < k0 + step_k && kk < k; ++kk) {
      const float a = d.in(random_pm1<float>(1000, kk + i * k)), b = d.in(random_pm1<float>(1001, kk + j * k));
      const double ab = static_cast<double>(a) * b;
      e.ref += ab;
      e.abs_ref += std::fabs(ab);
      e.sq_ref += ab * ab;
      if (skip_tile >= 0 && static_cast<long>(kk / kGemmLostTileK) == skip_tile) continue;
      step += convert(a, d.conv) * convert(b, d.conv);
    }
    acc = d.acc_bits > 0 ? round_bits(acc + step, d.acc_bits, d.acc_toward_zero) : acc + step;
    if (d.promote_k > 0 && (k0 + step_k) % static_cast<std::uint64_t>(d.promote_k) == 0) {
      outer = round_bits(outer + acc, 23, false);
      acc = 0;
    }
  }
  const double sum = d.promote_k > 0 ? round_bits(outer + acc, 23, false) : acc;
  e.got = d.out_bits > 0 ? round_bits(sum, d.out_bits, false) : sum;
  return e;
}

// The positions the device check uses for a K x K output, the first `count` of them (the corners,
// then the blocks column by column): an honest subset, since one failing sample fails the check.
std::vector<std::pair<std::uint32_t, std::uint32_t>> some_positions(std::uint64_t k, std::size_t count) {
  auto all = gemm_sample_positions(k, k);
  all.resize(std::min(all.size(), count));
  return all;
}

struct Verdict {
  int samples = 0, failed = 0;
  double worst_ratio = 0;  // max |got - ref| / allowed
  GemmMeanSquare mean_square;
  bool check_fails() const { return failed > 0 || !mean_square.ok(); }
  std::string what() const {
    return std::to_string(failed) + " of " + std::to_string(samples) + " outside, worst " +
           std::to_string(worst_ratio) + " of the bound, mean square " + std::to_string(mean_square.ratio()) +
           " of the model";
  }
};

Verdict judge(const Device& d, std::uint64_t k, long skip_tile, std::size_t count, const GemmBound& bound) {
  Verdict v;
  for (const auto& [i, j] : some_positions(k, count)) {
    const GemmSample e = simulate(d, i, j, k, skip_tile);
    ++v.samples;
    if (!gemm_element_ok(e, k, bound)) ++v.failed;
    v.mean_square.add(e, k, bound);
    const double allowed = gemm_allowed_error(e, k, bound);
    if (allowed > 0) v.worst_ratio = std::max(v.worst_ratio, std::fabs(e.got - e.ref) / allowed);
  }
  return v;
}

const GemmBound& declared(const Device& d) { return precision_info(d.declared).bound; }

TEST(GemmBound, CorrectResultsPassWithRoomInEveryPrecisionAndRoundingMode) {
  for (const Device& d : correct_devices())
    for (std::uint64_t k : {256ULL, 1024ULL, 4096ULL, 16384ULL}) {
      const Verdict v = judge(d, k, -1, k > 4096 ? 150 : 300, declared(d));
      EXPECT_EQ(v.failed, 0) << d.name << " K=" << k << ": " << v.what();
      // Room: the device checks up to ~10^6 samples, these are a few hundred; the fixed terms and
      // the model err high.
      EXPECT_LT(v.worst_ratio, 0.65) << d.name << " K=" << k << ": " << v.what();
      EXPECT_LT(v.mean_square.ratio(), 0.65 * kGemmMeanSquareLimit) << d.name << " K=" << k << ": " << v.what();
    }
}

// A cheaper arithmetic than the one declared: TF32 computed from inputs rounded to BF16 (a 2x
// inflated TF32 figure), FP32 computed as TF32 (an 8x inflated one), FP16 accumulated in FP16 when
// FP32 accumulation was declared. Its error grows like sqrt(K), as the allowed accumulation does:
// at K = 8192 and 16384 every element of TF32-from-BF16 passed the first two-term rule. The mean
// square of the errors over the samples, against the declared arithmetic's, tells them apart.
TEST(GemmBound, ACheaperArithmeticFailsAtEveryK) {
  using P = GemmPrecision;
  const std::vector<Device> cheaper = {
      {"tf32 from bf16 inputs", P::TF32, keep, Convert::Bf16, 23, true, 8, 0, 23},
      {"tf32 from bf16 inputs, rn", P::TF32, keep, Convert::Bf16, 23, false, 8, 0, 23},
      {"fp32 as tf32, truncating", P::FP32, keep, Convert::Tf32Truncate, 23, true, 8, 0, 23},
      {"fp32 as tf32, to nearest", P::FP32, keep, Convert::Tf32Nearest, 23, false, 8, 0, 23},
      {"fp16 accumulated in fp16", P::FP16, to_fp16, Convert::None, 10, false, 16, 0, 10},
  };
  for (const Device& d : cheaper)
    for (std::uint64_t k : {1024ULL, 2048ULL, 4096ULL, 8192ULL, 16384ULL}) {
      const Verdict v = judge(d, k, -1, k > 4096 ? 150 : 300, declared(d));
      EXPECT_TRUE(v.check_fails()) << d.name << " K=" << k << ": " << v.what();
      // Not by a hair: the mean square alone fails it with room.
      EXPECT_GT(v.mean_square.ratio(), 1.5 * kGemmMeanSquareLimit) << d.name << " K=" << k << ": " << v.what();
    }
}

// The first rule (eps_acc 2^-11 x sum|ab| for FP16 accumulation) failed a correct FP16-accumulated
// result whose accumulator rounds toward zero at every large K, and one rounding to nearest at
// K = 16384 in about a third of operand sets: a random walk of FP16 roundings is no share of sum|ab|.
TEST(GemmBound, TheLinearAccumulationTermFailedACorrectFp16Accumulator) {
  const Device rz{"fp16acc16 rz", GemmPrecision::FP16Acc16, to_fp16, Convert::None, 10, true, 16, 0, 10};
  const GemmBound old_rule{0x1p-9, 0x1p-11};
  EXPECT_GT(judge(rz, 16384, -1, 150, old_rule).failed, 100);
  EXPECT_EQ(judge(rz, 16384, -1, 150, declared(rz)).failed, 0);
}

// One CTA that lost one k-tile of 64 is caught with probability >= 0.99: each 64 x 64 block holds
// as many samples as gemm_block_sampling asks (the per-sample detection, simulated here, to that
// power). Where no affordable number of samples can tell a lost tile from the arithmetic's own
// error, the sampling says so (catch_probability < 0.99): those cases are listed, and must stay so few.
TEST(GemmBound, OneDroppedKTileIsCaughtInAnyOneCta) {
  std::set<std::string> blind;  // "precision K"
  for (const Device& d : correct_devices()) {
    if (d.name == "fp8 promoted every 512" || d.name.find(" rn") != std::string::npos || d.name == "tf32 to nearest")
      continue;  // one device per precision: the one with the larger own error
    for (std::uint64_t k : {1024ULL, 4096ULL, 16384ULL}) {
      const GemmBlockSampling s = gemm_block_sampling(k, declared(d));
      for (long tile : {0L, static_cast<long>(k / kGemmLostTileK - 1)}) {  // the first, and the last
        const Verdict v = judge(d, k, tile, k > 4096 ? 150 : 300, declared(d));
        const double p = static_cast<double>(v.failed) / v.samples;
        const std::string what = d.name + " K=" + std::to_string(k) + " tile " + std::to_string(tile) + ": " +
                                 v.what() + "; " + std::to_string(s.per_block) + " per block, model p " +
                                 std::to_string(gemm_lost_tile_detection(k, declared(d)));
        // The model of the per-sample detection does not promise more than the simulation shows.
        EXPECT_LE(gemm_lost_tile_detection(k, declared(d)), p + 0.1) << what;
        if (s.catch_probability >= kGemmLostTileCatch)
          EXPECT_GE(1.0 - std::pow(1.0 - p, s.per_block), kGemmLostTileCatch) << what;
        else
          blind.insert(std::string(precision_info(d.declared).name) + " " + std::to_string(k));
      }
    }
  }
  // An FP16 accumulator that may round toward zero errs, at K >= 4096, by more than a k-tile's
  // share of D; FP8 without promotion likewise at 16384. The check says so in its label.
  EXPECT_EQ(blind, (std::set<std::string>{"fp16acc16 4096", "fp16acc16 16384", "fp8e4m3fast 16384"}));
}

// Why the rule changed: the first rule (1e-2 x sum|ab| for BF16) let the same fault through.
TEST(GemmBound, TheSingleTermRuleMissedADroppedTile) {
  const Device bf16{"bf16", GemmPrecision::BF16, to_bf16, Convert::None, 23, true, 16, 0, 7};
  const GemmBound old_rule{0, 1e-2};
  EXPECT_EQ(judge(bf16, 8192, 127, 200, old_rule).failed, 0);
  EXPECT_EQ(judge(bf16, 16384, 255, 150, old_rule).failed, 0);
  EXPECT_GT(judge(bf16, 8192, 127, 200, declared(bf16)).failed, 150);
}

TEST(GemmBound, ElementRule) {
  const GemmBound b{0x1p-8, 0x1p-16};
  EXPECT_TRUE(gemm_element_ok(GemmSample{100.0, 100.2, 2000.0, 0}, 64, b));   // 0.2 <= 0.39 + 0.03
  EXPECT_FALSE(gemm_element_ok(GemmSample{100.0, 100.5, 2000.0, 0}, 64, b));  // 0.5 > 0.42
  EXPECT_FALSE(gemm_element_ok(GemmSample{NAN, 1.0, 1.0, 1.0}, 64, b));
  EXPECT_FALSE(gemm_element_ok(GemmSample{INFINITY, 1.0, 1.0, 1.0}, 64, b));
  const GemmBound exact{};
  EXPECT_TRUE(exact.exact());
  EXPECT_TRUE(gemm_element_ok(GemmSample{42.0, 42.0, 100.0, 100.0}, 64, exact));
  EXPECT_FALSE(gemm_element_ok(GemmSample{43.0, 42.0, 100.0, 100.0}, 64, exact));
  // The sqrt(K) term: an FP16 accumulator's error model grows with the depth and the products.
  const GemmBound& acc16 = precision_info(GemmPrecision::FP16Acc16).bound;
  EXPECT_GT(gemm_sigma(4096.0 / 9, 4096, acc16), 2 * gemm_sigma(1024.0 / 9, 1024, acc16));
  // The two-term rule triaudit_soak uses, without K.
  EXPECT_TRUE(gemm_element_ok(100.0, 100.2, 2000.0, b));
  EXPECT_FALSE(gemm_element_ok(100.0, 100.5, 2000.0, b));
}

TEST(GemmBound, MeanSquareRule) {
  const GemmBound& fp32 = precision_info(GemmPrecision::FP32).bound;
  GemmMeanSquare ms;
  EXPECT_TRUE(ms.ok());  // nothing yet
  ms.add(GemmSample{10.0 + 1e-6, 10.0, 30.0, 12.0}, 1024, fp32);
  EXPECT_TRUE(ms.ok());  // 1e-6 at |D| = 10 over 1024 FP32 steps: what the model allows (sigma ~3e-6)
  ms.add(GemmSample{10.0 + 1e-4, 10.0, 30.0, 12.0}, 1024, fp32);
  EXPECT_GT(ms.ratio(), kGemmMeanSquareLimit);  // 1e-4 is far more than FP32 arithmetic errs
  GemmMeanSquare exact;
  exact.add(GemmSample{42.0, 42.0, 100.0, 100.0}, 64, precision_info(GemmPrecision::INT8).bound);
  EXPECT_EQ(exact.ratio(), 0.0);
  EXPECT_TRUE(exact.ok());
}

TEST(GemmBound, EveryBlockOfEveryShapeIsSampled) {
  for (auto [m, n] : {std::pair<std::uint64_t, std::uint64_t>{8192, 8192}, {8193, 4095}, {256, 16}, {12288, 1}}) {
    std::set<std::pair<std::uint64_t, std::uint64_t>> blocks;
    for (const auto& [i, j] : gemm_sample_positions(m, n)) {
      ASSERT_LT(i, m);
      ASSERT_LT(j, n);
      blocks.insert({i / kGemmSampleBlock, j / kGemmSampleBlock});
    }
    const std::uint64_t want = ((m + 63) / 64) * ((n + 63) / 64);
    EXPECT_EQ(blocks.size(), want) << m << " x " << n;
  }
  // The same positions on every call (and so on every machine); per_block 1 as before.
  EXPECT_EQ(gemm_sample_positions(4096, 4096), gemm_sample_positions(4096, 4096));
  EXPECT_EQ(gemm_sample_positions(4096, 4096), gemm_sample_positions(4096, 4096, 64, 64, 1));
  EXPECT_TRUE(gemm_sample_positions(0, 5).empty());
  // Several per block: every block holds that many.
  std::map<std::pair<std::uint64_t, std::uint64_t>, int> per;
  for (const auto& [i, j] : gemm_sample_positions(1024, 512, 64, 64, 5)) ++per[{i / 64, j / 64}];
  for (const auto& [block, count] : per) EXPECT_GE(count, 5) << block.first << "," << block.second;
  EXPECT_EQ(per.size(), 16u * 8u);
}

// Ladder level 0's CTA writes 128 rows of one column: in 64 x 64 blocks most of its CTAs are never
// sampled, so one that wrote nothing would pass; sampled in blocks of its own width, every one is.
TEST(GemmBound, EveryCtaOfANarrowKernelIsSampled) {
  for (std::uint64_t k : {1024u, 4096u}) {
    auto ctas_hit = [&](std::uint64_t bm, std::uint64_t bn) {
      std::set<std::pair<std::uint64_t, std::uint64_t>> ctas;
      for (const auto& [i, j] : gemm_sample_positions(k, k, bm, bn)) ctas.insert({i / 128, j});
      return ctas.size();
    };
    const std::uint64_t all = (k / 128) * k;
    EXPECT_EQ(ctas_hit(64, 1), all) << k;
    EXPECT_LT(ctas_hit(kGemmSampleBlock, kGemmSampleBlock), all / 4) << k;  // 64 x 64 alone: 15 %, 4 %
  }
}

}  // namespace
}  // namespace triaudit
