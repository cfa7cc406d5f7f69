// Filling a rank's input of a collective and counting the wrong elements of its output on the
// device, both from the rules of pattern.hpp (the host computes the same values in its tests).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "collectives/pattern.hpp"

namespace triaudit::kernels {

enum class ElementType { FP32, BF16, FP16 };

// p[i] = input_value(layout, rank, i) for i < n.
void fill_collective_input(void* p, ElementType t, std::size_t n, int rank, const OutputLayout& layout,
                           cudaStream_t stream);
// *wrong (device memory, zeroed by the caller) += the elements k < n of p that differ from
// expected_value(layout, rank, k).
void count_collective_wrong(const void* p, ElementType t, std::size_t n, int rank, const OutputLayout& layout,
                            unsigned long long* wrong, cudaStream_t stream);

}  // namespace triaudit::kernels
