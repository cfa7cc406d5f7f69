// Benchmark names that read like paths (DESIGN.md):
//   <corner>/<op>/<variant>/<arg>:<value>/...   e.g. stream/triad/fp32/cache:cold/bytes:1048576
// The scripts parse them back; the characters '/' and ':' are reserved.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace triaudit {

class BenchName {
 public:
  BenchName(std::string corner, std::string op, std::string variant);
  BenchName& arg(const std::string& key, const std::string& value);
  BenchName& arg(const std::string& key, std::uint64_t value);
  std::string str() const;

 private:
  std::vector<std::string> parts_;
};

// Splits a name back into its path parts and key:value arguments (for tests and tools).
struct ParsedName {
  std::string corner, op, variant;
  std::vector<std::pair<std::string, std::string>> args;
};
ParsedName parse_bench_name(const std::string& name);

}  // namespace triaudit
