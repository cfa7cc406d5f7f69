// Operand buffers for one GEMM shape (several sets, rotated so small shapes are not timed out
// of L2) and the check of D against an FP64 reference at sampled positions (gemm_bound.hpp: the
// corners, in every 64 x 64 block enough elements that a k-tile lost in it is caught, 1020 more at
// random), each the full K-long dot product, judged element by element by the precision's bound and,
// over all samples, by the mean square of the errors against the declared arithmetic's.
// Shared by triaudit_gemm and the device tests.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuda_raii.hpp"
#include "gemm/operands.cuh"
#include "gemm_bound.hpp"
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
  double worst_error = 0;  // max |D - ref| / the error allowed there (> 1: outside the bound)
  std::string first_wrong;
  // The errors' mean square over the declared arithmetic's model (> kGemmMeanSquareLimit: a cheaper
  // arithmetic than the one declared, e.g. TF32 inputs for FP32).
  double mean_square_ratio = 0;
  GemmBlockSampling sampling;  // samples per block, and how likely a k-tile lost in one CTA is caught
  std::uint64_t k = 0;
  bool ok() const { return samples > 0 && wrong == 0 && !(mean_square_ratio > kGemmMeanSquareLimit); }
  std::string describe() const;
  // "" when a k-tile lost in one CTA is caught with >= kGemmLostTileCatch, else a sentence saying how likely.
  std::string sampling_note() const;
};

// The block of D in which elements are sampled (gemm_sample_positions): 64 x 64, or the CTA tile
// of a kernel that writes less; how many per block follows from K and the bound (gemm_block_sampling).
struct SampleBlock {
  std::uint64_t m = kGemmSampleBlock, n = kGemmSampleBlock;
};

// Compares D of set `set` with the reference under `bound` (exact for integers).
GemmCheck check_gemm(const GemmBuffers& buf, int set, const GemmBound& bound, cudaStream_t stream,
                     SampleBlock block = {});

// Fills D of set `set` with NaN (0xFF bytes; -1 for INT32), so a launch that writes nothing, or
// misses a tile, cannot pass on what an earlier launch left.
void poison_d(const GemmBuffers& buf, int set, cudaStream_t stream);

// The checked launch every case uses, before and after timing: poison D(set), run `launch` once
// (it must write D of `set`), check it.
GemmCheck launch_and_check(const GemmBuffers& buf, int set, const GemmBound& bound, const std::function<void()>& launch,
                           cudaStream_t stream, SampleBlock block = {});

}  // namespace triaudit
