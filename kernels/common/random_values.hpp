// Deterministic pseudo-random inputs in [-1, 1), computable on the device (to fill gigabytes
// quickly) and on the host (to compute the expected result independently). Value i of stream
// `seed` is a pure function of (seed, i): no state, no order dependence.
#pragma once
#include <cstdint>

#include "host_device.hpp"

namespace triaudit {

// SplitMix64 finaliser: a well-mixed 64-bit hash of the counter.
TRIAUDIT_HD inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1) with 24 random bits: exactly representable in float and double, so the
// host and the device produce bit-identical inputs. Never zero-filled, never all equal.
template <typename T>
TRIAUDIT_HD inline T random_pm1(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t h = mix64(seed * 0xD1B54A32D192ED03ULL + i);
  const auto r = static_cast<std::int32_t>(h >> 40);  // 0 .. 2^24-1
  return static_cast<T>(r - (1 << 23)) * static_cast<T>(1.0 / (1 << 23));
}

// A 32-bit word of a byte pattern: what copies move and what their check expects.
TRIAUDIT_HD inline std::uint32_t pattern_word(std::uint64_t seed, std::uint64_t i) {
  return static_cast<std::uint32_t>(mix64(seed * 0x9E6C63D0676A9A99ULL + i) >> 16);
}

}  // namespace triaudit
