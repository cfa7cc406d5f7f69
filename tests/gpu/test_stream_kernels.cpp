// Every STREAM kernel, both element types, vector and scalar paths, odd sizes and odd launch
// shapes, checked element by element against the host reference.
#include <gtest/gtest.h>

#include <vector>

#include "common/cuda_raii.hpp"
#include "stream/stream_check.hpp"

using namespace triaudit;

namespace {

template <typename T>
void check_all_ops(std::uint64_t n, std::size_t offset_elems, kernels::StreamLaunch launch) {
  const std::uint64_t total = n + offset_elems;
  DeviceBuffer<T> a(total), b(total), c(total), partial(launch.blocks), result(1);
  const kernels::StreamArrays arrays{a.data() + offset_elems, b.data() + offset_elems, c.data() + offset_elems,
                                     partial.data(), result.data()};
  Stream stream;
  for (StreamOp op : kStreamOps) {
    stream_prepare<T>(op, arrays, n, stream);
    kernels::stream_run<T>(op, arrays, n, launch, stream);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    const VerifyResult r = stream_verify<T>(op, arrays, n, launch, stream);
    EXPECT_TRUE(r.ok()) << stream_op_name(op) << " n=" << n << " offset=" << offset_elems << ": " << r.describe();
  }
}

}  // namespace

TEST(StreamKernels, Fp32OddSizesAlignedAndUnaligned) {
  const auto launch = kernels::stream_launch<float>(StreamOp::Triad);
  for (std::uint64_t n : {1ULL, 3ULL, 4ULL, 1000ULL, 4097ULL, (1ULL << 20) + 5})
    for (std::size_t off : {0u, 1u}) check_all_ops<float>(n, off, launch);
}

TEST(StreamKernels, Fp64OddSizesAlignedAndUnaligned) {
  const auto launch = kernels::stream_launch<double>(StreamOp::Triad);
  for (std::uint64_t n : {1ULL, 2ULL, 999ULL, 65537ULL, (1ULL << 20) + 3})
    for (std::size_t off : {0u, 1u}) check_all_ops<double>(n, off, launch);
}

TEST(StreamKernels, SmallGridsStillCoverEveryElement) {
  for (unsigned blocks : {1u, 3u, 7u}) check_all_ops<float>(100003, 0, {blocks, 256});
}

TEST(StreamKernels, LaunchFillsTheDevice) {
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  for (StreamOp op : kStreamOps) {
    const auto l = kernels::stream_launch<float>(op);
    EXPECT_GE(l.blocks, static_cast<unsigned>(sms)) << stream_op_name(op);
    EXPECT_EQ(l.blocks % static_cast<unsigned>(sms), 0u);
  }
}

TEST(StreamKernels, VerificationCatchesAWrongResult) {
  // The check itself must be able to fail: corrupt one element of triad's output.
  const std::uint64_t n = 1 << 16;
  DeviceBuffer<float> a(n), b(n), c(n), partial(4096), result(1);
  const kernels::StreamArrays arrays{a.data(), b.data(), c.data(), partial.data(), result.data()};
  Stream stream;
  const auto launch = kernels::stream_launch<float>(StreamOp::Triad);
  stream_prepare<float>(StreamOp::Triad, arrays, n, stream);
  kernels::stream_run<float>(StreamOp::Triad, arrays, n, launch, stream);
  const float wrong = 42.0f;
  ASSERT_EQ(cudaMemcpyAsync(a.data() + 1234, &wrong, sizeof wrong, cudaMemcpyHostToDevice, stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(a.data() + 60000, &wrong, sizeof wrong, cudaMemcpyHostToDevice, stream), cudaSuccess);
  const auto r = stream_verify<float>(StreamOp::Triad, arrays, n, launch, stream);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.checked, n);  // every element, on the device
  EXPECT_EQ(r.wrong, 2u);
  EXPECT_EQ(r.first_wrong, 1234u);
  EXPECT_EQ(r.got, 42.0);
  // And a kernel that never ran leaves the NaN poison, which fails too.
  stream_prepare<float>(StreamOp::Copy, arrays, n, stream);
  EXPECT_FALSE(stream_verify<float>(StreamOp::Copy, arrays, n, launch, stream).ok());
}
