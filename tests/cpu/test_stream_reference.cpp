#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "common/random_values.hpp"
#include "stream/stream_ops.hpp"
#include "stream/stream_reference.hpp"

using namespace triaudit;

TEST(StreamOps, BytesFollowTheStreamConvention) {
  // copy 2, scale 2, add 3, triad 3, dot 2 arrays per element (DESIGN.md).
  EXPECT_EQ(stream_bytes_moved(StreamOp::Copy, 1000, 4), 8000u);
  EXPECT_EQ(stream_bytes_moved(StreamOp::Scale, 1000, 4), 8000u);
  EXPECT_EQ(stream_bytes_moved(StreamOp::Add, 1000, 8), 24000u);
  EXPECT_EQ(stream_bytes_moved(StreamOp::Triad, 1000, 8), 24000u);
  EXPECT_EQ(stream_bytes_moved(StreamOp::Dot, 1000, 8), 16000u);
}

TEST(StreamOps, EachOpWritesAnArrayItDoesNotRead) {
  // Re-running an op must not change its inputs, or verification after timing would be wrong.
  EXPECT_EQ(stream_output_array(StreamOp::Copy), 'c');   // reads a
  EXPECT_EQ(stream_output_array(StreamOp::Scale), 'b');  // reads c
  EXPECT_EQ(stream_output_array(StreamOp::Add), 'c');    // reads a, b
  EXPECT_EQ(stream_output_array(StreamOp::Triad), 'a');  // reads b, c
}

TEST(RandomValues, UniformInMinusOneOneNeverConstant) {
  std::set<float> seen;
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const float x = random_pm1<float>(kSeedA, static_cast<std::uint64_t>(i));
    ASSERT_GE(x, -1.0f);
    ASSERT_LT(x, 1.0f);
    seen.insert(x);
    sum += x;
  }
  EXPECT_GT(seen.size(), 95000u);
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  // float and double see the same values (24 random bits are exact in both).
  EXPECT_EQ(static_cast<double>(random_pm1<float>(kSeedB, 12345)), random_pm1<double>(kSeedB, 12345));
  EXPECT_NE(random_pm1<float>(kSeedA, 7), random_pm1<float>(kSeedB, 7));
}

TEST(StreamReference, ExpectedValuesFollowTheDefinitions) {
  const std::uint64_t i = 4242;
  const float a = stream_input<float>('a', i), b = stream_input<float>('b', i), c = stream_input<float>('c', i);
  const float s = static_cast<float>(kStreamScalar);
  EXPECT_EQ(stream_expected<float>(StreamOp::Copy, i), a);
  EXPECT_EQ(stream_expected<float>(StreamOp::Scale, i), s * c);
  EXPECT_EQ(stream_expected<float>(StreamOp::Add, i), a + b);
  EXPECT_EQ(stream_expected<float>(StreamOp::Triad, i), std::fma(s, c, b));
}

TEST(StreamReference, DotToleranceCatchesAMissingBlockButNotRounding) {
  const std::uint64_t n = 1 << 20;
  const auto ref = stream_dot_reference<float>(0, n);
  const double tol = dot_tolerance<float>(n, 132 * 2048, 132 * 8, ref.abs_sum);
  // Summing in float in another order stays within the bound...
  float naive = 0;
  for (std::uint64_t i = 0; i < n; ++i) naive += stream_input<float>('a', i) * stream_input<float>('b', i);
  EXPECT_LE(std::fabs(static_cast<double>(naive) - static_cast<double>(ref.sum)), 64 * tol);
  // ...while losing one block's worth of elements (256 threads x 4) does not.
  const auto missing = stream_dot_reference<float>(0, 1024);
  EXPECT_GT(std::fabs(static_cast<double>(missing.sum)), tol);
}
