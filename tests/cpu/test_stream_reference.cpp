#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "common/grid_stride.hpp"
#include "common/random_values.hpp"
#include "stream/dot_check.hpp"
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

// The first dot check, kept here only to show why it was replaced: one worst-case bound on the
// final sum (tests below), against an 80-bit reference over all elements.
namespace old_dot_check {
struct DotReference {
  long double sum = 0;      // the exact-ish value (80-bit accumulation on x86-64)
  long double abs_sum = 0;  // sum of |a_i * b_i|, the scale of the rounding error
};

template <typename T>
DotReference stream_dot_reference(std::uint64_t begin, std::uint64_t end) {
  DotReference r;
  for (std::uint64_t i = begin; i < end; ++i) {
    const long double p = static_cast<long double>(stream_input<T>('a', i)) * stream_input<T>('b', i);
    r.sum += p;
    r.abs_sum += std::fabs(p);
  }
  return r;
}

// Worst-case error of a summation whose longest chain of dependent additions has `depth`
// terms: gamma(depth) * sum|a_i b_i| (Higham), with gamma(k) = k u / (1 - k u). The device's
// chain is: a per-thread grid-stride loop over n / threads elements (x vector width), a
// block tree of 8 levels, then a sequential fold of blocks / 256 partials and another tree.
template <typename T>
double dot_tolerance(std::uint64_t n, std::uint64_t grid_threads, std::uint64_t blocks, long double abs_sum) {
  const double u = std::numeric_limits<T>::epsilon() / 2;
  const std::uint64_t per_thread = grid_threads > 0 ? (n + grid_threads - 1) / grid_threads : n;
  const double depth = static_cast<double>(per_thread + 1 + 8 + (blocks + 255) / 256 + 8 + 2);
  const double gamma = depth * u / (1.0 - depth * u);
  return gamma * static_cast<double>(abs_sum) + std::numeric_limits<T>::min();
}
}  // namespace old_dot_check
using old_dot_check::dot_tolerance;
using old_dot_check::stream_dot_reference;

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

// The device's dot summation replayed on the host in float: per-thread chains over the
// grid-stride assignment, then a per-block sum. verify_dot must pass it, and fail when one block's
// partial is lost (which the old single worst-case bound on the final sum let through).
namespace {
struct DeviceLikeDot {
  std::vector<float> partials;
  float result = 0;
};
// Each thread's share as dot_kernel takes it: the kernels' own grid-stride traversal over the
// 16-byte vectors, then the scalar tail (so a wrong mapping in dot_block_of shows here).
DeviceLikeDot simulate_dot(const DotTree& t) {
  const std::uint64_t stride = std::uint64_t{t.blocks} * t.threads;
  const std::uint64_t vectors = t.n / t.width;
  auto product = [](std::uint64_t i) { return stream_input<float>('a', i) * stream_input<float>('b', i); };
  std::vector<float> per_thread(stride, 0.0f);
  for (std::uint64_t th = 0; th < stride; ++th) {
    float& sum = per_thread[th];
    kernels::grid_stride_from(
        th, stride, vectors,
        [&](std::size_t v) {
          float s = 0.0f;
          for (unsigned e = 0; e < t.width; ++e) s += product(v * t.width + e);
          return s;
        },
        [&](std::size_t, float s) { sum += s; });
    for (std::uint64_t i = vectors * t.width + th; i < t.n; i += stride) sum += product(i);
  }
  DeviceLikeDot d;
  d.partials.assign(t.blocks, 0.0f);
  for (std::uint64_t th = 0; th < stride; ++th) d.partials[th / t.threads] += per_thread[th];
  for (float p : d.partials) d.result += p;
  return d;
}
}  // namespace

