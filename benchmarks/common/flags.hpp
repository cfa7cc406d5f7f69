// triaudit's own command-line flags (--name=value), parsed before Google Benchmark sees argv.
// Recognised flags are removed; --benchmark_* and anything else are left for Google Benchmark,
// which refuses what nobody knows. A bad value throws FlagError naming the flag and the value.
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace triaudit {

class FlagError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class FlagSet {
 public:
  void add_size(const std::string& name, std::uint64_t* target, const std::string& help);
  void add_int(const std::string& name, long long* target, long long min, long long max, const std::string& help);
  void add_double(const std::string& name, double* target, double min, double max, const std::string& help);
  void add_choice(const std::string& name, std::string* target, std::vector<std::string> choices,
                  const std::string& help);
  // A comma-separated subset of `choices` ("copy,triad"); "all" selects every choice.
  void add_list(const std::string& name, std::vector<std::string>* target, std::vector<std::string> choices,
                const std::string& help);

  // A switch: --name alone or --name=true turns it on, --name=false off.
  void add_switch(const std::string& name, bool* target, const std::string& help);

  void parse(int* argc, char** argv) const;
  std::string help() const;

 private:
  struct Flag {
    std::string name, help, default_text;
    std::function<void(const std::string&)> set;
    bool is_switch = false;
  };
  void add(const std::string& name, const std::string& help, std::string default_text,
           std::function<void(const std::string&)> set);
  std::vector<Flag> flags_;
};

}  // namespace triaudit
