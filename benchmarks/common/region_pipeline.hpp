// The schedule of a sustained window: regions are queued `depth` ahead, so the device always has
// the next region waiting when one ends and never idles while the host reads a region's events
// (one region then a host sync left ~2 % of a sustained GEMM window idle). Host logic only, with
// the device behind two callbacks, unit-tested with a fake device (tests/cpu/test_region_pipeline.cpp).
#pragma once
#include <functional>
#include <vector>

namespace triaudit {

struct PipelineTimes {
  std::vector<double> warmup;  // seconds of each warm-up region
  std::vector<double> timed;   // seconds of each timed region
  double warmup_wall = 0.0;    // wall seconds until the first timed region was queued
};

// enqueue(slot): queue one region on the device using slot `slot` (0 .. depth-1) for its events.
// wait(slot): wait until the region in `slot` is done, return its device seconds.
// now(): the host clock in seconds. Regions queued while less than `warmup_s` has passed are the
// warm-up; then timed regions are queued until `window_s` more has passed (at least one). A slot
// is reused only after its region was waited for; every queued region is waited for.
inline PipelineTimes run_pipelined_regions(const std::function<void(int)>& enqueue,
                                           const std::function<double(int)>& wait, const std::function<double()>& now,
                                           int depth, double warmup_s, double window_s) {
  PipelineTimes out;
  if (depth < 1) depth = 1;
  std::vector<bool> slot_is_timed(static_cast<std::size_t>(depth), false);
  const double t0 = now();
  double timed_from = -1.0;  // host time the first timed region was queued
  long long queued = 0, waited = 0;
  auto want_more = [&] {
    const double t = now();
    if (timed_from < 0.0) return true;  // still warming up, or the first timed region is due
    return t - timed_from < window_s;
  };
  auto queue_one = [&] {
    const int slot = static_cast<int>(queued % depth);
    const double t = now();
    bool timed = t - t0 >= warmup_s;
    if (timed && timed_from < 0.0) {
      timed_from = t;
      out.warmup_wall = t - t0;
    }
    slot_is_timed[static_cast<std::size_t>(slot)] = timed;
    enqueue(slot);
    ++queued;
  };
  while (queued < depth && want_more()) queue_one();
  while (waited < queued) {
    const int slot = static_cast<int>(waited % depth);
    const double s = wait(slot);
    ++waited;
    (slot_is_timed[static_cast<std::size_t>(slot)] ? out.timed : out.warmup).push_back(s);
    if (want_more()) queue_one();
  }
  return out;
}

}  // namespace triaudit
