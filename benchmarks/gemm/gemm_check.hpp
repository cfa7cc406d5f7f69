// Operand buffers for one GEMM shape (several sets, rotated so small shapes are not timed out
// of L2) and the check of D against an FP64 reference at sampled positions: the four corners,
// the edges' ends and 1020 pseudo-random elements, each the full K-long dot product.
// Shared by triaudit_gemm and the device tests.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../common/cuda_raii.hpp"
#include "gemm/operands.cuh"
#include "gemm_catalogue.hpp"

namespace triaudit {

struct GemmBuffers {
  // `sets` independent (A, B, D) triples with different random inputs.
  GemmBuffers(kernels::ElemType ab, kernels::ElemType cd, const GemmShape& s, int sets, cudaStream_t stream);
  const void* a(int i) const { return a_.data() + static_cast<std::uint64_t>(i) * a_stride_; }
  const void* b(int i) const { return b_.data() + static_cast<std::uint64_t>(i) * b_stride_; }
  void* d(int i) const { return d_.data() + static_cast<std::uint64_t>(i) * d_stride_; }
  int sets() const { return sets_; }
  std::uint64_t bytes_per_set() const { return a_stride_ + b_stride_ + d_stride_; }

  kernels::ElemType ab, cd;
  GemmShape shape;

 private:
  int sets_;
  std::uint64_t a_stride_, b_stride_, d_stride_;  // 256-byte aligned slices of one allocation each
  DeviceBuffer<unsigned char> a_, b_, d_;
};

struct GemmCheck {
  int samples = 0, wrong = 0;
  double worst_error = 0;  // max |D - ref| / sum |a b|
  std::string first_wrong;
  bool ok() const { return samples > 0 && wrong == 0; }
  std::string describe() const;
};

// Compares D of set `set` with the reference. tolerance 0 means exact (integers).
GemmCheck check_gemm(const GemmBuffers& buf, int set, double tolerance, cudaStream_t stream);

}  // namespace triaudit
