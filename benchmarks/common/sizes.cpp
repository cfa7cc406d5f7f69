#include "sizes.hpp"

#include <cctype>
#include <limits>
#include <stdexcept>

namespace triaudit {
namespace {

std::uint64_t unit_multiplier(std::string unit, const std::string& text) {
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.empty() || unit == "b") return 1;
  if (unit == "k" || unit == "kib") return 1ULL << 10;
  if (unit == "m" || unit == "mib") return 1ULL << 20;
  if (unit == "g" || unit == "gib") return 1ULL << 30;
  if (unit == "t" || unit == "tib") return 1ULL << 40;
  if (unit == "kb") return 1000ULL;
  if (unit == "mb") return 1000ULL * 1000;
  if (unit == "gb") return 1000ULL * 1000 * 1000;
  if (unit == "tb") return 1000ULL * 1000 * 1000 * 1000;
  throw std::invalid_argument("'" + text + "' has an unknown unit '" + unit +
                              "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)");
}

}  // namespace

std::uint64_t parse_bytes(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    if (text[i] == '-') throw std::invalid_argument("'" + text + "' is negative: a size must be positive");
    ++i;
  }
  const std::size_t digits_begin = i;
  std::uint64_t value = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    const auto d = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - d) / 10)
      throw std::invalid_argument("'" + text + "' is too large");
    value = value * 10 + d;
  }
  if (i == digits_begin) throw std::invalid_argument("'" + text + "' is not a size (e.g. 4096, 64MiB, 1GiB)");
  std::size_t unit_begin = i;
  while (unit_begin < text.size() && std::isspace(static_cast<unsigned char>(text[unit_begin]))) ++unit_begin;
  std::size_t unit_end = text.size();
  while (unit_end > unit_begin && std::isspace(static_cast<unsigned char>(text[unit_end - 1]))) --unit_end;
  const std::string unit = text.substr(unit_begin, unit_end - unit_begin);
  for (char c : unit)
    if (!std::isalpha(static_cast<unsigned char>(c)))
      throw std::invalid_argument("'" + text + "' is not a size (e.g. 4096, 64MiB, 1GiB)");
  const std::uint64_t mult = unit_multiplier(unit, text);
  if (value > std::numeric_limits<std::uint64_t>::max() / mult)
    throw std::invalid_argument("'" + text + "' is too large");
  if (value == 0) throw std::invalid_argument("'" + text + "' is zero: a size must be positive");
  return value * mult;
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  std::uint64_t v = bytes;
  while (u < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + " " + units[u];
}

std::vector<std::uint64_t> power_of_two_sweep(std::uint64_t lo, std::uint64_t hi) {
  std::vector<std::uint64_t> out;
  if (lo == 0) lo = 1;
  std::uint64_t p = 1;
  while (p < lo && p <= (std::numeric_limits<std::uint64_t>::max() >> 1)) p <<= 1;
  for (; p >= lo && p <= hi; p <<= 1) {
    out.push_back(p);
    if (p > (std::numeric_limits<std::uint64_t>::max() >> 1)) break;
  }
  return out;
}

}  // namespace triaudit
