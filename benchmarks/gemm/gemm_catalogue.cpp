#include "gemm_catalogue.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "names.hpp"

namespace triaudit {

const std::vector<PrecisionInfo>& gemm_precisions() {
  // Bounds (gemm_bound.hpp): {eps_out, eps_acc, input_var, input_bias, acc_bits, acc_k, promote_k,
  // acc_rz, out_bits}. eps_out: twice the output's largest relative half-ulp (FP32 2^-24, FP16
  // 2^-11, BF16 2^-8; FP8 writes BF16); TF32 also carries the bias of its inputs' conversion to 10
  // mantissa bits (truncated, a product shrinks by < 2^-9). eps_acc: a fixed share for FP32
  // accumulation (FP32, TF32, FP16, BF16, the ladder), 2^-16, far above its ~1e-7 per step and far
  // below what one missing k-tile costs; the accumulators of FP16 and FP8 have their error modelled
  // instead, from K, their ulp (FP16 10 bits, FP8's partial sums ~13) and their step (the MMA
  // instruction's k), rounding to nearest or toward zero, whichever errs more. TF32's conversion:
  // truncation to 10 bits, mean square < 2^-20/3, mean < 2^-11 of each input. FP8 promotes its
  // partial sums into FP32 (cuBLASLt's default, at an interval it does not document: 512 is
  // modelled, so a period up to that passes; the simulation checks 128 and 512); fast accumulation
  // never does. FP64 and FP32 accumulate with
  // IEEE FMAs (to nearest). tests/cpu/test_gemm_bound.cpp simulates each at K = 256..16384: every
  // correct result is inside its bound with room, the mean square of its errors inside the model,
  // one dropped k-tile of 64 is caught, and a cheaper arithmetic's mean square is not.
  static const std::vector<PrecisionInfo> p = {
      {GemmPrecision::FP64, "fp64", 8, 8, 80, false, {0x1p-50, 0x1p-44, 0, 0, 52, 4, 0, false, 52}, "flops"},
      {GemmPrecision::FP32, "fp32", 4, 4, 80, false, {0x1p-21, 0x1p-16, 0, 0, 23, 1, 0, false, 23}, "flops"},
      {GemmPrecision::TF32,
       "tf32",
       4,
       4,
       80,
       false,
       {0x1p-9, 0x1p-16, 0x1p-20 / 3, 0x1p-11, 23, 8, 0, true, 23},
       "flops"},
      {GemmPrecision::FP16, "fp16", 2, 2, 80, false, {0x1p-10, 0x1p-16, 0, 0, 23, 16, 0, true, 10}, "flops"},
      {GemmPrecision::FP16Acc16, "fp16acc16", 2, 2, 80, false, {0x1p-9, 0, 0, 0, 10, 16, 0, true, 10}, "flops"},
      {GemmPrecision::BF16, "bf16", 2, 2, 80, false, {0x1p-7, 0x1p-16, 0, 0, 23, 16, 0, true, 7}, "flops"},
      {GemmPrecision::FP8, "fp8e4m3", 1, 2, 89, true, {0x1p-7, 0, 0, 0, 13, 32, 512, true, 7}, "flops"},
      // cuBLASLt's FP8 fast accumulation: partial sums are not periodically promoted to full FP32
      // (faster on Hopper, less accurate for long K); measured beside the default, never instead.
      {GemmPrecision::FP8FastAccum, "fp8e4m3fast", 1, 2, 89, true, {0x1p-7, 0, 0, 0, 13, 32, 0, true, 7}, "flops"},
      {GemmPrecision::INT8, "int8", 1, 4, 75, true, {}, "ops"},
  };
  return p;
}

const PrecisionInfo& precision_info(GemmPrecision p) {
  for (const auto& i : gemm_precisions())
    if (i.precision == p) return i;
  throw std::invalid_argument("unknown GEMM precision");
}

const PrecisionInfo& precision_by_name(const std::string& name) {
  for (const auto& i : gemm_precisions())
    if (name == i.name) return i;
  throw std::invalid_argument("unknown GEMM precision '" + name + "'");
}

bool fp64_has_tensor_cores(int cc) { return cc == 80 || cc == 90 || cc == 100; }

bool precision_supported(GemmPrecision p, int cc, std::string* why) {
  const PrecisionInfo& i = precision_info(p);
  if (cc < i.min_cc) {
    if (why)
      *why = std::string(i.name) + " needs compute capability " + std::to_string(i.min_cc / 10) + "." +
             std::to_string(i.min_cc % 10) + " or newer; this device is " + std::to_string(cc / 10) + "." +
             std::to_string(cc % 10);
    return false;
  }
  return true;
}

std::vector<GemmShape> square_shapes(std::uint64_t max_dim) {
  std::vector<GemmShape> out;
  for (std::uint64_t d = 256; d <= max_dim; d *= 2)
    for (bool tn : {false, true}) out.push_back({d, d, d, "square", tn});
  return out;
}

std::vector<GemmShape> llm_shapes() {
  // y[T x out] = x[T x in] W^T, W[out x in], all row-major in PyTorch: the linear layers of
  // Llama-2-7B (hidden 4096, MLP 11008) and Llama-2-70B (hidden 8192, MLP 28672, grouped-query
  // attention with 8 KV heads: QKV = 8192 + 2 x 1024 outputs). PyTorch hands cuBLAS (column-major)
  // y^T = W x^T: cublasGemmEx(T, N, m = out, n = T, k = in, A = W, B = x). So decode (T = 1, 16)
  // is a matrix-vector-like GEMM with a tiny n, the case cuBLASLt's FP8 kernels accept
  // (D's leading dimension is out_features, a multiple of 16).
  struct Layer {
    const char* name;
    std::uint64_t in, out;
  };
  const std::vector<std::pair<const char*, std::vector<Layer>>> models = {
      {"llama2-7b",
       {{"qkv", 4096, 12288}, {"attn_out", 4096, 4096}, {"mlp_up", 4096, 11008}, {"mlp_down", 11008, 4096}}},
      {"llama2-70b",
       {{"qkv", 8192, 10240}, {"attn_out", 8192, 8192}, {"mlp_up", 8192, 28672}, {"mlp_down", 28672, 8192}}},
  };
  std::vector<GemmShape> out;
  for (const auto& [model, layers] : models)
    for (const auto& l : layers)
      for (std::uint64_t tokens : {1ULL, 16ULL, 4096ULL})
        out.push_back({l.out, tokens, l.in, std::string(model) + "-" + l.name, true, tokens});
  return out;
}

std::vector<GemmShape> misaligned_shapes() {
  std::vector<GemmShape> out;
  for (std::uint64_t d : {4095ULL, 4096ULL, 8191ULL, 8192ULL, 8193ULL}) out.push_back({d, d, d, "misaligned", false});
  return out;
}

std::vector<GemmShape> ceiling_shapes() {
  std::vector<GemmShape> out;
  for (std::uint64_t m : {4096ULL, 8192ULL, 16384ULL})
    for (std::uint64_t n : {4096ULL, 8192ULL})
      for (std::uint64_t k : {4096ULL, 8192ULL}) out.push_back({m, n, k, "ceiling", true});
  return out;
}

std::vector<GemmShape> mamf_ceiling_shapes() {
  // mamf-finder's --m_range 0 20480 256 is np.arange(256, 20480, 256): M = 256 .. 20224. Its
  // torch.mm(A[M x K], B[K x N]), B a transposed view of an N x K tensor, is C^T = B^T A^T to
  // cuBLAS: TN with cuBLAS's m = N, n = M. So M, the dimension it varies, is cuBLAS's n.
  std::vector<GemmShape> out;
  for (std::uint64_t torch_m = 256; torch_m < 20480; torch_m += 256)
    out.push_back({4096, torch_m, 4096, "ceiling", true});
  return out;
}

int gemms_per_region(double seconds_per_gemm) {
  if (!(seconds_per_gemm > 0)) return 1;
  return static_cast<int>(std::clamp(std::ceil(kMinRegionSeconds / seconds_per_gemm), 1.0, 31.0));
}

bool selection_done(const std::vector<CandidateTiming>& c, double min_seconds, int min_regions) {
  bool any = false;
  for (const CandidateTiming& t : c) {
    if (!t.runs) continue;
    any = true;
    if (t.seconds < min_seconds || t.regions < min_regions) return false;
  }
  return any;
}

int fastest_candidate(const std::vector<CandidateTiming>& c) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(c.size()); ++i) {
    const CandidateTiming& t = c[static_cast<std::size_t>(i)];
    if (!t.runs || t.gemms == 0) continue;
    if (best < 0 || t.mean() < c[static_cast<std::size_t>(best)].mean()) best = i;
  }
  return best;
}

