// The result file triaudit writes in place of Google Benchmark's (result_file.hpp), with the real
// library: each finished case is on disk before the next one starts, the file appears whole
// under its name only at the end, and nothing a user had is replaced without --force.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "flags.hpp"
#include "result_file.hpp"
#include "suite.hpp"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/triaudit_result_file_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { (void)std::system(("rm -rf '" + path + "'").c_str()); }
  std::string path;
};

std::string g_partial;        // the file the third case looks at
std::string g_seen_by_three;  // what was on disk when the third case ran

}  // namespace

TEST(ResultFile, EachFinishedCaseIsOnDiskBeforeTheNextOneRuns) {
  TempDir dir;
  const std::string out = dir.path + "/stream.json";
  g_partial = out + ".partial";
  for (const char* name : {"durable/one/bytes:8", "durable/two/bytes:8"})
    benchmark::RegisterBenchmark(name, [](benchmark::State& st) {
      for (auto _ : st) st.SetIterationTime(1e-6);
    })->UseManualTime();
  benchmark::RegisterBenchmark("durable/three/bytes:8", [](benchmark::State& st) {
    g_seen_by_three = slurp(g_partial);  // what a SIGKILL now would leave
    for (auto _ : st) st.SetIterationTime(1e-6);
  })->UseManualTime();
  char prog[] = "x", dev_null[] = "--benchmark_out=/dev/null";
  char* argv0[] = {prog, dev_null};
  std::vector<char*> args = triaudit::with_one_iteration_per_call(2, argv0);
  int argc = static_cast<int>(args.size()) - 1;
  benchmark::Initialize(&argc, args.data());
  ASSERT_EQ(triaudit::result_file_refusal(out, false), "");
  triaudit::DurableJsonReporter file(out, false);
  struct Quiet : benchmark::BenchmarkReporter {
    bool ReportContext(const Context&) override { return true; }
    void ReportRuns(const std::vector<Run>&) override {}
  } quiet;
  benchmark::RunSpecifiedBenchmarks(&quiet, &file, "durable/");
  EXPECT_EQ(file.error(), "");
  EXPECT_TRUE(file.finished());
  EXPECT_EQ(file.cases_written(), 3);
  // While the third case ran, the first two were complete on disk, and nothing of the third.
  EXPECT_NE(g_seen_by_three.find("\"context\""), std::string::npos);
  EXPECT_EQ(count(g_seen_by_three, "\"name\": \"durable/"), 2u);
  EXPECT_EQ(count(g_seen_by_three, "durable/three"), 0u);
  EXPECT_EQ(g_seen_by_three.substr(g_seen_by_three.size() - 1), "}");  // ends with a whole case
  // At the end: the whole file under its name, the partial gone.
  const std::string whole = slurp(out);
  EXPECT_EQ(count(whole, "\"name\": \"durable/"), 3u);
  EXPECT_EQ(whole.substr(whole.size() - 6), "  ]\n}\n");
  EXPECT_NE(access(out.c_str(), F_OK), -1);
  EXPECT_EQ(access(g_partial.c_str(), F_OK), -1);
  // The next run may not replace it without --force.
  EXPECT_NE(triaudit::result_file_refusal(out, false).find("refusing to overwrite"), std::string::npos);
  EXPECT_EQ(triaudit::result_file_refusal(out, true), "");
}

TEST(ResultFile, Refusals) {
  TempDir dir;
  const std::string out = dir.path + "/gemm.json";
  EXPECT_EQ(triaudit::result_file_refusal(out, false), "");
  EXPECT_NE(triaudit::result_file_refusal(dir.path, false).find("is a folder"), std::string::npos);
  EXPECT_NE(triaudit::result_file_refusal(dir.path + "/no/such/x.json", false).find("does not exist"),
            std::string::npos);
  std::ofstream(out + ".partial") << "{";
  // An interrupted run's cases: kept, even with --force.
  EXPECT_NE(triaudit::result_file_refusal(out, true).find(".partial exists"), std::string::npos);
}

TEST(ResultFile, AFolderThatCannotBeWrittenIsRefusedBeforeAnythingRuns) {
  TempDir dir;
  const std::string out = dir.path + "/stream.json";
  EXPECT_EQ(triaudit::result_file_refusal(out, false), "");
  EXPECT_EQ(access((out + ".partial").c_str(), F_OK), -1);  // the probe leaves nothing behind
  // sysfs takes no new file, root included: the refusal names the file and the reason.
  if (access("/sys", F_OK) != 0) GTEST_SKIP() << "no /sys here";
  const std::string refused = triaudit::result_file_refusal("/sys/triaudit_result_file_test.json", false);
  EXPECT_NE(refused.find("cannot create /sys/triaudit_result_file_test.json.partial"), std::string::npos) << refused;
}

TEST(ResultFile, TheFlagsAreTakenOutOfArgv) {
  char prog[] = "x", out[] = "--benchmark_out=r.json", fmt[] = "--benchmark_out_format=json",
       filter[] = "--benchmark_filter=a", csv[] = "--benchmark_out_format=csv", empty[] = "--benchmark_out=";
  std::vector<char*> args = {prog, out, fmt, filter, nullptr};
  const auto request = triaudit::take_result_file_flags(args);
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->path, "r.json");
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(std::string(args[1]), "--benchmark_filter=a");
  EXPECT_EQ(args[2], nullptr);
  std::vector<char*> none = {prog, filter, nullptr};
  EXPECT_FALSE(triaudit::take_result_file_flags(none).has_value());
  std::vector<char*> bad = {prog, out, csv, nullptr};
  EXPECT_THROW(triaudit::take_result_file_flags(bad), triaudit::FlagError);
  std::vector<char*> no_name = {prog, empty, nullptr};
  EXPECT_THROW(triaudit::take_result_file_flags(no_name), triaudit::FlagError);
}
