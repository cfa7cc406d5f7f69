// Every triaudit case measures inside its first iteration (measure.hpp): Google Benchmark must
// call it exactly once per repetition, and must not rename it. Checked with the real library.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flags.hpp"
#include "stream_latch.hpp"
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

// A user's --benchmark_min_time used to be passed on: Google Benchmark then called each case
// again and again to fill that much reported time. It becomes the regions' time instead.
TEST(OneCallPerRepetition, AUsersMinTimeBecomesTheRegionsTime) {
  char prog[] = "x", mine[] = "--benchmark_min_time=0.5", other[] = "--benchmark_min_time=2s",
       iters[] = "--benchmark_min_time=10x";
  char* argv0[] = {prog, mine};
  double seconds = -1;
  std::vector<char*> args = triaudit::with_one_iteration_per_call(2, argv0, &seconds);
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(std::string(args[1]).rfind("--benchmark_min_time=", 0), 0u);
  EXPECT_NE(std::string(args[1]), "--benchmark_min_time=0.5");
  EXPECT_EQ(seconds, 0.5);
  EXPECT_EQ(args[2], nullptr);
  char* argv1[] = {prog, other};
  (void)triaudit::with_one_iteration_per_call(2, argv1, &seconds);
  EXPECT_EQ(seconds, 2.0);
  char* argv2[] = {prog, iters};
  EXPECT_THROW(triaudit::with_one_iteration_per_call(2, argv2, &seconds), triaudit::FlagError);
}

TEST(OneCallPerRepetition, HoldsWithAUsersMinTime) {
  static int calls = 0;
  benchmark::RegisterBenchmark("corner/op/min_time/bytes:8", [](benchmark::State& st) {
    ++calls;
    for (auto _ : st) st.SetIterationTime(1e-6);
  })->UseManualTime();
  char prog[] = "x", mine[] = "--benchmark_min_time=0.02", reps[] = "--benchmark_repetitions=3";
  char* argv0[] = {prog, mine, reps};
  double seconds = 0;
  std::vector<char*> args = triaudit::with_one_iteration_per_call(3, argv0, &seconds);
  int argc = static_cast<int>(args.size()) - 1;
  benchmark::Initialize(&argc, args.data());
  Names names;
  benchmark::RunSpecifiedBenchmarks(&names, "min_time");
  EXPECT_EQ(calls, 3);  // Google Benchmark's own min time would have called it hundreds of times
}

TEST(GoogleBenchmarkFlags, RepetitionsBelowOneAreRefused) {
  char prog[] = "x", neg[] = "--benchmark_repetitions=-1", zero[] = "--benchmark_repetitions=0",
       text[] = "--benchmark_repetitions=five", ok[] = "--benchmark_repetitions=5";
  for (char* bad : {neg, zero, text}) {
    char* argv0[] = {prog, bad};
    EXPECT_THROW(triaudit::check_google_benchmark_flags(2, argv0), triaudit::FlagError) << bad;
  }
  char* argv1[] = {prog, ok};
  EXPECT_NO_THROW(triaudit::check_google_benchmark_flags(2, argv1));
}

// A hold that timed out once turns the latch off for the rest of the process (no device needed to
// check the bookkeeping): every later region would otherwise wait out the same 10 s.
TEST(StreamLatchState, OneTimeoutTurnsItOffAndCasesSaySo) {
  EXPECT_FALSE(triaudit::StreamLatch::broken());
  EXPECT_EQ(triaudit::StreamLatch::latch_label(), "");
  triaudit::StreamLatch::mark_broken();
  EXPECT_TRUE(triaudit::StreamLatch::disabled());
  EXPECT_NE(std::string(triaudit::StreamLatch::disabled_reason()).find("timed out"), std::string::npos);
  EXPECT_NE(triaudit::StreamLatch::latch_label().find("launch gaps are timed"), std::string::npos);
}