std::uint64_t aligned_matrix_bytes(std::uint64_t rows, std::uint64_t cols, int elem_bytes) {
  const std::uint64_t bytes = rows * cols * static_cast<std::uint64_t>(elem_bytes);
  return (bytes + 255) / 256 * 256;
}

std::uint64_t operand_set_bytes(const GemmShape& s, int a_bytes, int c_bytes) {
  return aligned_matrix_bytes(s.m, s.k, a_bytes) + aligned_matrix_bytes(s.k, s.n, a_bytes) +
         aligned_matrix_bytes(s.m, s.n, c_bytes);
}

int rotation_sets(std::uint64_t bytes_per_set, std::uint64_t l2_bytes) {
  if (bytes_per_set == 0) return 1;
  const std::uint64_t want = (3 * l2_bytes + bytes_per_set - 1) / bytes_per_set;
  return static_cast<int>(std::clamp<std::uint64_t>(want, 1, 1u << 20));
}

std::string gemm_case_name(const std::string& impl, GemmPrecision p, const GemmShape& s) {
  if (s.tokens > 0)
    return BenchName("gemm", impl, precision_info(p).name).arg("llm", s.family).arg("tokens", s.tokens).str();
  return BenchName("gemm", impl, precision_info(p).name)
      .arg("layout", s.transa ? "tn" : "nn")
      .arg("m", s.m)
      .arg("n", s.n)
      .arg("k", s.k)
      .str();
}

}  // namespace triaudit
