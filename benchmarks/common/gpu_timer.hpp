// Timing device work inside Google Benchmark's loop (the cuDF event-timer pattern):
//
//   GpuTimer timer(stream, flusher_or_null);
//   for (auto _ : state) {
//     auto region = timer.region(state, ops);   // [flush L2], record start
//     for (int i = 0; i < ops; ++i) enqueue_op(stream);
//   }                                           // record stop, wait, SetIterationTime(t / ops)
//   timer.check();                              // rethrows a failure seen in a destructor
//
// Register the benchmark with UseManualTime(). Times come from CUDA events on the benchmark's
// own stream. A region of `ops` operations reports the time per operation, so counters set per
// operation (bytes, FLOPs) stay consistent in Google Benchmark's rates.
#pragma once
#include <benchmark/benchmark.h>

#include <cstddef>
#include <exception>
#include <string>

#include "cuda_raii.hpp"
#include "stream_latch.hpp"

namespace triaudit {

// Owns a buffer of a few times the L2 size and reads it through the cache before a cold region.
class L2Flusher {
 public:
  explicit L2Flusher(std::size_t l2_bytes);
  void flush(cudaStream_t stream) const;
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  DeviceBuffer<unsigned char> buffer_;
  DeviceBuffer<unsigned> sink_;
};

class GpuTimer {
 public:
  explicit GpuTimer(cudaStream_t stream, const L2Flusher* flusher = nullptr);

  class Region {
   public:
    ~Region();
    Region(const Region&) = delete;
    Region& operator=(const Region&) = delete;

   private:
    friend class GpuTimer;
    Region(GpuTimer& timer, benchmark::State& state, int ops, StreamLatch* latch);
    GpuTimer& timer_;
    StreamLatch* latch_;
    benchmark::State& state_;
    int ops_;
    int uncaught_;
  };

  // Starts a timed region of `ops` operations (flushing L2 first when a flusher was given).
  // With a latch, the stream is held from before the start event until after the stop event
  // is queued, so the operations run back-to-back however slowly the host enqueues them.
  Region region(benchmark::State& state, int ops = 1, StreamLatch* latch = nullptr);

  // Throws the first failure a region's destructor had to swallow.
  void check() const;

  // Everything measured so far: sum of region times and of operations.
  double total_seconds() const { return total_seconds_; }
  long long total_ops() const { return total_ops_; }
  double seconds_per_op() const { return total_ops_ > 0 ? total_seconds_ / static_cast<double>(total_ops_) : 0.0; }

 private:
  cudaStream_t stream_;
  const L2Flusher* flusher_;
  Event start_, stop_;
  double total_seconds_ = 0.0;
  long long total_ops_ = 0;
  std::string deferred_error_;
};

// Host clock around work that is host-synchronous by nature (pageable copies, launch + sync):
// the caller makes sure the work has completed before the region ends.
class HostTimer {
 public:
  class Region {
   public:
    ~Region();
    Region(const Region&) = delete;
    Region& operator=(const Region&) = delete;

   private:
    friend class HostTimer;
    Region(HostTimer& t, benchmark::State& state, int ops);
    HostTimer& timer_;
    benchmark::State& state_;
    int ops_;
    int uncaught_;
    double start_;
  };
  Region region(benchmark::State& state, int ops = 1) { return Region(*this, state, ops); }
  double total_seconds() const { return total_seconds_; }
  long long total_ops() const { return total_ops_; }
  double seconds_per_op() const { return total_ops_ > 0 ? total_seconds_ / static_cast<double>(total_ops_) : 0.0; }
  static double now();

 private:
  double total_seconds_ = 0.0;
  long long total_ops_ = 0;
};

}  // namespace triaudit
