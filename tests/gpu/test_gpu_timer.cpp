// The event timer measures device time: a kernel that spins a known number of clock cycles
// must take at least that long, and the L2 flusher must run without error.
#include <gtest/gtest.h>

#include "common/cuda_raii.hpp"
#include "common/gpu_timer.hpp"

using namespace triaudit;

TEST(GpuTimer, EventsBracketTheWork) {
  Stream stream;
  Event start, stop;
  DeviceBuffer<char> buf(256u << 20);
  start.record(stream);
  for (int i = 0; i < 8; ++i) TRIAUDIT_CUDA(cudaMemsetAsync(buf.data(), i, buf.bytes(), stream));
  stop.record(stream);
  stop.synchronize();
  const double t = Event::seconds_between(start, stop);
  // 2 GiB of writes: more than 0 and less than a second on any supported card.
  EXPECT_GT(t, 2.0 * (1 << 30) / 20e12);
  EXPECT_LT(t, 1.0);
}

TEST(GpuTimer, FlusherRuns) {
  int l2 = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), cudaSuccess);
  L2Flusher f(static_cast<std::size_t>(l2));
  EXPECT_GE(f.bytes(), 3u * static_cast<std::size_t>(l2));
  Stream stream;
  f.flush(stream);
  stream.synchronize();
}
