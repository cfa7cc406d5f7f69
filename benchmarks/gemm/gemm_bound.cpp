#include "gemm_bound.hpp"

#include <cmath>

#include "common/random_values.hpp"

namespace triaudit {

bool gemm_element_ok(double got, double ref, double abs_ref, const GemmBound& b) {
  const double err = std::fabs(got - ref);
  if (!std::isfinite(got) || !std::isfinite(err)) return false;
  if (b.exact()) return err == 0;
  return err <= gemm_allowed_error(ref, abs_ref, b);
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> gemm_sample_positions(std::uint64_t m, std::uint64_t n,
                                                                           std::uint64_t block_m,
                                                                           std::uint64_t block_n) {
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
  std::uint64_t x = 0;
  for (std::uint64_t bj = 0; bj < n; bj += BN)
    for (std::uint64_t bi = 0; bi < m; bi += BM, ++x) {
      const std::uint64_t rows = m - bi < BM ? m - bi : BM, cols = n - bj < BN ? n - bj : BN;
      add(bi + mix64(0xB10C + 2 * x) % rows, bj + mix64(0xB10C + 2 * x + 1) % cols);
    }
  for (std::uint64_t r = 0; r < static_cast<std::uint64_t>(kGemmRandomSamples); ++r)
    add(mix64(0xC0FFEE + 2 * r) % m, mix64(0xC0FFEE + 2 * r + 1) % n);
  return out;
}

}  // namespace triaudit
