// Byte sizes: parsing what users type ("1GiB", "512MB", "4096"), printing them, and the
// power-of-two sweeps the benchmarks register. Pure host code, unit-tested.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace triaudit {

// Parses a positive byte count: a plain integer, or a number with a unit
// (B, KB, MB, GB, TB decimal; KiB, MiB, GiB, TiB binary; K/M/G/T alone are binary).
// Throws std::invalid_argument naming the text and what is wrong.
std::uint64_t parse_bytes(const std::string& text);

// "1 GiB", "512 KiB", "3000 B": exact binary units where they divide, bytes otherwise.
std::string format_bytes(std::uint64_t bytes);

// Powers of two from `lo` to `hi` inclusive (both rounded to powers of two: lo up, hi down).
std::vector<std::uint64_t> power_of_two_sweep(std::uint64_t lo, std::uint64_t hi);

}  // namespace triaudit
