#include "gemm_bound.hpp"

#include <algorithm>
#include <cmath>

#include "common/random_values.hpp"

namespace triaudit {
namespace {

// One chain of `steps` accumulation steps into an accumulator of `bits` mantissa bits, over
// products whose squares sum to sq: the variance of its rounding error. The partial sum after s of
// the steps has E[S^2] = s sq / steps, its ulp is at most 2^-bits |S|. To nearest, each step errs
// by up to half an ulp, uniformly: variance ulp^2 / 12, summed: 2^-2bits sq (steps+1) / 24. Toward
// zero, each step also loses half an ulp on average towards zero: a drift of 2^-(bits+1) sum_s S_s,
// whose variance (the area under a random walk) is 2^-2bits sq (steps+1)(2 steps+1) / 24.
double chain_variance(double steps, int bits, bool toward_zero, double sq) {
  steps = std::max(1.0, steps);
  const double ulp2 = std::ldexp(1.0, -2 * bits) * sq;
  const double nearest = ulp2 * (steps + 1) / 24.0;
  return toward_zero ? nearest + ulp2 * (steps + 1) * (2 * steps + 1) / 24.0 : nearest;
}

double accumulation_variance(double sq, std::uint64_t k, const GemmBound& b) {
  if (b.acc_bits <= 0) return 0.0;
  const double steps = static_cast<double>(k) / std::max(1, b.acc_k);
  if (b.promote_k <= 0) return chain_variance(steps, b.acc_bits, b.acc_rz, sq);
  // Promoted: chains of promote_k / acc_k steps, each added into FP32 (an IEEE add, to nearest).
  const double inner = static_cast<double>(b.promote_k) / std::max(1, b.acc_k);
  return chain_variance(inner, b.acc_bits, b.acc_rz, sq) +
         chain_variance(static_cast<double>(k) / b.promote_k, 23, false, sq);
}

// The standard normal's upper tail.
double upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

double gemm_sigma(double sq_ref, std::uint64_t k, const GemmBound& b) {
  return std::sqrt(2.0 * b.input_var * sq_ref + accumulation_variance(sq_ref, k, b));
}

double gemm_allowed_error(const GemmSample& s, std::uint64_t k, const GemmBound& b) {
  return b.eps_out * std::fabs(s.ref) + b.eps_acc * s.abs_ref + kGemmSigmas * gemm_sigma(s.sq_ref, k, b);
}

bool gemm_element_ok(const GemmSample& s, std::uint64_t k, const GemmBound& b) {
  const double err = std::fabs(s.got - s.ref);
  if (!std::isfinite(s.got) || !std::isfinite(err)) return false;
  if (b.exact()) return err == 0;
  return err <= gemm_allowed_error(s, k, b);
}

bool gemm_element_ok(double got, double ref, double abs_ref, const GemmBound& b) {
  const double err = std::fabs(got - ref);
  if (!std::isfinite(got) || !std::isfinite(err)) return false;
  if (b.exact()) return err == 0;
  return err <= b.eps_out * std::fabs(ref) + b.eps_acc * abs_ref;
}

double gemm_model_square_error(const GemmSample& s, std::uint64_t k, const GemmBound& b) {
  if (b.exact()) return 0.0;
  const double sigma = gemm_sigma(s.sq_ref, k, b);
  const double bias = 2.0 * b.input_bias * s.ref;  // both inputs shrink: the product by twice as much
  const double out = b.out_bits > 0 ? std::ldexp(1.0, -2 * b.out_bits) * s.ref * s.ref / 12.0 : 0.0;
  const double reference = chain_variance(static_cast<double>(k), 52, false, s.sq_ref);  // the FP64 reference's own
  return sigma * sigma + bias * bias + out + reference;
}

void GemmMeanSquare::add(const GemmSample& s, std::uint64_t k, const GemmBound& b) {
  const double err = s.got - s.ref;
  observed += err * err;
  model += gemm_model_square_error(s, k, b);
}

double gemm_lost_tile_detection(std::uint64_t k, const GemmBound& b) {
  if (b.exact() || k == 0) return 1.0;
  // Inputs uniform in [-1, 1]: E[(ab)^2] = 1/9, E|ab| = 1/4. The lost tile's sum X ~ N(0, tile/9),
  // ref ~ N(0, k/9). An element fails when |X| exceeds what the rule allows at its |ref|; the
  // arithmetic's own error, which would add to |X| as often as it subtracts, is left out.
  const double kk = static_cast<double>(k);
  const double tile = std::min(kk, static_cast<double>(kGemmLostTileK));
  const double sigma_x = std::sqrt(tile / 9.0), sigma_ref = std::sqrt(kk / 9.0);
  const double fixed = b.eps_acc * kk / 4.0 + kGemmSigmas * gemm_sigma(kk / 9.0, k, b);
  // E over |ref| (half-normal) of P(|X| > allowed(|ref|)), by the midpoint rule to 8 sigma.
  constexpr int kSteps = 800;
  const double dt = 8.0 / kSteps;
  double p = 0.0;
  for (int i = 0; i < kSteps; ++i) {
    const double t = (i + 0.5) * dt;  // |ref| / sigma_ref
    const double density = std::sqrt(2.0 / M_PI) * std::exp(-0.5 * t * t);
    p += density * dt * 2.0 * upper_tail((b.eps_out * t * sigma_ref + fixed) / sigma_x);
  }
  return std::clamp(p, 0.0, 1.0);
}

GemmBlockSampling gemm_block_sampling(std::uint64_t k, const GemmBound& b) {
  GemmBlockSampling s;
  // The model's detection, less what it may overstate (within 0.05 of the simulation at K = 1024 to
  // 16384 in every precision, tests/cpu/test_gemm_bound.cpp), and never more than 1 - p.
  const double model = gemm_lost_tile_detection(k, b);
  const double p = model - std::min(0.05, 1.0 - model);
  if (p >= kGemmLostTileCatch) {
    s.catch_probability = p;
    return s;
  }
  const double want = p > 0.0 ? std::ceil(std::log(1.0 - kGemmLostTileCatch) / std::log1p(-p)) : INFINITY;
  if (want > kGemmMaxSamplesPerBlock) {  // no affordable number reaches it: one, and the probability said
    s.catch_probability = std::max(0.0, p);
    return s;
  }
  s.per_block = static_cast<int>(want);
  s.catch_probability = 1.0 - std::pow(1.0 - p, s.per_block);
  return s;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> gemm_sample_positions(std::uint64_t m, std::uint64_t n,
                                                                           std::uint64_t block_m, std::uint64_t block_n,
                                                                           int per_block) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  if (m == 0 || n == 0) return out;
  auto add = [&](std::uint64_t i, std::uint64_t j) {
    out.emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j));
  };
  add(0, 0);
  add(m - 1, 0);
  add(0, n - 1);
  add(m - 1, n - 1);
  add(m / 2, n - 1);
  add(m - 1, n / 2);
  const std::uint64_t BM = block_m ? block_m : kGemmSampleBlock, BN = block_n ? block_n : kGemmSampleBlock;
  const auto per = static_cast<std::uint64_t>(std::max(1, per_block));
  std::uint64_t x = 0;
  for (std::uint64_t bj = 0; bj < n; bj += BN)
    for (std::uint64_t bi = 0; bi < m; bi += BM)
      for (std::uint64_t r = 0; r < per; ++r, ++x) {
        const std::uint64_t rows = m - bi < BM ? m - bi : BM, cols = n - bj < BN ? n - bj : BN;
        add(bi + mix64(0xB10C + 2 * x) % rows, bj + mix64(0xB10C + 2 * x + 1) % cols);
      }
  for (std::uint64_t r = 0; r < static_cast<std::uint64_t>(kGemmRandomSamples); ++r)
    add(mix64(0xC0FFEE + 2 * r) % m, mix64(0xC0FFEE + 2 * r + 1) % n);
  return out;
}

}  // namespace triaudit
