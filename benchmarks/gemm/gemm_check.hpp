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
#include "gemm_catalogue.hpp"
#include "gemm/operands.cuh"

namespace triaudit {

struct GemmBuffers {
  // `sets` independent (A, B, D) triples with different random inputs.
  GemmBuffers(kernels::ElemType ab, kernels::ElemType cd, const GemmShape& s, int sets, cudaStream_t stream);
  const void* a(int i) const { return a_[static_cast<std::size_t>(i)].data(); }
  const void* b(int i) const { return b_[static_cast<std::size_t>(i)].data(); }
  void* d(int i) const { return d_[static_cast<std::size_t>(i)].data(); }
  int sets() const { return static_cast<int>(a_.size()); }
  std::uint64_t bytes_per_set() const;

  kernels::ElemType ab, cd;
  GemmShape shape;

 private:
  std::vector<DeviceBuffer<unsigned char>> a_, b_, d_;
};

// How many operand sets make the rotation's footprint at least three L2s (at most 16).
int rotation_sets(std::uint64_t bytes_per_set, std::uint64_t l2_bytes);

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
