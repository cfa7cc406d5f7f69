#include "wait_loop.hpp"

#include <sched.h>

#include <chrono>
#include <vector>

namespace triaudit {

// nccl-tests' choice: give the CPU up (to NCCL's proxy threads, or the next rank's process) and
// poll again at once. A sleep would add its length plus the timer slack to every wait.
void idle_between_polls() { (void)sched_yield(); }

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

WaitResult wait_for_all(std::size_t n, const std::function<Poll(std::size_t)>& poll, double timeout_s,
                        const std::function<double()>& now, const std::function<void()>& idle) {
  const double start = now();
  std::vector<bool> done(n, false);
  std::size_t finished = 0;
  while (finished < n) {
    bool progressed = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (done[i]) continue;
      const Poll p = poll(i);
      if (p == Poll::kFailed) return {false, true, i};
      if (p == Poll::kDone) {
        done[i] = true;
        ++finished;
        progressed = true;
      }
    }
    if (finished < n && now() - start > timeout_s) return {true, false, 0};
    if (finished < n && !progressed) idle();
  }
  return {};
}

}  // namespace triaudit
