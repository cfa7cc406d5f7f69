// Every triaudit case measures inside its first iteration (measure.hpp): Google Benchmark must
// call it exactly once per repetition, and must not rename it. Checked with the real library.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "suite.hpp"

namespace {
int g_calls = 0;

struct Names : benchmark::BenchmarkReporter {
  std::vector<std::string> seen;
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs)
      if (r.run_type == Run::RT_Iteration) seen.push_back(r.benchmark_name());
  }
};
}  // namespace

TEST(OneCallPerRepetition, GoogleBenchmarkAcceptsTheFirstCall) {
  benchmark::RegisterBenchmark("corner/op/variant/bytes:8", [](benchmark::State& st) {
    ++g_calls;
    for (auto _ : st) st.SetIterationTime(1e-6);  // a microsecond per operation, as a small case reports
  })->UseManualTime();
  char prog[] = "triaudit_test", reps[] = "--benchmark_repetitions=5";
  char* argv0[] = {prog, reps};
  std::vector<char*> args = triaudit::with_one_iteration_per_call(2, argv0);
  int argc = static_cast<int>(args.size()) - 1;
  ASSERT_EQ(argc, 3);
  benchmark::Initialize(&argc, args.data());
  Names names;
  benchmark::RunSpecifiedBenchmarks(&names);
  EXPECT_EQ(g_calls, 5);
  ASSERT_EQ(names.seen.size(), 5u);
  EXPECT_EQ(names.seen[0], "corner/op/variant/bytes:8/manual_time");  // no "/iterations:1"
}

TEST(OneCallPerRepetition, TheUsersOwnMinTimeIsKept) {
  char prog[] = "x", mine[] = "--benchmark_min_time=2";
  char* argv0[] = {prog, mine};
  const std::vector<char*> args = triaudit::with_one_iteration_per_call(2, argv0);
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(std::string(args[1]), "--benchmark_min_time=2");
  EXPECT_EQ(args[2], nullptr);
}