TEST(StreamDot, BlockReplayCatchesADroppedBlock) {
  const DotTree tree{(1u << 22) + 5, 132 * 8, 256, 4};  // an H200-like full wave; odd n has a scalar tail
  const DotBlocks ref = dot_block_reference<float>(tree);
  DeviceLikeDot d = simulate_dot(tree);
  const DotVerdict good = verify_dot<float>(d.partials, d.result, ref, tree.threads);
  EXPECT_TRUE(good.ok) << good.message;

  // Lose block 7's contribution: the partial and the final sum both lack it.
  const float lost = d.partials[7];
  d.partials[7] = 0.0f;
  d.result -= lost;
  const DotVerdict bad = verify_dot<float>(d.partials, d.result, ref, tree.threads);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.message.find("block 7"), std::string::npos) << bad.message;
}

// Why the old check could not see it: its one bound on the final sum grows like n^2 / threads,
// a block's contribution like sqrt(n / blocks). At 1 GiB of FP32 on an H200-like grid the bound
// (~4e3 for |a_i b_i| averaging 1/4) is over 20 times a block's typical sum (its products have a
// standard deviation of 1/3).
TEST(StreamDot, TheOldSingleBoundHidesABlockAtOneGiB) {
  const std::uint64_t n = (1ULL << 30) / 4, blocks = 132 * 8, threads = 256;
  const double old_tol = dot_tolerance<float>(n, blocks * threads, blocks, static_cast<long double>(n) / 4);
  const double block_sum = std::sqrt(static_cast<double>(n) / blocks) / 3.0;
  EXPECT_GT(old_tol, 3000.0);
  EXPECT_GT(old_tol, 20 * block_sum);
}

TEST(StreamDot, AWrongFoldIsCaught) {
  const DotTree tree{1u << 20, 64, 256, 4};
  const DotBlocks ref = dot_block_reference<float>(tree);
  DeviceLikeDot d = simulate_dot(tree);
  d.result += 1.0f;
  const DotVerdict v = verify_dot<float>(d.partials, d.result, ref, tree.threads);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("fold"), std::string::npos) << v.message;
}

TEST(StreamDot, ElementsGoToTheBlockOfTheirThread) {
  const DotTree t{1000, 2, 4, 4};      // 250 vectors over 8 threads
  EXPECT_EQ(dot_block_of(t, 0), 0u);   // vector 0 -> thread 0
  EXPECT_EQ(dot_block_of(t, 16), 1u);  // vector 4 -> thread 4 -> block 1
  EXPECT_EQ(dot_block_of(t, 35), 0u);  // vector 8 -> thread 0
  const DotTree tail{1003, 2, 4, 4};   // elements 1000..1002 are the scalar tail
  EXPECT_EQ(dot_block_of(tail, 1000), 0u);
  EXPECT_EQ(dot_block_of(tail, 1002), 0u);  // tail thread 2 is in block 0
}

// Where a STREAM case reports a fraction of the DRAM peak, and where its regions flush L2.
TEST(StreamOps, PeakFractionOnlyBeyondL2) {
  constexpr std::uint64_t l2 = 50ull << 20;              // an H100's 50 MiB
  constexpr std::uint64_t hot_triad = 3 * (4ull << 20);  // the quick profile's 4 MiB triad: 12 MiB touched
  EXPECT_FALSE(stream_peak_fraction_applies(hot_triad, l2));
  EXPECT_TRUE(stream_peak_fraction_applies(3ull << 30, l2));  // 1 GiB arrays
  EXPECT_FALSE(stream_peak_fraction_applies(l2, l2));         // exactly L2: could still be resident
  EXPECT_FALSE(stream_peak_fraction_applies(1ull << 30, 0));  // L2 size unknown: no claim
}

TEST(StreamOps, FlushBetweenRegionsExceptASustainedWindowFarBeyondL2) {
  constexpr std::uint64_t l2 = 50ull << 20;
  EXPECT_TRUE(stream_flush_between_regions(true, false, 3ull << 30, l2));    // cold burst: always
  EXPECT_FALSE(stream_flush_between_regions(true, true, 3ull << 30, l2));    // sustained, 60x L2
  EXPECT_TRUE(stream_flush_between_regions(true, true, 2 * l2, l2));         // sustained, only 2x L2
  EXPECT_FALSE(stream_flush_between_regions(false, false, 3ull << 30, l2));  // hot: never
}
