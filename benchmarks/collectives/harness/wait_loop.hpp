// Waiting for every rank's queued work to finish, bounded in time: the host side of a collective's
// completion (world.cpp polls each rank's CUDA event and NCCL's asynchronous error through it).
// Plain host code, tested without a GPU.
#pragma once
#include <cstddef>
#include <functional>

namespace triaudit {

enum class Poll { kPending, kDone, kFailed };

struct WaitResult {
  bool timed_out = false;
  bool failed = false;
  std::size_t failed_index = 0;  // valid when failed
};

// What the waiter does after a pass over the items in which nothing finished: sched_yield(), as
// nccl-tests' testStreamSynchronize does; it never sleeps.
void idle_between_polls();

// Seconds of the steady clock.
double steady_seconds();

// Polls items 0..n-1 (`poll(i)`, each until it says done) pass after pass; stops at the first
// failure, or once `now()` is more than `timeout_s` past its value at the start. After a pass in
// which nothing finished it calls `idle`, then polls again at once.
WaitResult wait_for_all(std::size_t n, const std::function<Poll(std::size_t)>& poll, double timeout_s,
                        const std::function<double()>& now = steady_seconds,
                        const std::function<void()>& idle = idle_between_polls);

}  // namespace triaudit
