#include "cublaslt_gemm.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>

#include "cublas_check.hpp"
#include "cuda_raii.hpp"
#include "gpu_timer.hpp"
#include "stream_latch.hpp"

namespace triaudit {

LtTypes lt_types(GemmPrecision p) {
  using E = kernels::ElemType;
  switch (p) {
    case GemmPrecision::FP64:
      return {CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, E::F64, E::F64};
    case GemmPrecision::FP32:
      return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, E::F32, E::F32};
    case GemmPrecision::TF32:
      return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, E::F32, E::F32};
    case GemmPrecision::FP16:
      return {CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, E::F16, E::F16};
    case GemmPrecision::FP16Acc16:
      return {CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F, E::F16, E::F16};
    case GemmPrecision::BF16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, E::BF16, E::BF16};
    case GemmPrecision::FP8:
    case GemmPrecision::FP8FastAccum:
      return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, E::E4M3, E::BF16};
    case GemmPrecision::INT8:
      return {CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, E::I8, E::I32};
  }
  throw Error("unknown precision");
}

LtHandle::LtHandle() { TRIAUDIT_CUBLAS(cublasLtCreate(&h_)); }
LtHandle::~LtHandle() { (void)cublasLtDestroy(h_); }

std::size_t lt_workspace_bytes(int cc) { return cc >= 90 ? (32u << 20) : (4u << 20); }

LtGemm::LtGemm(const LtHandle& lt, GemmPrecision p, const GemmShape& s, std::size_t workspace)
    : lt_(lt), precision_(p), shape_(s), workspace_(workspace) {
  const LtTypes t = lt_types(p);
  TRIAUDIT_CUBLAS(cublasLtMatmulDescCreate(&op_, t.compute, t.scale));
  const cublasOperation_t ta = s.transa ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
  TRIAUDIT_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  TRIAUDIT_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (p == GemmPrecision::FP8FastAccum) {
    const std::int8_t fast = 1;
    TRIAUDIT_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  }
  if (s.transa)
    TRIAUDIT_CUBLAS(cublasLtMatrixLayoutCreate(&a_, t.ab, s.k, s.m, static_cast<std::int64_t>(s.k)));
  else
    TRIAUDIT_CUBLAS(cublasLtMatrixLayoutCreate(&a_, t.ab, s.m, s.k, static_cast<std::int64_t>(s.m)));
  TRIAUDIT_CUBLAS(cublasLtMatrixLayoutCreate(&b_, t.ab, s.k, s.n, static_cast<std::int64_t>(s.k)));
  TRIAUDIT_CUBLAS(cublasLtMatrixLayoutCreate(&d_, t.cd, s.m, s.n, static_cast<std::int64_t>(s.m)));
  // alpha = 1, beta = 0 in the scale type.
  switch (t.scale) {
    case CUDA_R_64F: {
      const double one = 1, zero = 0;
      std::memcpy(alpha_, &one, 8);
      std::memcpy(beta_, &zero, 8);
      break;
    }
    case CUDA_R_16F: {
      const __half one = __float2half(1.f), zero = __float2half(0.f);
      std::memcpy(alpha_, &one, 2);
      std::memcpy(beta_, &zero, 2);
      break;
    }
    case CUDA_R_32I: {
      const std::int32_t one = 1, zero = 0;
      std::memcpy(alpha_, &one, 4);
      std::memcpy(beta_, &zero, 4);
      break;
    }
    default: {
      const float one = 1, zero = 0;
      std::memcpy(alpha_, &one, 4);
      std::memcpy(beta_, &zero, 4);
      break;
    }
  }
}

LtGemm::~LtGemm() {
  if (d_) (void)cublasLtMatrixLayoutDestroy(d_);
  if (b_) (void)cublasLtMatrixLayoutDestroy(b_);
  if (a_) (void)cublasLtMatrixLayoutDestroy(a_);
  if (op_) (void)cublasLtMatmulDescDestroy(op_);
}

cublasStatus_t LtGemm::call(const cublasLtMatmulAlgo_t* algo, const void* a, const void* b, void* d, void* ws,
                            cudaStream_t s) const {
  return cublasLtMatmul(lt_.get(), op_, alpha_, a, a_, b, b_, beta_, d, d_, d, d_, algo, ws, workspace_, s);
}

