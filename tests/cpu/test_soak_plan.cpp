// The soak's host logic (benchmarks/soak/soak_plan.hpp, soak_hash_log.hpp): names, sizes, the
// mix on the compute stream, the deviation's description and the hash log's records.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "soak_hash_log.hpp"
#include "soak_plan.hpp"

using namespace triaudit;

TEST(SoakPlan, CaseNames) {
  SoakPlan p;
  EXPECT_EQ(soak_case_name(Workload::Gemm, p), "soak/gemm/bf16/impl:ladder_l3/m:8192/n:8192/k:8192");
  EXPECT_EQ(soak_case_name(Workload::Triad, p), "soak/stream/triad/type:fp32/array:2xL2");
  EXPECT_EQ(soak_case_name(Workload::H2D, p), "soak/copy/h2d/bytes:67108864");
  EXPECT_EQ(soak_case_name(Workload::P2P, p), "soak/copy/p2p/bytes:67108864");
  p.gemm_level = 5;
  p.gemm_dim = 4096;
  EXPECT_EQ(soak_case_name(Workload::Gemm, p), "soak/gemm/bf16/impl:ladder_l5/m:4096/n:4096/k:4096");
}

TEST(SoakPlan, TriadArraysAreTwiceTheL2InWholeTiles) {
  EXPECT_EQ(triad_elements_for(50ull << 20), 26214400u);  // H100: 2 x 50 MiB = 100 MiB per array
  EXPECT_EQ(triad_elements_for(4ull << 20), 16777216u);   // small L2: the 64 MiB floor
  EXPECT_EQ(triad_elements_for(40ull << 20) % (1u << 18), 0u);
  EXPECT_GE(triad_elements_for(126'000'000ull) * 4, 252'000'000ull);  // B200's L2, not a power of two
}

