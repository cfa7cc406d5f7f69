// The GEMM acceptance rule (gemm_bound.hpp) on simulated device results: the suite's own inputs
// (random_pm1, rounded to each storage type as fill_operand does), accumulated as the Tensor Cores
// do (exact products summed per MMA k-step, added into an accumulator of the precision's kind),
// rounded to the output type. A correct result must pass with room to spare at K up to 16384 in
// every precision; a result missing one k-tile of 64 must fail at K = 1024, 8192 and 16384.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>

#include "common/random_values.hpp"
#include "gemm_bound.hpp"
#include "gemm_catalogue.hpp"

namespace triaudit {
namespace {

// ---- host rounding to the storage types (round to nearest even unless said) -------------------
float round_mantissa(float x, int bits, bool truncate = false) {  // keep `bits` explicit mantissa bits
  if (x == 0 || !std::isfinite(x)) return x;
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  const int drop = 23 - bits;
  const std::uint32_t mask = (1u << drop) - 1;
  if (!truncate) u += (mask >> 1) + ((u >> drop) & 1u);
  u &= ~mask;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}
float to_bf16(float x) { return round_mantissa(x, 7); }
float to_fp16(float x) { return static_cast<float>(static_cast<_Float16>(x)); }
float to_e4m3(float x) {  // 3 mantissa bits, exponent from -6 (subnormals below 2^-6), max 448
  const float a = std::fabs(x);
  if (a == 0) return 0;
  if (a < 0x1p-6f) return std::copysign(std::nearbyint(a / 0x1p-9f) * 0x1p-9f, x);
  return std::copysign(std::fmin(round_mantissa(a, 3), 448.0f), x);
}

enum class Acc { F64, F32, F16, Bits14Promoted, Bits14 };  // what holds the running sum

struct Model {
  GemmPrecision p;
  float (*in)(float);
  bool tf32_inputs;  // the Tensor Cores read FP32 storage as TF32 (truncated to 10 bits)
  Acc acc;
  int mma_k;  // k per MMA step: products inside one step are summed exactly
  double (*out)(double);
};

float keep(float x) { return x; }
float int8(float x) { return std::nearbyint(127.0f * x); }
double out_f64(double x) { return x; }
double out_f32(double x) { return static_cast<float>(x); }
double out_f16(double x) { return to_fp16(static_cast<float>(x)); }
double out_bf16(double x) { return to_bf16(static_cast<float>(x)); }

const Model kModels[] = {
    {GemmPrecision::FP64, keep, false, Acc::F64, 4, out_f64},
    {GemmPrecision::FP32, keep, false, Acc::F32, 1, out_f32},
    {GemmPrecision::TF32, keep, true, Acc::F32, 8, out_f32},
    {GemmPrecision::FP16, to_fp16, false, Acc::F32, 16, out_f16},
    {GemmPrecision::FP16Acc16, to_fp16, false, Acc::F16, 16, out_f16},
    {GemmPrecision::BF16, to_bf16, false, Acc::F32, 16, out_bf16},
    {GemmPrecision::FP8, to_e4m3, false, Acc::Bits14Promoted, 32, out_bf16},
    {GemmPrecision::FP8FastAccum, to_e4m3, false, Acc::Bits14, 32, out_bf16},
    {GemmPrecision::INT8, int8, false, Acc::F64, 32, out_f64},  // int32 accumulation: exact here
};

struct Element {
  double ref = 0, abs_ref = 0;  // FP64 from the stored inputs, as the device reference computes them
  double got = 0;               // the simulated device result
};

// D(i, j) of a K-long GEMM on the suite's inputs; `skip_tile` >= 0 leaves that 64-wide k-tile out.
Element simulate(const Model& m, std::uint64_t i, std::uint64_t j, std::uint64_t k, long skip_tile) {
  Element e;
  double acc64 = 0, outer = 0;
  float acc32 = 0, acc14 = 0;
  _Float16 acc16 = 0;
  for (std::uint64_t k0 = 0; k0 < k; k0 += static_cast<std::uint64_t>(m.mma_k)) {
    double step = 0;
    for (std::uint64_t kk = k0; kk < k0 + static_cast<std::uint64_t>(m.mma_k) && kk < k; ++kk) {
      const float a = m.in(random_pm1<float>(1000, kk + i * k)), b = m.in(random_pm1<float>(1001, kk + j * k));
      e.ref += static_cast<double>(a) * b;
      e.abs_ref += std::fabs(static_cast<double>(a) * b);
      if (skip_tile >= 0 && static_cast<long>(kk / 64) == skip_tile) continue;
      const float ta = m.tf32_inputs ? round_mantissa(a, 10, true) : a;
      const float tb = m.tf32_inputs ? round_mantissa(b, 10, true) : b;
      step += static_cast<double>(ta) * tb;
    }
    switch (m.acc) {
      case Acc::F64:
        acc64 += step;
        break;
      case Acc::F32:
        acc32 = static_cast<float>(static_cast<double>(acc32) + step);
        break;
      case Acc::F16:
        acc16 = static_cast<_Float16>(static_cast<double>(acc16) + step);
        break;
      case Acc::Bits14Promoted:  // cuBLASLt adds the 14-bit partial into FP32 every 128 of k
      case Acc::Bits14:
        acc14 = round_mantissa(static_cast<float>(static_cast<double>(acc14) + step), 13, true);
        if (m.acc == Acc::Bits14Promoted && (k0 + static_cast<std::uint64_t>(m.mma_k)) % 128 == 0) {
          outer = static_cast<float>(outer + acc14);
          acc14 = 0;
        }
        break;
    }
  }
  const double sum = m.acc == Acc::F64   ? acc64
                     : m.acc == Acc::F32 ? acc32
                     : m.acc == Acc::F16 ? static_cast<double>(acc16)
                                         : static_cast<float>(outer + acc14);
  e.got = m.out(sum);
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
};

Verdict judge(const Model& m, std::uint64_t k, long skip_tile, std::size_t count, const GemmBound& bound) {
  Verdict v;
  for (const auto& [i, j] : some_positions(k, count)) {
    const Element e = simulate(m, i, j, k, skip_tile);
    ++v.samples;
    if (!gemm_element_ok(e.got, e.ref, e.abs_ref, bound)) ++v.failed;
    const double allowed = gemm_allowed_error(e.ref, e.abs_ref, bound);
    if (allowed > 0) v.worst_ratio = std::max(v.worst_ratio, std::fabs(e.got - e.ref) / allowed);
  }
  return v;
}

TEST(GemmBound, CorrectResultsPassWithRoomInEveryPrecision) {
  for (const Model& m : kModels)
    for (std::uint64_t k : {1024ULL, 16384ULL}) {
      const Verdict v = judge(m, k, -1, 400, precision_info(m.p).bound);
      EXPECT_EQ(v.failed, 0) << precision_info(m.p).name << " K=" << k;
      // Half the bound at most: the device checks up to 65k samples, these are 400.
      EXPECT_LT(v.worst_ratio, 0.5) << precision_info(m.p).name << " K=" << k;
    }
}

TEST(GemmBound, OneDroppedKTileFailsAtEverySize) {
  for (const Model& m : kModels)
    for (std::uint64_t k : {1024ULL, 8192ULL, 16384ULL})
      for (long tile : {0L, static_cast<long>(k / 64 - 1)}) {  // the first, and the last (level 5's old bug)
        // FP8 without promotion accumulates in ~14 bits: at K = 16384 its own error (~2 in this
        // model) is as large as one k-tile's share of D (~2.7): no bound can tell them apart there
        // (kernels/gemm/README.md says so). It is checked at 1024 and 8192.
        if (m.p == GemmPrecision::FP8FastAccum && k > 8192) continue;
        const Verdict v = judge(m, k, tile, 200, precision_info(m.p).bound);
        // The check fails on one wrong sample. With FP32 (or better) accumulation most samples
        // are wrong; with FP8's 14-bit partial sums and with FP16 accumulation fewer, but the
        // chance that all of the device's samples at this shape miss it must be negligible.
        const double share = static_cast<double>(v.failed) / v.samples;
        const bool fp8 = m.p == GemmPrecision::FP8 || m.p == GemmPrecision::FP8FastAccum;
        const bool weak_accumulator = m.p == GemmPrecision::FP8FastAccum || m.p == GemmPrecision::FP16Acc16;
        const auto device_samples = static_cast<double>(gemm_sample_positions(k, k).size());
        const std::string what = std::string(precision_info(m.p).name) + " K=" + std::to_string(k) + " tile " +
                                 std::to_string(tile) + ": " + std::to_string(v.failed) + " of " +
                                 std::to_string(v.samples);
        EXPECT_GT(share, weak_accumulator ? 0.03 : fp8 ? 0.3 : 0.8) << what;
        EXPECT_LT(std::pow(1.0 - share, device_samples), 1e-12) << what;
      }
}

// Why the rule changed: the first rule (1e-2 x sum|ab| for BF16) let the same fault through.
TEST(GemmBound, TheSingleTermRuleMissedADroppedTile) {
  const Model& bf16 = kModels[5];
  ASSERT_EQ(bf16.p, GemmPrecision::BF16);
  const GemmBound old_rule{0, 1e-2};
  EXPECT_EQ(judge(bf16, 8192, 127, 200, old_rule).failed, 0);
  EXPECT_EQ(judge(bf16, 16384, 255, 200, old_rule).failed, 0);
  EXPECT_GT(judge(bf16, 8192, 127, 200, precision_info(GemmPrecision::BF16).bound).failed, 150);
}

TEST(GemmBound, ElementRule) {
  const GemmBound b{0x1p-8, 0x1p-16};
  EXPECT_TRUE(gemm_element_ok(100.0, 100.2, 2000.0, b));   // 0.2 <= 0.39 + 0.03
  EXPECT_FALSE(gemm_element_ok(100.0, 100.5, 2000.0, b));  // 0.5 > 0.42
  EXPECT_FALSE(gemm_element_ok(NAN, 1.0, 1.0, b));
  EXPECT_FALSE(gemm_element_ok(INFINITY, 1.0, 1.0, b));
  const GemmBound exact{};
  EXPECT_TRUE(exact.exact());
  EXPECT_TRUE(gemm_element_ok(42.0, 42.0, 100.0, exact));
  EXPECT_FALSE(gemm_element_ok(43.0, 42.0, 100.0, exact));
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
  // The same positions on every call (and so on every machine).
  EXPECT_EQ(gemm_sample_positions(4096, 4096), gemm_sample_positions(4096, 4096));
  EXPECT_TRUE(gemm_sample_positions(0, 5).empty());
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
