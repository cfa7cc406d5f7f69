// The wait for a collective's completion (benchmarks/collectives/harness/wait_loop.hpp): every
// rank polled until done, the first failure ends it, and the bound holds, on a fake clock.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "wait_loop.hpp"

using namespace triaudit;

TEST(WaitLoop, EveryItemPolledUntilDoneAndNotAfter) {
  std::vector<int> polls(4, 0);
  const std::vector<int> done_after = {1, 3, 2, 5};
  double fake = 0;
  int idles = 0;
  const WaitResult r = wait_for_all(
      polls.size(), [&](std::size_t i) { return ++polls[i] >= done_after[i] ? Poll::kDone : Poll::kPending; }, 10.0,
      [&] { return fake; }, [&] { ++idles; });
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.failed);
  EXPECT_EQ(polls, done_after);  // a finished item is never asked again
  EXPECT_EQ(idles, 4);           // between the five passes the slowest item needs
}

TEST(WaitLoop, TheFirstFailureEndsTheWait) {
  int polled_after = 0;
  const WaitResult r = wait_for_all(
      3,
      [&](std::size_t i) {
        if (i == 2) ++polled_after;
        return i == 1 ? Poll::kFailed : Poll::kPending;
      },
      10.0, [] { return 0.0; }, [] {});
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.failed_index, 1u);
  EXPECT_EQ(polled_after, 0);
}

// A rank that never finishes: the wait ends once the clock passes the bound, not before.
TEST(WaitLoop, BoundedOnAFakeClock) {
  double fake = 100.0;
  int passes = 0;
  const WaitResult r = wait_for_all(
      2, [&](std::size_t i) { return i == 0 ? Poll::kDone : Poll::kPending; }, 0.05, [&] { return fake; },
      [&] {
        ++passes;
        fake += 0.001;
      });
  EXPECT_TRUE(r.timed_out);
  EXPECT_GE(fake - 100.0, 0.05);
  EXPECT_LE(fake - 100.0, 0.0525);
  EXPECT_GE(passes, 50);
}
