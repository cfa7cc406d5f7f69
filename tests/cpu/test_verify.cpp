#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "verify.hpp"

using triaudit::verify_elements;

namespace {
std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.5f;
  return v;
}
auto ramp_expected = [](std::uint64_t i) { return static_cast<double>(i) * 0.5; };
auto exact = [](std::uint64_t) { return 0.0; };
}  // namespace

TEST(VerifyElements, CorrectOutputPasses) {
  const auto v = ramp(1 << 20);
  const auto r = verify_elements(v.data(), v.size(), ramp_expected, exact);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.checked, v.size());
}

TEST(VerifyElements, FindsOneWrongElementAmongMillions) {
  auto v = ramp(3'000'001);
  v[2'123'457] += 1.0f;
  const auto r = verify_elements(v.data(), v.size(), ramp_expected, exact);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.wrong, 1u);
  EXPECT_EQ(r.first_wrong, 2'123'457u);
  EXPECT_NE(r.describe().find("index 2123457"), std::string::npos) << r.describe();
}

TEST(VerifyElements, NanNeverPasses) {
  auto v = ramp(100);
  v[7] = std::numeric_limits<float>::quiet_NaN();
  const auto r = verify_elements(v.data(), v.size(), ramp_expected, [](std::uint64_t) { return 1e30; });
  EXPECT_EQ(r.wrong, 1u);
  EXPECT_EQ(r.first_wrong, 7u);
}

TEST(VerifyElements, ToleranceIsRespected) {
  auto v = ramp(100);
  v[50] += 1e-3f;
  EXPECT_TRUE(verify_elements(v.data(), v.size(), ramp_expected, [](std::uint64_t) { return 2e-3; }).ok());
  EXPECT_FALSE(verify_elements(v.data(), v.size(), ramp_expected, [](std::uint64_t) { return 5e-4; }).ok());
}

TEST(VerifyElements, StridedCheckAlwaysIncludesTheLastElement) {
  auto v = ramp(1000);
  v[999] = -1.0f;  // the tail, where vectorised kernels go wrong
  const auto r = verify_elements(v.data(), v.size(), ramp_expected, exact, 97);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.first_wrong, 999u);
  EXPECT_EQ(r.checked, 12u);  // 0, 97, ..., 970 and 999
}

TEST(VerifyElements, EmptyIsNotOk) {
  const auto r = verify_elements(static_cast<const float*>(nullptr), 0, ramp_expected, exact);
  EXPECT_FALSE(r.ok());
}

// The sampled copy of STREAM's check moves exactly the elements verify_elements would read.
TEST(Verify, SampledIndicesAreWhatTheStridedCheckReads) {
  EXPECT_EQ(triaudit::sampled_indices(10, 3), (std::vector<std::uint64_t>{0, 3, 6, 9}));
  EXPECT_EQ(triaudit::sampled_indices(11, 3), (std::vector<std::uint64_t>{0, 3, 6, 9, 10}));
  EXPECT_EQ(triaudit::sampled_indices(1, 997), (std::vector<std::uint64_t>{0}));
  EXPECT_TRUE(triaudit::sampled_indices(0, 5).empty());
  const std::vector<float> v(2000, 1.0f);
  const auto r = triaudit::verify_elements(
      v.data(), v.size(), [](std::uint64_t) { return 1.0; }, [](std::uint64_t) { return 0.0; }, 997);
  EXPECT_EQ(r.checked, triaudit::sampled_indices(2000, 997).size());
}
