#include "measure.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "clock_watch.hpp"
#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "region_pipeline.hpp"
#include "region_plan.hpp"
#include "stream_latch.hpp"
#include "suite.hpp"

namespace triaudit {
namespace {

struct CaseCall {
  std::string name;
  std::string label;
  std::map<std::string, EnergyAccount> energy;  // per case, across its calls
};

CaseCall& current() {
  static CaseCall c;
  return c;
}

unsigned rated_boost_mhz() { return static_cast<unsigned>(std::max(0, device().description.sm_clock_max_khz / 1000)); }

// Everything around the loop that is the same for device and host timing: temperatures, the
// clock samples, the energy counter and its account. NVML is read at the window's edges (the
// energy counter, temperatures) and, for the clock and power, when the loop calls sample(): never
// while a timed region runs (TRIAUDIT_CLOCK_SAMPLING=thread restores 0.3.0's thread, for comparison).
class Instruments {
 public:
  Instruments() : sampler_(device().nvml.get(), rated_boost_mhz(), clock_sampling_mode()) {
    const NvmlDevice* n = device().nvml.get();
    temperature_start_ = n ? static_cast<int>(n->temperature_c().value_or(0)) : 0;
    energy_start_ = n ? n->total_energy() : EnergyReading{std::nullopt, "no NVML"};
    start_ = HostTimer::now();
  }
  // `account`: whether this window is the case's own work (a sweep's other shapes and a
  // reference loop are not, and stay out of its energy account).
  void finish(LoopResult& r, long long ops_in_window, bool account) {
    const NvmlDevice* n = device().nvml.get();
    r.window_end = HostTimer::now();
    r.window_seconds = r.window_end - start_;
    const EnergyReading end = n ? n->total_energy() : EnergyReading{std::nullopt, "no NVML"};
    r.clocks = sampler_.finish();
    r.temperature_start_c = temperature_start_ > 0 ? temperature_start_ : -1;
    r.temperature_end_c = n && n->temperature_c() ? static_cast<int>(*n->temperature_c()) : -1;
    EnergyAccount& acc = current().energy[current().name];
    if (account) acc.add(r.window_seconds, energy_start_, end, ops_in_window);
    r.energy = acc.figures();
  }
  void sample() { sampler_.sample(); }

