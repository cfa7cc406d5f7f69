#include <gtest/gtest.h>

#include <stdexcept>

#include "sizes.hpp"

using triaudit::format_bytes;
using triaudit::parse_bytes;
using triaudit::power_of_two_sweep;

TEST(ParseBytes, PlainAndBinaryAndDecimalUnits) {
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_EQ(parse_bytes("1GiB"), 1073741824u);
  EXPECT_EQ(parse_bytes("1G"), 1073741824u);
  EXPECT_EQ(parse_bytes("512KiB"), 524288u);
  EXPECT_EQ(parse_bytes("64 MiB"), 64u << 20);
  EXPECT_EQ(parse_bytes("2GB"), 2000000000u);
  EXPECT_EQ(parse_bytes("3mb"), 3000000u);
  EXPECT_EQ(parse_bytes("7B"), 7u);
}

TEST(ParseBytes, RefusesBadInputWithTheText) {
  for (const char* bad : {"-5", "0", "", "abc", "12XB", "1.5GiB", "99999999999999999999", "16777216TiB"}) {
    try {
      parse_bytes(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_bytes("-5"), std::invalid_argument);
}

TEST(FormatBytes, ExactBinaryUnits) {
  EXPECT_EQ(format_bytes(1u << 30), "1 GiB");
  EXPECT_EQ(format_bytes(3u << 20), "3 MiB");
  EXPECT_EQ(format_bytes(1536), "1536 B");
  EXPECT_EQ(format_bytes(1000), "1000 B");
}

TEST(PowerOfTwoSweep, InclusiveAndRounded) {
  const auto s = power_of_two_sweep(512u << 10, 1u << 30);
  ASSERT_EQ(s.size(), 12u);
  EXPECT_EQ(s.front(), 512u << 10);
  EXPECT_EQ(s.back(), 1u << 30);
  for (std::size_t i = 1; i < s.size(); ++i) EXPECT_EQ(s[i], 2 * s[i - 1]);
  const auto r = power_of_two_sweep(3000, 10000);  // rounds 3000 up to 4096, 10000 down to 8192
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], 4096u);
  EXPECT_EQ(r[1], 8192u);
  EXPECT_TRUE(power_of_two_sweep(5000, 6000).empty());
}

TEST(PowerOfTwoSweep, DefaultStreamSweepReachesEightTimesTheLargestL2) {
  // Issue 2: from L2-resident sizes to at least 8x the L2. The largest L2 among the cards users
  // compare is L40S's 96 MB; one 1 GiB array alone exceeds 8 x 96 MB.
  const auto s = power_of_two_sweep(512u << 10, 1u << 30);
  EXPECT_GE(static_cast<double>(s.back()), 8 * 96e6);
  EXPECT_LE(static_cast<double>(s.front()) * 3, 32e6);  // three arrays fit in a 32 MB L2
}
