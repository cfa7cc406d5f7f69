// The STREAM kernels' and the SM copy's grid-stride walk, run on the CPU thread by thread: every
// index visited exactly once, and within a step all loads come before the stores.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "common/grid_stride.hpp"

using triaudit::kernels::grid_stride_from;
using triaudit::kernels::kGridStrideUnroll;

TEST(GridStride, EveryIndexExactlyOnceForAnyGridAndCount) {
  for (std::size_t threads : {1u, 3u, 32u, 256u, 1000u})
    for (std::size_t count : {0u, 1u, 5u, 255u, 256u, 1023u, 4096u, 4099u, 12345u}) {
      std::vector<int> stored(count, 0), loaded(count, 0);
      for (std::size_t t = 0; t < threads; ++t)
        grid_stride_from(
            t, threads, count,
            [&](std::size_t i) {
              ++loaded[i];
              return i;
            },
            [&](std::size_t i, std::size_t v) {
              EXPECT_EQ(i, v);
              ++stored[i];
            });
      for (std::size_t i = 0; i < count; ++i) {
        ASSERT_EQ(stored[i], 1) << "threads " << threads << " count " << count << " index " << i;
        ASSERT_EQ(loaded[i], 1);
      }
    }
}

TEST(GridStride, LoadsOfAStepPrecedeItsStores) {
  // One thread of 8, 40 elements: its indices 2, 10, 18, 26 form a full step, 34 the tail.
  std::vector<char> events;
  std::vector<std::size_t> order;
  grid_stride_from(
      2, 8, 40,
      [&](std::size_t i) {
        events.push_back('L');
        order.push_back(i);
        return i;
      },
      [&](std::size_t i, std::size_t) {
        events.push_back('S');
        order.push_back(i);
      });
  ASSERT_EQ(kGridStrideUnroll, 4);
  EXPECT_EQ(std::string(events.begin(), events.end()), "LLLLSSSSLS");
  EXPECT_EQ(order, (std::vector<std::size_t>{2, 10, 18, 26, 2, 10, 18, 26, 34, 34}));
}
