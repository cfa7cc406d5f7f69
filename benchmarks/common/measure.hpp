// The measurement loop every case uses, inside one Google Benchmark iteration (nvbench's shape):
//
//   1. warm-up: the case's own work, back to back and not reported, for --warmup-s (0.2 s) of
//      wall time — every call, because the SM clock falls while the host prepares and verifies
//      between calls, and one operation does not bring it back;
//   2. timed regions of `ops` operations each (behind a held stream, or host-timed) until
//      --min-time of wall time has passed (at least one region): min-time bounds the real time a
//      call takes, whatever the operations per region and whatever an L2 flush between regions
//      costs (Google Benchmark counts only the reported time, so a region of 100 operations ran
//      100 x min-time);
//   3. reported: the mean time per operation (all region time / all operations) as the manual
//      time of the one iteration, and counters: regions, ops_per_region, noise (relative
//      standard deviation of the regions' time per operation, nvbench's "Noise"), warmup_s,
//      the clock verdict and the energy figures.
//
// Cases are registered with Iterations(1) (register_case), so Google Benchmark calls each case
// once per repetition and never re-runs it to size an iteration count.
#pragma once
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "clock_summary.hpp"
#include "energy.hpp"
#include "gpu_timer.hpp"
#include "region_stats.hpp"

namespace triaudit {

struct MeasureSettings {
  double min_time_s = 0.05;  // measured seconds per call
  double warmup_s = 0.2;     // device seconds of the same work first
  int max_regions = 200000;  // a bound on host work for tiny regions
};
MeasureSettings& measure_settings();

struct LoopResult {
  int regions = 0;
  long long ops = 0;            // timed operations
  double seconds = 0.0;         // summed region time
  double seconds_per_op = 0.0;  // mean: seconds / ops
  double median_seconds_per_op = 0.0;
  double best_seconds_per_op = 0.0;  // the fastest region's time per op (mamf-finder reports a best)
  double noise = 0.0;                // relative standard deviation of the regions' time per op
  double warmup_seconds = 0.0;       // wall time
  long long warmup_ops = 0;
  long long untimed_ops = 0;  // queued in the regions before their start event (DeviceWork::untimed_ops_in_region)
  // Every operation the energy window saw: timed, warm-up and untimed ones (joules_per_op divides by this).
  long long ops_in_window() const { return ops + warmup_ops + untimed_ops; }
  double min_region_s = 0.0;  // the device time a region was to hold (0: sized by its caller alone)
  double region_seconds() const { return regions > 0 ? seconds / regions : 0.0; }
  double window_seconds = 0.0;  // wall time from the first warm-up region to the last timed one
  double window_end = 0.0;      // host clock (HostTimer::now) when the window closed
  ClockSummary clocks;
  EnergyFigures energy;  // this case, accumulated over its calls so far
  int temperature_start_c = -1, temperature_end_c = -1;
};

// Device work timed with CUDA events on `stream`.
struct DeviceWork {
  cudaStream_t stream = nullptr;
  int ops = 1;                          // operations per region, reported per operation
  int queue_entries_per_op = 1;         // launches/copies one operation queues (the latch's budget)
  const L2Flusher* flusher = nullptr;   // cold: the L2 is flushed before every region
  bool hold = true;                     // queue each region behind the stream latch
  int untimed_ops_in_region = 0;        // queued behind the hold before the start event (nvbandwidth
                                        // queues warm-up copies so the copy engine is already running)
  std::function<void()> before_region;  // queued before each region's hold (e.g. join a helper stream)
  std::function<void()> enqueue_op;     // queues one operation on `stream`
  // Sized by time (region_plan.hpp): min_region_s > 0 times one region of `ops` first (untimed) and
  // then holds as many operations as make min_region_s of device time, `ops` at least, at most
  // max_ops (0: what one hold's queue takes). A region still shorter is said latency-bound.
  double min_region_s = 0.0;
  int max_ops = 0;
};
LoopResult measure_device(benchmark::State& state, const DeviceWork& work);

// Host-synchronous work timed with the host clock around completed operations.
struct HostWork {
  int ops = 1;
  double min_region_s = 0.0;            // > 0: a region shorter than this is said latency-bound (ops stay fixed)
  std::function<void()> before_region;  // untimed, before every region (e.g. flush the host caches)
  std::function<void()> run_op;         // one operation
  std::function<void()> end_region;     // timed, after the operations (e.g. wait for the device)
};
LoopResult measure_host(benchmark::State& state, const HostWork& work);

// Sustained: one long window of back-to-back regions after the warm-up, queued three ahead with
// no hold and no host sync between them (region_pipeline.hpp), so the device never idles; the
// time reported is the median region time per operation over the window (mamf-finder's
// sustained figure). Google
// Benchmark's repetitions of the case follow each other within milliseconds, so the load is
// continuous across them: report_sustained records the window and how long the load had lasted
// when it ended (sustained_elapsed_s: 5 repetitions of 2 s end at ~10 s).
LoopResult measure_device_sustained(benchmark::State& state, const DeviceWork& work, double window_s);
void report_sustained(benchmark::State& state, const LoopResult& r);

// The loops without Google Benchmark's state, for a case that measures more than one loop in
// its iteration (e.g. both directions of a bidirectional copy). sustained_window_s > 0: time
// regions for that long after the warm-up, whatever --min-time says.
// warmup_s < 0: --warmup-s; 0: none (the device is already busy, e.g. the next shape of a sweep).
// account_energy false: the window is not the case's own operation (a sweep's other shapes, a
// reference loop) and stays out of its energy account.
LoopResult time_device(const DeviceWork& work, double sustained_window_s = 0.0, double warmup_s = -1.0,
                       bool account_energy = true);
LoopResult time_host(const HostWork& work);

// The standard counters of a loop, plus the corner's efficiency counter when energy is known:
// `efficiency_counter` (e.g. "flops_per_joule", "bytes_per_joule") = work_per_op / joules_per_op.
// region_s, the mean region's time; a loop sized by time whose regions stayed under their target
// (the queue's most operations are too quick) gets latency_bound = 1 and says so in its label.
void report_loop(benchmark::State& state, const LoopResult& r, const char* efficiency_counter = nullptr,
                 double work_per_op = 0.0);

// The clock and power-sample counters of a watched region (sm_clock_*, throttled, clock_low,
// sw_power_cap_fraction, power_samples_*), each only where its samples exist.
void report_clocks(benchmark::State& state, const ClockSummary& c);

// Adds one window to the energy account of case `name` (for corners with their own loop, e.g.
// allreduce over several GPUs) and returns the account's figures so far.
// `devices`: how many GPUs the readings sum (a sum over 32 GPUs may draw more than one board can).
EnergyFigures record_case_energy(const std::string& name, double window_s, const EnergyReading& start,
                                 const EnergyReading& end, long long ops, int devices = 1);

// Appends to the case's label ("; " between parts): corners and the harness both add to it.
void append_label(benchmark::State& state, const std::string& part);

// Called by register_case before each call of a case: the case's name keys its energy account,
// and its label starts empty.
void begin_case_call(const std::string& name);

}  // namespace triaudit