 private:
  ClockSampler sampler_;
  int temperature_start_ = 0;
  EnergyReading energy_start_;
  double start_ = 0.0;
};

// One held, event-timed region of work.ops operations; returns its seconds. The clock is sampled
// while the stream is held (the device spins; nothing timed has started) or, without a hold,
// before anything of the region is queued.
double device_region(const DeviceWork& work, StreamLatch& latch, Event& start, Event& stop, Instruments* inst) {
  const bool hold = work.hold;
  if (!hold && inst != nullptr) inst->sample();
  if (work.before_region) work.before_region();
  if (work.flusher != nullptr) work.flusher->flush(work.stream);
  if (hold) latch.hold(work.stream);
  for (int i = 0; i < work.untimed_ops_in_region; ++i) work.enqueue_op();  // behind the hold, before the start
  start.record(work.stream);
  for (int i = 0; i < work.ops; ++i) work.enqueue_op();
  stop.record(work.stream);
  if (hold) {
    if (inst != nullptr) inst->sample();
    latch.release();
  }
  stop.synchronize();
  TRIAUDIT_CUDA_LAUNCH();
  if (hold) latch.check();
  return Event::seconds_between(start, stop);
}

void check_queue_budget(const DeviceWork& work) {
  if (work.ops < 1) throw Error("measure: ops per region must be at least 1");
  if (work.hold && static_cast<long long>(work.ops + work.untimed_ops_in_region) * work.queue_entries_per_op + 2 >
                       StreamLatch::kMaxQueuedEntries)
    throw Error("measure: " + std::to_string(work.ops + work.untimed_ops_in_region) + " operations of " +
                std::to_string(work.queue_entries_per_op) + " queue entries exceed what may wait behind one hold (" +
                std::to_string(StreamLatch::kMaxQueuedEntries) + ")");
}

void finalize(LoopResult& r, const std::vector<double>& per_op) {
  const RegionStats st = region_stats(per_op);
  r.regions = static_cast<int>(per_op.size());
  r.seconds_per_op = r.ops > 0 ? r.seconds / static_cast<double>(r.ops) : 0.0;
  r.median_seconds_per_op = st.median;
  r.best_seconds_per_op = per_op.empty() ? 0.0 : *std::min_element(per_op.begin(), per_op.end());
  r.noise = st.noise;
}

}  // namespace

MeasureSettings& measure_settings() {
  static MeasureSettings s;
  return s;
}

EnergyFigures record_case_energy(const std::string& name, double window_s, const EnergyReading& start,
                                 const EnergyReading& end, long long ops, int devices) {
  EnergyAccount& acc = current().energy[name];
  acc.add(window_s, start, end, ops, devices);
  return acc.figures();
}

void begin_case_call(const std::string& name) {
  current().name = name;
  current().label.clear();
}

void append_label(benchmark::State& state, const std::string& part) {
  if (part.empty()) return;
  std::string& l = current().label;
  l += (l.empty() ? "" : "; ") + part;
  state.SetLabel(l);
}

// The loop both timings share: regions for `warmup` seconds of wall time, unreported, then
// timed regions until `window` seconds of wall time have passed (at least one; at most
// max_regions when `capped`). `region` runs one region of `ops` operations and returns its time;
// `sample_between`: the clock is sampled after each region (host-timed work; a device region
// samples while it is held).
LoopResult run_loop(const std::function<double()>& region, Instruments& inst, bool sample_between, int ops,
                    int untimed_ops, double warmup, double window, bool capped, bool account) {
  const int max_regions = measure_settings().max_regions;
  LoopResult r;
  std::vector<double> per_op;
  const double t0 = HostTimer::now();
  while (HostTimer::now() - t0 < warmup) {
    region();
    if (sample_between) inst.sample();
    r.warmup_ops += ops;
    r.untimed_ops += untimed_ops;
  }
  r.warmup_seconds = HostTimer::now() - t0;
  const double t1 = HostTimer::now();
  while (per_op.empty() ||
         (HostTimer::now() - t1 < window && (!capped || static_cast<int>(per_op.size()) < max_regions))) {
    const double t = region();
    if (sample_between) inst.sample();
    r.seconds += t;
    r.ops += ops;
    r.untimed_ops += untimed_ops;
    per_op.push_back(t / ops);
  }
  inst.finish(r, r.ops_in_window(), account);
  finalize(r, per_op);
  return r;
}

// Every device in use waits for its work: an operation may touch two GPUs (p2p).
void synchronize_devices_in_use() {
  TRIAUDIT_CUDA(cudaDeviceSynchronize());  // the current device
  for (const int d : std::set<int>(devices_in_use())) {
    DeviceGuard g(d);
    TRIAUDIT_CUDA(cudaDeviceSynchronize());
  }
}

// Sustained: regions queued three ahead (region_pipeline.hpp), not held: the queue never drains,
// so the device runs the window back to back while the host reads the events of finished regions.
LoopResult time_device_pipelined(const DeviceWork& work, double window_s, double warmup_s, bool account) {
  constexpr int kDepth = 3;
  std::vector<Event> starts(kDepth), stops(kDepth);
  LoopResult r;
  Instruments inst;
  auto enqueue = [&](int slot) {
    if (work.before_region) work.before_region();
    if (work.flusher != nullptr) work.flusher->flush(work.stream);
    for (int i = 0; i < work.untimed_ops_in_region; ++i) work.enqueue_op();
    starts[static_cast<std::size_t>(slot)].record(work.stream);
    for (int i = 0; i < work.ops; ++i) work.enqueue_op();
    stops[static_cast<std::size_t>(slot)].record(work.stream);
  };
  // The window is back to back: the clock is sampled after each wait, while the regions queued
  // after it run (as any tool samples a sustained load).
  auto wait = [&](int slot) {
    stops[static_cast<std::size_t>(slot)].synchronize();
    TRIAUDIT_CUDA_LAUNCH();
    inst.sample();
    return Event::seconds_between(starts[static_cast<std::size_t>(slot)], stops[static_cast<std::size_t>(slot)]);
  };
  const PipelineTimes t =
      run_pipelined_regions(enqueue, wait, [] { return HostTimer::now(); }, kDepth, warmup_s, window_s);
  std::vector<double> per_op;
  for (double x : t.timed) {
    r.seconds += x;
    r.ops += work.ops;
    per_op.push_back(x / work.ops);
  }
  const auto all = static_cast<long long>(t.warmup.size() + t.timed.size());
  r.warmup_ops = static_cast<long long>(t.warmup.size()) * work.ops;
  r.untimed_ops = all * work.untimed_ops_in_region;
  r.warmup_seconds = t.warmup_wall;
  inst.finish(r, r.ops_in_window(), account);
  finalize(r, per_op);
  return r;
}

// The most operations one held region of `work` takes (its queue budget, less the untimed ones).
int most_ops_per_region(const DeviceWork& work) {
  const int most =
      (StreamLatch::kMaxQueuedEntries - 2) / std::max(1, work.queue_entries_per_op) - work.untimed_ops_in_region;
  return std::max(1, work.max_ops > 0 ? std::min(work.max_ops, most) : most);
}

LoopResult time_device(const DeviceWork& given, double sustained_window_s, double warmup_s, bool account_energy) {
  check_queue_budget(given);
  const MeasureSettings& cfg = measure_settings();
  const bool sustained = sustained_window_s > 0.0;
  // One operation first, with the stream not held: CUDA loads a module's kernels lazily, and
  // loading one may need the device to synchronize, which a held stream never lets happen (the
  // hold would time out; nvbandwidth preloads its kernels for the same reason).
  given.enqueue_op();
  TRIAUDIT_CUDA_LAUNCH();
  synchronize_devices_in_use();
  StreamLatch latch;
  Event start, stop;
  DeviceWork work = given;
  if (work.min_region_s > 0.0) {
    // Sized by time: one untimed region of the fewest operations gives one operation's time.
    const double t = device_region(work, latch, start, stop, nullptr);
    work.ops = ops_for_region_time(t / work.ops, work.ops, most_ops_per_region(work), work.min_region_s);
    check_queue_budget(work);
  }
  LoopResult r;
  if (sustained) {
    r = time_device_pipelined(work, sustained_window_s, warmup_s < 0.0 ? cfg.warmup_s : warmup_s, account_energy);
  } else {
    Instruments inst;
    r = run_loop([&] { return device_region(work, latch, start, stop, &inst); }, inst, false, work.ops,
                 work.untimed_ops_in_region, warmup_s < 0.0 ? cfg.warmup_s : warmup_s, cfg.min_time_s, true,
                 account_energy);
  }
  r.min_region_s = work.min_region_s;
  return r;
}

LoopResult time_host(const HostWork& work) {
  if (work.ops < 1) throw Error("measure: ops per region must be at least 1");
  const MeasureSettings& cfg = measure_settings();
  auto region = [&] {
    if (work.before_region) work.before_region();
    const double t0 = HostTimer::now();
    for (int i = 0; i < work.ops; ++i) work.run_op();
    if (work.end_region) work.end_region();
    return HostTimer::now() - t0;
  };
  Instruments inst;
  LoopResult r = run_loop(region, inst, true, work.ops, 0, cfg.warmup_s, cfg.min_time_s, true, true);
  r.min_region_s = work.min_region_s;
  return r;
}

LoopResult measure_device(benchmark::State& state, const DeviceWork& work) {
  LoopResult r;
  for (auto _ : state) {
    r = time_device(work);
    state.SetIterationTime(r.seconds_per_op);
  }
  return r;
}

LoopResult measure_device_sustained(benchmark::State& state, const DeviceWork& work, double window_s) {
  LoopResult r;
  for (auto _ : state) {
    r = time_device(work, window_s);
    state.SetIterationTime(r.median_seconds_per_op);
  }
  return r;
}

LoopResult measure_host(benchmark::State& state, const HostWork& work) {
  LoopResult r;
  for (auto _ : state) {
    r = time_host(work);
    state.SetIterationTime(r.seconds_per_op);
  }
  return r;
}

void report_sustained(benchmark::State& state, const LoopResult& r) {
  // The load is continuous when this case's previous call ended less than a second before this
  // one began (Google Benchmark's next repetition); otherwise it starts again.
  struct Load {
    std::string name;
    double started = 0.0, last_end = -1e30;
  };
  static Load load;
  const double end = r.window_end, began = end - r.window_seconds;  // the window, not the checks after it
  if (load.name != current().name || began - load.last_end > 1.0) load = {current().name, began, end};
  load.last_end = end;
  state.counters["window_s"] = r.window_seconds - r.warmup_seconds;
  state.counters["sustained_elapsed_s"] = end - load.started;
  append_label(state, "sustained: median over the window");
}

void report_clocks(benchmark::State& state, const ClockSummary& c) {
  if (c.busy_samples > 0) {
    state.counters["sm_clock_mean_mhz"] = c.mean_mhz;
    state.counters["sm_clock_min_mhz"] = c.min_mhz;
    state.counters["throttled"] = c.throttled ? 1.0 : 0.0;
    state.counters["clock_low"] = c.clock_low ? 1.0 : 0.0;
    state.counters["sw_power_cap_fraction"] = c.sw_power_cap_fraction;
  }
  if (c.power_samples > 0) {
    state.counters["power_samples_mean_w"] = c.power_mean_w;
    state.counters["power_samples_max_w"] = c.power_max_w;
  }
}

void report_loop(benchmark::State& state, const LoopResult& r, const char* efficiency_counter, double work_per_op) {
  state.counters["regions"] = r.regions;
  state.counters["ops_per_region"] = r.regions > 0 ? static_cast<double>(r.ops) / r.regions : 0.0;
  state.counters["noise"] = r.noise;
  state.counters["warmup_s"] = r.warmup_seconds;
  state.counters["seconds_per_op"] = r.seconds_per_op;  // the mean: all region time / all operations
  state.counters["seconds_per_op_median"] = r.median_seconds_per_op;
  state.counters["seconds_per_op_best"] = r.best_seconds_per_op;
  state.counters["region_s"] = r.region_seconds();
  if (r.min_region_s > 0.0 && r.region_seconds() < 0.95 * r.min_region_s) {
    state.counters["latency_bound"] = 1;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "latency-bound: regions of %.0f operation(s) last %.0f us, under the %.1f ms a region is sized "
                  "to (the most operations a region can hold make less); each region's fixed cost (events, "
                  "release or synchronize: a few us) is in the figure",
                  r.regions > 0 ? static_cast<double>(r.ops) / r.regions : 0.0, r.region_seconds() * 1e6,
                  r.min_region_s * 1e3);
    append_label(state, buf);
  }
  const ClockSummary& c = r.clocks;
  report_clocks(state, c);
  if (r.temperature_start_c >= 0) state.counters["temperature_start_c"] = r.temperature_start_c;
  if (r.temperature_end_c >= 0) state.counters["temperature_end_c"] = r.temperature_end_c;
  append_label(state, c.note);
  append_label(state, StreamLatch::latch_label());
  if (clock_sampling_mode() != ClockSamplingMode::Regions)
    append_label(state, std::string("clock sampling: ") + clock_sampling_name(clock_sampling_mode()) +
                            " (TRIAUDIT_CLOCK_SAMPLING; regions, the default, samples outside timed regions)");
  const EnergyFigures& e = r.energy;
  state.counters["energy_window_s"] = e.window_s;
  if (e.valid) {
    state.counters["joules_per_op"] = e.joules_per_op;
    state.counters["watts_mean"] = e.watts_mean;
    if (efficiency_counter != nullptr && e.joules_per_op > 0.0)
      state.counters[efficiency_counter] = work_per_op / e.joules_per_op;
    append_label(state, power_disagreement(e, c.power_mean_w));
  } else {
    append_label(state, "energy " + e.why);
  }
}

}  // namespace triaudit