TEST(SoakPlan, WorkPerOperation) {
  SoakPlan p;
  p.triad_elements = 1000;
  EXPECT_DOUBLE_EQ(workload_work(Workload::Gemm, p), 2.0 * 8192.0 * 8192.0 * 8192.0);
  EXPECT_DOUBLE_EQ(workload_work(Workload::Triad, p), 12000.0);
  EXPECT_DOUBLE_EQ(workload_work(Workload::D2H, p), 64.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(workload_work(Workload::P2P, p), 128.0 * 1024 * 1024);
}

TEST(SoakPlan, TriadsTakeAQuarterOfTheComputeStream) {
  // 4 GEMMs of 4 ms, triads of 0.12 ms: 16 ms x 1/3 / 0.12 ms = 44 triads.
  EXPECT_EQ(triads_per_cycle(4, 4e-3, 1.2e-4), 44);
  EXPECT_EQ(triads_per_cycle(4, 0, 1.2e-4), 1);   // nothing measured yet
  EXPECT_EQ(triads_per_cycle(4, 1.0, 1e-6), 64);  // capped
  EXPECT_EQ(triads_per_cycle(4, 1e-6, 1.0), 1);   // at least one
}

TEST(SoakPlan, TalliesAddUp) {
  WorkloadTally a, b;
  a.items = 2;
  a.work = 10;
  a.op_seconds = 1;
  a.checked = 2;
  a.last_hash = 1;
  b.items = 3;
  b.work = 20;
  b.op_seconds = 2;
  b.checked = 3;
  b.last_hash = 9;
  b.deviating = 1;
  b.deviations.resize(1);
  a.add(b);
  EXPECT_EQ(a.items, 5);
  EXPECT_DOUBLE_EQ(a.rate(), 10.0);
  EXPECT_DOUBLE_EQ(a.seconds_per_op(), 0.6);
  EXPECT_EQ(a.last_hash, 9u);
  EXPECT_EQ(a.deviating, 1);
  EXPECT_EQ(a.deviations.size(), 1u);
  for (int i = 0; i < 40; ++i) a.add(b);
  EXPECT_EQ(a.deviations.size(), static_cast<std::size_t>(kDeviationsKept));  // the rest are counted
  EXPECT_EQ(a.deviating, 41);
}

TEST(SoakPlan, TimesAndHex) {
  EXPECT_EQ(utc_iso(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(utc_iso(1767323045.678), "2026-01-02T03:04:05.678Z");
  EXPECT_EQ(hex64(0xe220a8397b1dcdafULL), "e220a8397b1dcdaf");
  EXPECT_EQ(hex64(1), "0000000000000001");
  EXPECT_EQ(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
}

TEST(SoakPlan, ADeviationNamesTheOperationTheTimeAndTheTile) {
  WorkloadTally t;
  t.checked = 14210;
  t.deviating = 1;
  Deviation d;
  d.item = 8123;
  d.time_unix = 1767323045.678;
  d.differing_tiles = 1;
  d.tiles.push_back({517, 0xabcULL, 0xabdULL, 640, 128, 512, 128});
  d.diagnosis = "tile 517: 1 of 16384 elements differ";
  t.deviations.push_back(d);
  const std::string s = describe_deviations(Workload::Gemm, 183, t);
  EXPECT_EQ(s.rfind("sdc: 1 of 14210 GEMMs in window 183 differed", 0), 0u) << s;
  for (const char* part : {"operation 8123", "2026-01-02T03:04:05.678Z", "tile 517 (rows 640-767, cols 512-639)",
                           "hash 0000000000000abc expected 0000000000000abd", "1 of 16384 elements differ"})
    EXPECT_NE(s.find(part), std::string::npos) << part << " in " << s;
}

TEST(SoakPlan, RecordsAreOneLineEach) {
  ReferenceRecord r;
  r.gpu_uuid = "GPU-1";
  r.gemm_case = "soak/gemm/x";
  r.tile_hashes = {1, 2, 3};
  const std::string ref = reference_line(r);
  EXPECT_EQ(ref.find('\n'), std::string::npos);
  EXPECT_NE(ref.find("\"combined\":\"0000000000000000\""), std::string::npos) << ref;  // 1 ^ 2 ^ 3
  EXPECT_NE(ref.find("\"tile_hashes\":\"0000000000000001 0000000000000002 0000000000000003\""), std::string::npos);
  WindowRecord w;
  w.window = 4;
  w.cases = {{Workload::Gemm, "soak/gemm/x"}};
  w.tallies[0].items = 3;
  w.error = "line one\nline two";
  const std::string line = window_line(w);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_NE(line.find("\"gemm\":{\"case\":\"soak/gemm/x\",\"items\":3"), std::string::npos) << line;
}

TEST(SoakHashLog, RefusesAnExistingLogAndWritesWholeLines) {
  char dir[] = "/tmp/triaudit_hash_log_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/x.json.hashes";
  {
    HashLog log(path, false);
    ASSERT_TRUE(log.open()) << log.error();
    EXPECT_TRUE(log.write_line("{\"a\":1}"));
    EXPECT_TRUE(log.write_line("{\"b\":2}"));
  }
  {
    HashLog again(path, false);
    EXPECT_FALSE(again.open());
    EXPECT_NE(again.error().find("refusing to overwrite"), std::string::npos) << again.error();
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"a\":1}\n{\"b\":2}\n");  // the refused open left it as it was
  {
    HashLog replace(path, true);
    ASSERT_TRUE(replace.open());
    EXPECT_TRUE(replace.write_line("{}"));
  }
  std::ifstream in2(path);
  std::stringstream text2;
  text2 << in2.rdbuf();
  EXPECT_EQ(text2.str(), "{}\n");
  std::remove(path.c_str());
  rmdir(dir);
  EXPECT_EQ(hash_log_path("a/triaudit_soak.gpu0.json"), "a/triaudit_soak.gpu0.json.hashes");
}

// The records as `triaudit soak` reads them, written where TRIAUDIT_SOAK_RECORDS says: the Python
// reader is checked against what this code writes (scripts/tests/test_soak_records.py runs this
// test with it set). Without it there is nothing to write.
TEST(SoakPlan, SampleRecordsForThePythonReader) {
  const char* path = std::getenv("TRIAUDIT_SOAK_RECORDS");
  if (path == nullptr) GTEST_SKIP() << "TRIAUDIT_SOAK_RECORDS not set (scripts/tests/test_soak_records.py sets it)";
  ReferenceRecord r;
  r.gpu_uuid = "GPU-5a4e7e7e-0000-0000-0000-000000000001";
  r.gpu_name = "NVIDIA H200";
  r.gemm_case = "soak/gemm/bf16/impl:ladder_l3/m:256/n:256/k:256";
  r.inputs = "A and B random";
  r.fp64_check = "64 sampled elements within the BF16 bound";
  r.first_window = 3;
  r.time_unix = 1767225600.5;
  r.rows = r.cols = 256;
  r.tile_rows = r.tile_cols = 128;
  r.tile_hashes = {0xe220a8397b1dcdafULL, 1, 2, 3};
  WindowRecord w;
  w.window = 7;
  w.start_unix = 1767226020.0;
  w.end_unix = 1767226080.0;
  w.cases = {{Workload::Gemm, r.gemm_case}, {Workload::Triad, "soak/stream/triad/type:fp32/array:2xL2"}};
  WorkloadTally& g = w.tallies[static_cast<std::size_t>(Workload::Gemm)];
  g.items = g.checked = 10;
  g.work = 10 * 2.0 * 256 * 256 * 256;
  g.op_seconds = 1e-3;
  g.last_hash = 0xe220a8397b1dcdacULL;
  g.deviating = 1;
  Deviation d;
  d.item = 42;
  d.time_unix = 1767226050.25;
  d.differing_tiles = 1;
  d.tiles.push_back({3, 0xabcULL, 0x3ULL, 128, 128, 128, 128});
  d.diagnosis = "tile 3: 1 of 16384 elements differ";
  g.deviations.push_back(d);
  WorkloadTally& t = w.tallies[static_cast<std::size_t>(Workload::Triad)];
  t.items = t.checked = 30;
  t.work = 30 * 1.2e9;
  t.op_seconds = 0.01;
  w.sm_clock_mean_mhz = 1980;
  w.power_mean_w = -1;  // unknown: NVML could not read it
  w.temperature_end_c = 71;
  w.throttled = true;
  w.clock_reasons = "sw_power_cap";
  HashLog log(path, true);
  ASSERT_TRUE(log.open()) << log.error();
  EXPECT_TRUE(log.write_line(reference_line(r)));
  EXPECT_TRUE(log.write_line(window_line(w)));
}
