#include "gemm_check.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/random_values.hpp"
#include "cuda_check.hpp"

namespace triaudit {

GemmBuffers::GemmBuffers(kernels::ElemType ab_t, kernels::ElemType cd_t, const GemmShape& s, int sets,
                         cudaStream_t stream)
    : ab(ab_t),
      cd(cd_t),
      shape(s),
      sets_(sets),
      a_stride_(aligned_matrix_bytes(s.m, s.k, kernels::elem_bytes(ab_t))),
      b_stride_(aligned_matrix_bytes(s.k, s.n, kernels::elem_bytes(ab_t))),
      d_stride_(aligned_matrix_bytes(s.m, s.n, kernels::elem_bytes(cd_t))),
      a_(a_stride_ * static_cast<std::uint64_t>(sets)),
      b_(b_stride_ * static_cast<std::uint64_t>(sets)),
      d_(d_stride_ * static_cast<std::uint64_t>(sets)) {
  for (int i = 0; i < sets; ++i) {
    const std::uint64_t seed = 1000 + 3 * static_cast<std::uint64_t>(i);
    kernels::fill_operand(const_cast<void*>(a(i)), ab, s.m * s.k, seed, stream);
    kernels::fill_operand(const_cast<void*>(b(i)), ab, s.k * s.n, seed + 1, stream);
    TRIAUDIT_CUDA_LAUNCH();
  }
  TRIAUDIT_CUDA(cudaMemsetAsync(d_.data(), 0xFF, d_.bytes(), stream));  // NaN / -1 poison
  TRIAUDIT_CUDA(cudaStreamSynchronize(stream));
}

std::string GemmCheck::describe() const {
  std::ostringstream os;
  os << wrong << " of " << samples << " sampled elements outside the bound (worst error " << worst_error
     << " of what the bound allows)";
  if (!first_wrong.empty()) os << "; first: " << first_wrong;
  os.precision(3);
  os << "; mean square of the errors " << mean_square_ratio << " x the declared arithmetic's";
  if (mean_square_ratio > kGemmMeanSquareLimit)
    os << " (more than " << kGemmMeanSquareLimit << " x: computed in a cheaper arithmetic than declared?)";
  return os.str();
}

std::string GemmCheck::sampling_note() const {
  if (sampling.catch_probability >= kGemmLostTileCatch) return "";
  std::ostringstream os;
  os.precision(2);
  os << "verification: a k-tile of " << kGemmLostTileK << " lost in one CTA is caught with probability "
     << sampling.catch_probability << " at K=" << k
     << " (the accumulator's own error, modelled for rounding toward zero, is as large as the tile's share)";
  return os.str();
}

void poison_d(const GemmBuffers& buf, int set, cudaStream_t stream) {
  const std::uint64_t bytes = buf.shape.m * buf.shape.n * static_cast<std::uint64_t>(kernels::elem_bytes(buf.cd));
  TRIAUDIT_CUDA(cudaMemsetAsync(buf.d(set), 0xFF, bytes, stream));
}

GemmCheck launch_and_check(const GemmBuffers& buf, int set, const GemmBound& bound, const std::function<void()>& launch,
                           cudaStream_t stream, SampleBlock block) {
  poison_d(buf, set, stream);
  launch();
  TRIAUDIT_CUDA_LAUNCH();
  return check_gemm(buf, set, bound, stream, block);
}

GemmCheck check_gemm(const GemmBuffers& buf, int set, const GemmBound& bound, cudaStream_t stream, SampleBlock block) {
  const GemmShape& s = buf.shape;
  const GemmBlockSampling sampling = gemm_block_sampling(s.k, bound);
  std::vector<std::uint32_t> rows, cols;
  for (const auto& [i, j] : gemm_sample_positions(s.m, s.n, block.m, block.n, sampling.per_block)) {
    rows.push_back(i);
    cols.push_back(j);
  }
  const int count = static_cast<int>(rows.size());
  DeviceBuffer<std::uint32_t> drows(rows.size()), dcols(cols.size());
  DeviceBuffer<double> ref(rows.size()), abs_ref(rows.size()), got(rows.size()), sq_ref(rows.size());
  TRIAUDIT_CUDA(cudaMemcpyAsync(drows.data(), rows.data(), rows.size() * 4, cudaMemcpyHostToDevice, stream));
  TRIAUDIT_CUDA(cudaMemcpyAsync(dcols.data(), cols.data(), cols.size() * 4, cudaMemcpyHostToDevice, stream));
  if (!kernels::gemm_reference_samples(buf.a(set), buf.b(set), buf.d(set), buf.ab, buf.cd, s.m, s.n, s.k, s.transa,
                                       {drows.data(), dcols.data(), count}, ref.data(), abs_ref.data(), got.data(),
                                       stream, sq_ref.data()))
    throw Error("no reference for this combination of operand types");
  TRIAUDIT_CUDA_LAUNCH();
  std::vector<double> r(rows.size()), ar(rows.size()), g(rows.size()), sq(rows.size());
  TRIAUDIT_CUDA(cudaMemcpyAsync(r.data(), ref.data(), r.size() * 8, cudaMemcpyDeviceToHost, stream));
  TRIAUDIT_CUDA(cudaMemcpyAsync(ar.data(), abs_ref.data(), ar.size() * 8, cudaMemcpyDeviceToHost, stream));
  TRIAUDIT_CUDA(cudaMemcpyAsync(g.data(), got.data(), g.size() * 8, cudaMemcpyDeviceToHost, stream));
  TRIAUDIT_CUDA(cudaMemcpyAsync(sq.data(), sq_ref.data(), sq.size() * 8, cudaMemcpyDeviceToHost, stream));
  TRIAUDIT_CUDA(cudaStreamSynchronize(stream));

  GemmCheck c;
  c.samples = count;
  c.k = s.k;
  c.sampling = sampling;
  GemmMeanSquare mean_square;
  for (int x = 0; x < count; ++x) {
    const auto u = static_cast<std::size_t>(x);
    const GemmSample sample{g[u], r[u], ar[u], sq[u]};
    const bool ok = gemm_element_ok(sample, s.k, bound);
    if (std::isfinite(g[u])) mean_square.add(sample, s.k, bound);
    const double err = std::fabs(g[u] - r[u]);
    const double allowed = gemm_allowed_error(sample, s.k, bound);
    if (!std::isfinite(err))
      c.worst_error = INFINITY;
    else if (allowed > 0)
      c.worst_error = std::max(c.worst_error, err / allowed);
    else if (err > 0)
      c.worst_error = INFINITY;  // exact rule: any error is outside it
    if (!ok && c.wrong++ == 0) {
      std::ostringstream os;
      os.precision(10);
      os << "D(" << rows[u] << "," << cols[u] << ") = " << g[u] << ", reference " << r[u] << ", allowed error "
         << allowed;
      c.first_wrong = os.str();
    }
  }
  c.mean_square_ratio = mean_square.ratio();
  return c;
}

}  // namespace triaudit
