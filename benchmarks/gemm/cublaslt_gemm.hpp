// One cuBLASLt matmul configuration: descriptors for a precision and shape, the heuristic's
// candidate algorithms timed against each other (the fastest is kept and recorded, as serious
// users tune), and the call itself.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "gemm/operands.cuh"
#include "gemm_catalogue.hpp"
#include "gemm_check.hpp"

namespace triaudit {

struct LtTypes {
  cudaDataType_t ab, cd, scale;
  cublasComputeType_t compute;
  kernels::ElemType ab_elem, cd_elem;
};
LtTypes lt_types(GemmPrecision p);

class LtHandle {
 public:
  LtHandle();
  ~LtHandle();
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  cublasLtHandle_t get() const { return h_; }

 private:
  cublasLtHandle_t h_ = nullptr;
};

// cuBLAS's advice: 32 MiB of workspace on Hopper and newer, 4 MiB before.
std::size_t lt_workspace_bytes(int cc);

// How much time LtGemm::autotune spends choosing (the probe that sizes shapes asks for little).
struct AutotuneEffort {
  double warmup_s = 0.2;                    // back-to-back GEMMs before the first timed region
  double min_seconds_per_candidate = 0.02;  // timed regions per candidate, at least
  int min_regions = 3;
};

class LtGemm {
 public:
  LtGemm(const LtHandle& lt, GemmPrecision p, const GemmShape& shape, std::size_t workspace_bytes);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Asks the heuristic for up to `candidates` algorithms, times each on these buffers and keeps
  // the fastest by mean time per GEMM (selection_done / fastest_candidate in gemm_catalogue.hpp):
  // `ops` GEMMs per region on rotated operand sets, queued behind a held stream; a warm-up first,
  // then the candidates' regions alternate until each has `effort` worth. The selection time is
  // for choosing only; no reported figure comes from it.
  // Throws SkipCase when the library offers nothing for the shape, Error when nothing runs.
  void autotune(const GemmBuffers& buf, void* workspace, cudaStream_t s, int ops, int candidates = 8,
                AutotuneEffort effort = {});
  void run(const void* a, const void* b, void* d, void* workspace, cudaStream_t s) const;

  std::string chosen_description() const;  // "algo 6 tile 20 stages 12 splitk 1 (candidate 2 of 8)"
  int algo_id() const;
  int candidates_tried() const { return tried_; }
  double tuned_seconds() const { return best_seconds_; }  // the chosen one's mean per GEMM in the selection

 private:
  cublasStatus_t call(const cublasLtMatmulAlgo_t* algo, const void* a, const void* b, void* d, void* ws,
                      cudaStream_t s) const;
  const LtHandle& lt_;
  GemmPrecision precision_;
  GemmShape shape_;
  std::size_t workspace_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  alignas(8) unsigned char alpha_[8] = {}, beta_[8] = {};
  cublasLtMatmulAlgo_t algo_{};
  bool tuned_ = false;
  int tried_ = 0, chosen_ = -1;
  double best_seconds_ = 0;
};

}  // namespace triaudit
