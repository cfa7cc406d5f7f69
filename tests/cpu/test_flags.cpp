#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flags.hpp"

using triaudit::FlagError;
using triaudit::FlagSet;

namespace {
struct Argv {
  explicit Argv(std::vector<std::string> a) : args(std::move(a)) {
    for (auto& s : args) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
    argc = static_cast<int>(args.size());
  }
  std::vector<std::string> args;
  std::vector<char*> ptrs;
  int argc;
};
}  // namespace

TEST(FlagSet, ConsumesOwnFlagsAndLeavesTheRest) {
  std::uint64_t bytes = 1;
  long long dev = 0;
  std::vector<std::string> ops = {"copy"};
  FlagSet f;
  f.add_size("max-bytes", &bytes, "");
  f.add_int("device", &dev, 0, 7, "");
  f.add_list("ops", &ops, {"copy", "triad", "dot"}, "");
  Argv a({"prog", "--max-bytes=2GiB", "--benchmark_filter=triad", "--device=3", "--ops=triad,dot"});
  f.parse(&a.argc, a.ptrs.data());
  EXPECT_EQ(bytes, 2ULL << 30);
  EXPECT_EQ(dev, 3);
  EXPECT_EQ(ops, (std::vector<std::string>{"triad", "dot"}));
  ASSERT_EQ(a.argc, 2);
  EXPECT_STREQ(a.ptrs[1], "--benchmark_filter=triad");
  EXPECT_EQ(a.ptrs[2], nullptr);
}

TEST(FlagSet, BadValuesNameTheFlag) {
  std::uint64_t bytes = 1;
  long long dev = 0;
  double t = 0;
  std::string mode = "hot";
  std::vector<std::string> ops;
  FlagSet f;
  f.add_size("max-bytes", &bytes, "");
  f.add_int("device", &dev, 0, 7, "");
  f.add_double("min-time", &t, 0, 10, "");
  f.add_choice("mode", &mode, {"hot", "cold"}, "");
  f.add_list("ops", &ops, {"copy", "triad"}, "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--max-bytes=-5", "--max-bytes=-5"}, {"--max-bytes", "--max-bytes needs a value"},
      {"--device=8", "out of range"},       {"--device=x", "not an integer"},
      {"--min-time=nan", "not a number"},   {"--min-time=11", "out of range"},
      {"--mode=warm", "must be one of"},    {"--ops=copy,axpy", "'axpy'"}};
  for (const auto& [arg, needle] : cases) {
    Argv a({"prog", arg});
    try {
      f.parse(&a.argc, a.ptrs.data());
      FAIL() << "accepted " << arg;
    } catch (const FlagError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << arg << " -> " << e.what();
    }
  }
  EXPECT_EQ(bytes, 1u);  // nothing changed by refused values
}

TEST(FlagSet, ListAllSelectsEveryChoice) {
  std::vector<std::string> ops;
  FlagSet f;
  f.add_list("ops", &ops, {"copy", "triad"}, "");
  Argv a({"prog", "--ops=all"});
  f.parse(&a.argc, a.ptrs.data());
  EXPECT_EQ(ops, (std::vector<std::string>{"copy", "triad"}));
  EXPECT_NE(f.help().find("--ops=VALUE"), std::string::npos);
}