void LtGemm::autotune(const GemmBuffers& buf, void* ws, cudaStream_t s, int ops, int candidates,
                      AutotuneEffort effort) {
  const void* a = buf.a(0);
  const void* b = buf.b(0);
  void* d = buf.d(0);
  cublasLtMatmulPreference_t pref = nullptr;
  TRIAUDIT_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(candidates));
  int returned = 0;
  const cublasStatus_t hs = [&] {
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                             &workspace_, sizeof workspace_);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    return cublasLtMatmulAlgoGetHeuristic(lt_.get(), op_, a_, b_, d_, d_, pref, candidates, results.data(), &returned);
  }();
  (void)cublasLtMatmulPreferenceDestroy(pref);
  // The heuristic answers NOT_SUPPORTED when no kernel exists for the layout, e.g. FP8 or INT8
  // with M = 1, where D's leading dimension (M elements) breaks the 16-byte alignment rule: a
  // limit of the library for this shape, reported as a skip, not as a failure of the suite.
  if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && returned == 0))
    throw SkipCase("cuBLASLt offers no algorithm for this precision, layout and shape (" +
                   std::string(cublasGetStatusString(hs == CUBLAS_STATUS_SUCCESS ? CUBLAS_STATUS_NOT_SUPPORTED : hs)) +
                   "; FP8/INT8 need 16-byte-aligned leading dimensions)");
  TRIAUDIT_CUBLAS(hs);

  // The candidates that launch, each checked once; the others are left out (a shape a kernel
  // does not support).
  std::string last_error;
  bool only_unsupported = true;
  std::vector<CandidateTiming> timing(static_cast<std::size_t>(returned));
  for (int i = 0; i < returned; ++i) {
    if (results[static_cast<std::size_t>(i)].state != CUBLAS_STATUS_SUCCESS) continue;
    if (const cublasStatus_t st = call(&results[static_cast<std::size_t>(i)].algo, a, b, d, ws, s);
        st != CUBLAS_STATUS_SUCCESS) {
      last_error = cublasGetStatusString(st);
      only_unsupported = only_unsupported && st == CUBLAS_STATUS_NOT_SUPPORTED;
      continue;
    }
    timing[static_cast<std::size_t>(i)].runs = true;
  }
  const int first = [&] {
    for (int i = 0; i < returned; ++i)
      if (timing[static_cast<std::size_t>(i)].runs) return i;
    return -1;
  }();
  if (first >= 0) {
    Event start, stop;
    StreamLatch latch;
    int set = 0;
    auto region = [&](const cublasLtMatmulAlgo_t* algo) {
      latch.hold(s);
      start.record(s);
      for (int o = 0; o < ops; ++o) {
        TRIAUDIT_CUBLAS(call(algo, buf.a(set), buf.b(set), buf.d(set), ws, s));
        set = (set + 1) % buf.sets();
      }
      stop.record(s);
      latch.release();
      stop.synchronize();
      latch.check();
      return Event::seconds_between(start, stop);
    };
    // Warm-up first (the clock falls while the host prepares), with the heuristic's first choice;
    // then one region per candidate per round, in turn, until each has its share of time.
    run_selection(
        timing, first, ops, effort.warmup_s, effort.min_seconds_per_candidate, effort.min_regions,
        [&](int i) { return region(&results[static_cast<std::size_t>(i)].algo); }, [] { return HostTimer::now(); });
    const int best = fastest_candidate(timing);
    for (const CandidateTiming& t : timing) tried_ += t.runs ? 1 : 0;
    algo_ = results[static_cast<std::size_t>(best)].algo;
    best_seconds_ = timing[static_cast<std::size_t>(best)].mean();
    chosen_ = best;
    tuned_ = true;
  }
  if (!tuned_ && only_unsupported) throw SkipCase("cuBLASLt supports no candidate for this shape: " + last_error);
  if (!tuned_) throw Error("no cuBLASLt candidate ran: " + last_error);
}

void LtGemm::run(const void* a, const void* b, void* d, void* ws, cudaStream_t s) const {
  if (!tuned_) throw Error("LtGemm::run before autotune");
  TRIAUDIT_CUBLAS(call(&algo_, a, b, d, ws, s));
}

int LtGemm::algo_id() const {
  int id = -1;
  std::size_t written = 0;
  (void)cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &written);
  return id;
}

std::string LtGemm::chosen_description() const {
  auto attr = [&](cublasLtMatmulAlgoConfigAttributes_t which) {
    std::uint32_t v = 0;
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo_, which, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS)
      return std::string("?");
    return std::to_string(v);
  };
  return "algo " + std::to_string(algo_id()) + " tile " + attr(CUBLASLT_ALGO_CONFIG_TILE_ID) + " stages " +
         attr(CUBLASLT_ALGO_CONFIG_STAGES_ID) + " splitk " + attr(CUBLASLT_ALGO_CONFIG_SPLITK_NUM) + " (candidate " +
         std::to_string(chosen_ + 1) + " of " + std::to_string(tried_) + " timed)";
}

}  // namespace triaudit
