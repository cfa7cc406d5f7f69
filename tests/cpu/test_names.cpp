#include <gtest/gtest.h>

#include <stdexcept>

#include "names.hpp"

using triaudit::BenchName;
using triaudit::parse_bench_name;

TEST(BenchName, ReadsLikeAPath) {
  EXPECT_EQ(BenchName("stream", "triad", "fp32").arg("cache", "cold").arg("bytes", 1073741824).str(),
            "stream/triad/fp32/cache:cold/bytes:1073741824");
  EXPECT_EQ(BenchName("gemm", "cublaslt", "bf16").arg("m", 8192).arg("n", 8192).arg("k", 8192).str(),
            "gemm/cublaslt/bf16/m:8192/n:8192/k:8192");
}

TEST(BenchName, RefusesReservedCharacters) {
  EXPECT_THROW(BenchName("stream", "tri/ad", "fp32"), std::invalid_argument);
  EXPECT_THROW(BenchName("stream", "triad", ""), std::invalid_argument);
  EXPECT_THROW(BenchName("stream", "triad", "fp32").arg("ca:che", "hot"), std::invalid_argument);
  EXPECT_THROW(BenchName("stream", "triad", "fp32").arg("cache", "a b"), std::invalid_argument);
}

TEST(BenchName, ParsesBackIgnoringGoogleBenchmarkSuffixes) {
  const auto p = parse_bench_name("stream/dot/fp64/cache:hot/bytes:524288/manual_time");
  EXPECT_EQ(p.corner, "stream");
  EXPECT_EQ(p.op, "dot");
  EXPECT_EQ(p.variant, "fp64");
  ASSERT_EQ(p.args.size(), 2u);
  EXPECT_EQ(p.args[0].first, "cache");
  EXPECT_EQ(p.args[0].second, "hot");
  EXPECT_EQ(p.args[1].second, "524288");
  EXPECT_THROW(parse_bench_name("stream/dot"), std::invalid_argument);
}
