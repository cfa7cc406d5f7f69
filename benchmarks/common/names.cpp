#include "names.hpp"

#include <stdexcept>

namespace triaudit {
namespace {
void check_part(const std::string& s, const char* what) {
  if (s.empty()) throw std::invalid_argument(std::string("benchmark name: empty ") + what);
  if (s.find_first_of("/: \t") != std::string::npos)
    throw std::invalid_argument(std::string("benchmark name: ") + what + " '" + s +
                                "' may not contain '/', ':' or spaces");
}
}  // namespace

BenchName::BenchName(std::string corner, std::string op, std::string variant) {
  check_part(corner, "corner");
  check_part(op, "op");
  check_part(variant, "variant");
  parts_ = {std::move(corner), std::move(op), std::move(variant)};
}

BenchName& BenchName::arg(const std::string& key, const std::string& value) {
  check_part(key, "argument key");
  check_part(value, "argument value");
  parts_.push_back(key + ":" + value);
  return *this;
}

BenchName& BenchName::arg(const std::string& key, std::uint64_t value) { return arg(key, std::to_string(value)); }

std::string BenchName::str() const {
  std::string out;
  for (const auto& p : parts_) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

ParsedName parse_bench_name(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= name.size()) {
    const auto slash = name.find('/', start);
    parts.push_back(name.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() < 3) throw std::invalid_argument("benchmark name '" + name + "' has fewer than 3 parts");
  ParsedName out{parts[0], parts[1], parts[2], {}};
  for (std::size_t i = 3; i < parts.size(); ++i) {
    const auto colon = parts[i].find(':');
    if (colon == std::string::npos) continue;  // Google Benchmark's own suffixes (manual_time, ...)
    out.args.emplace_back(parts[i].substr(0, colon), parts[i].substr(colon + 1));
  }
  return out;
}

}  // namespace triaudit
