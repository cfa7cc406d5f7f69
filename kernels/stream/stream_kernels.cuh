// STREAM kernels (bandwidth corner). Grid-stride loops over 16-byte vectors (float4 / double2)
// with a grid of exactly the blocks the device keeps resident, so every SM streams from the
// first cycle; a scalar path handles unaligned pointers and the tail. Dot reduces per block
// (warp shuffles), then one block folds the partials: both inside the timed operation.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "stream_ops.hpp"

namespace triaudit::kernels {

struct StreamLaunch {
  unsigned blocks = 0;
  unsigned threads = 0;
};

// One full wave of resident blocks for `op` on the current device.
template <typename T>
StreamLaunch stream_launch(StreamOp op);

struct StreamArrays {
  void* a;
  void* b;
  void* c;
  void* partial;  // dot: one T per block
  void* result;   // dot: one T
};

// Enqueues one operation on `stream`. T is float or double.
template <typename T>
void stream_run(StreamOp op, const StreamArrays& arrays, std::size_t n, StreamLaunch launch, cudaStream_t stream);

}  // namespace triaudit::kernels
