// Device-side fills used by every corner before timing.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace triaudit::kernels {

// x[i] = random_pm1<T>(seed, i) for i < n (see random_values.hpp).
template <typename T>
void fill_random(T* x, std::size_t n, std::uint64_t seed, cudaStream_t stream);

// x[i] = value: used to poison outputs before timing, so a kernel that writes nothing fails.
template <typename T>
void fill_value(T* x, std::size_t n, T value, cudaStream_t stream);

// x[i] = pattern_word(seed, i) for i < n words.
void fill_pattern(std::uint32_t* x, std::size_t n, std::uint64_t seed, cudaStream_t stream);

}  // namespace triaudit::kernels
