// Holds a stream with a spinning kernel while work is queued behind it, then releases it, so
// the queued work runs back-to-back and host launch cost stays out of event timings
// (nvbandwidth's method). The spin gives up after a timeout, so a lost release cannot hang.
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "cuda_raii.hpp"
#include "latch_budget.hpp"

namespace triaudit {

class StreamLatch {
 public:
  StreamLatch();
  ~StreamLatch();
  StreamLatch(const StreamLatch&) = delete;
  StreamLatch& operator=(const StreamLatch&) = delete;

  void hold(cudaStream_t stream);  // enqueue the spinning kernel
  void release();                  // let every held stream go
  // Throws if a hold ran into its timeout (the measurement would include the wait).
  void check() const;

  // Queue entries (kernel launches, copies, event records) waiting behind one hold must stay well
  // inside the device's queue depth, or the host blocks in a launch it can never finish before
  // release(). Counted in entries, not operations: a bidirectional copy is several entries.
  static constexpr int kMaxQueuedEntries = kLatchMaxQueuedEntries;

  // Holds are no-ops when they cannot work: TRIAUDIT_NO_LATCH=1 (for profilers that serialise
  // kernel launches, such as Nsight Compute, under which a held stream could only wait for its
  // timeout) and CUDA_LAUNCH_BLOCKING=1 (every launch waits for the spinning kernel, which waits
  // for a release the host can only send after the launch returns). Timings then include launch
  // gaps; the JSON context records it (stream_latch: off (...)).
  // A hold that ran into its timeout once (a lost release, a profiler, a driver that serialises
  // launches) would cost 10 s in every later region: the latch is then off for the rest of the
  // process, and the cases measured without it say so in their labels (latch_label()).
  static bool disabled();
  static const char* disabled_reason();  // "" when enabled
  static void mark_broken();
  static bool broken();
  // "" unless the latch broke earlier in this process: then what a case's label says.
  static std::string latch_label();

 private:
  PinnedBuffer<int> flag_;
  PinnedBuffer<int> timed_out_;
  int* flag_dev_ = nullptr;
  int* timed_out_dev_ = nullptr;
  bool held_ = false;
};

}  // namespace triaudit
