// triaudit_soak: one GPU under every load at once for --windows windows of --window-s seconds
// (soak_plan.hpp), every output checked bit for bit (soak_engine.hpp). `triaudit soak` runs one
// per GPU, all at once, and compares their hashes across GPUs and restarts.
//
//   soak/gemm/bf16/impl:ladder_l<L>/m:D/n:D/k:D   flops: the GEMM's rate in the window
//   soak/stream/triad/type:fp32/array:2xL2        bytes_per_second: the triad's
//   soak/copy/<h2d|d2h|p2p>/bytes:B               bytes_per_second: the copies' (p2p: there and back)
// Each window is one call of each case, registered once per window (so each is written to the
// result file the moment it ends); `triaudit soak` numbers the calls as repetitions. Every call
// carries the window (window, window_end_unix_s, soak_elapsed_s), the SM clock, the throttle
// reasons (clock_reasons: NVML's bits), power, temperature and the health_* counters (of the
// window: the first call of a window lasts it). An output that differed from what it must be
// makes its window an error ("sdc: ..."), also written in full to the hash log
// (<--benchmark_out>.hashes, soak_hash_log.hpp) with the GEMM's reference tile hashes.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <thread>

#include "clock_watch.hpp"
#include "measure.hpp"
#include "soak_engine.hpp"
#include "soak_hash_log.hpp"
#include "soak_plan.hpp"
#include "suite.hpp"

namespace triaudit {
namespace {

struct SoakOptions {
  long long windows = 1, first_window = 0;
  double window_s = 60.0;
  long long gemm_level = 3, gemm_dim = 8192, peer_device = -1;
  std::uint64_t copy_bytes = 64ull << 20;
  double soak_start_unix = 0;  // 0: when this process started
  std::string hash_log;        // from --benchmark_out
  bool replace_log = false;    // --force
} g_opt;

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

SoakPlan plan_of(std::uint64_t l2_bytes) {
  SoakPlan p;
  p.gemm_level = static_cast<int>(g_opt.gemm_level);
  p.gemm_dim = static_cast<std::uint64_t>(g_opt.gemm_dim);
  p.triad_elements = triad_elements_for(l2_bytes);
  p.copy_bytes = g_opt.copy_bytes;
  p.peer = g_opt.peer_device >= 0;
  return p;
}

// A window as every case of it reports it.
struct WindowFigures {
  long long window = -1;
  double start_unix = 0, end_unix = 0;
  std::array<WorkloadTally, kWorkloads> tallies;
  ClockSummary clocks;
  int temperature_start_c = -1, temperature_end_c = -1;
  double joules = -1;
  std::string engine_error;
};

// The process's soak: the engine, set up by the first call, and the window being reported.
class Soak {
 public:
  void ensure_started() {
    if (!failure_.empty()) rethrow();
    if (engine_) return;
    try {
      plan_ = plan_of(device().description.l2_bytes);
      engine_ = std::make_unique<SoakEngine>(plan_, device().description.ordinal, static_cast<int>(g_opt.peer_device));
      write_reference();
      engine_->start();
    } catch (const SkipCase& e) {
      remember(kSkip, e.what());
    } catch (const VerificationError& e) {
      remember(kWrong, e.what());
    } catch (const std::exception& e) {
      remember(kFailed, e.what());
    }
  }

  const WindowFigures& window(long long w) {
    if (figures_.window != w) run_window(w);
    return figures_;
  }
  SoakEngine& engine() { return *engine_; }
  const SoakPlan& plan() const { return plan_; }
  void finished() {
    if (engine_) engine_->stop();
  }

 private:
  enum Kind { kSkip, kWrong, kFailed };
  void remember(Kind k, const std::string& what) {
    kind_ = k;
    failure_ = what;
    rethrow();
  }
  [[noreturn]] void rethrow() const {
    if (kind_ == kSkip) throw SkipCase(failure_);
    if (kind_ == kWrong) throw VerificationError(failure_);
    throw Error(failure_);
  }

  void log(const std::string& line) {
    if (g_opt.hash_log.empty()) return;
    if (!log_) log_ = std::make_unique<HashLog>(g_opt.hash_log, g_opt.replace_log);
    if (!log_->open() || !log_->write_line(line)) throw Error("the hash log: " + log_->error());
  }

  void write_reference() {
    const EngineSetup& s = engine_->setup();
    ReferenceRecord r;
    r.gpu_uuid = device().description.uuid;
    r.gpu_name = device().description.name;
    r.gemm_case = soak_case_name(Workload::Gemm, plan_);
    r.inputs = s.inputs;
    r.fp64_check = s.fp64_check + "; " + s.determinism;
    r.first_window = g_opt.first_window;
    r.time_unix = unix_now();
    r.rows = s.gemm_layout.rows;
    r.cols = s.gemm_layout.cols;
    r.tile_rows = s.gemm_layout.tile_rows;
    r.tile_cols = s.gemm_layout.tile_cols;
    r.elem_bytes = s.gemm_layout.elem_bytes;
    r.tile_hashes = s.gemm_tiles;
    log(reference_line(r));
  }

  void run_window(long long w) {
    WindowFigures f;
    f.window = w;
    const NvmlDevice* nvml = device().nvml.get();
    const auto boost = static_cast<unsigned>(std::max(0, device().description.sm_clock_max_khz / 1000));
    const EnergyReading e0 = nvml ? nvml->total_energy() : EnergyReading{};
    f.temperature_start_c = nvml && nvml->temperature_c() ? static_cast<int>(*nvml->temperature_c()) : -1;
    f.start_unix = unix_now();
    {
      ClockWatch watch(nvml, boost, 50);
      const double until = HostTimer::now() + g_opt.window_s;
      while (HostTimer::now() < until && engine_->error().empty())
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      f.tallies = engine_->take();
      f.clocks = watch.finish();
    }
    f.end_unix = unix_now();
    f.engine_error = engine_->error();
    f.temperature_end_c = nvml && nvml->temperature_c() ? static_cast<int>(*nvml->temperature_c()) : -1;
    const EnergyReading e1 = nvml ? nvml->total_energy() : EnergyReading{};
    if (e0.millijoules && e1.millijoules && *e1.millijoules >= *e0.millijoules)
      f.joules = static_cast<double>(*e1.millijoules - *e0.millijoules) / 1000.0;
    // The GEMMs that differed: their kept tiles against the FP64 reference (the first few).
    WorkloadTally& g = f.tallies[static_cast<std::size_t>(Workload::Gemm)];
    for (std::size_t i = 0; i < g.deviations.size() && i < 4; ++i)
      g.deviations[i].diagnosis = engine_->diagnose_gemm(g.deviations[i].item);
    figures_ = f;
    WindowRecord r;
    r.window = w;
    r.start_unix = f.start_unix;
    r.end_unix = f.end_unix;
    for (const Workload x : kAllWorkloads)
      if (x != Workload::P2P || g_opt.peer_device >= 0) r.cases.emplace_back(x, soak_case_name(x, plan_));
    r.tallies = f.tallies;
    r.sm_clock_mean_mhz = f.clocks.busy_samples > 0 ? f.clocks.mean_mhz : -1;
    r.power_mean_w = f.clocks.power_samples > 0 ? f.clocks.power_mean_w : -1;
    r.temperature_end_c = f.temperature_end_c;
    r.throttled = f.clocks.throttled;
    r.clock_reasons = clock_reason_names(f.clocks.reasons_seen);
    r.error = f.engine_error;
    log(window_line(r));
    if (!f.engine_error.empty()) throw Error("the load stopped: " + f.engine_error);
  }

  SoakPlan plan_;
  std::unique_ptr<SoakEngine> engine_;
  std::unique_ptr<HashLog> log_;
  WindowFigures figures_;
  Kind kind_ = kFailed;
  std::string failure_;
};

Soak& soak() {
  static Soak s;  // first touched inside a case, after CUDA started: stopped before CUDA is torn down
  return s;
}

const char* operations_of(Workload w) { return w == Workload::Gemm ? "GEMM" : w == Workload::Triad ? "triad" : "copy"; }

void report(benchmark::State& state, long long window, Workload w, const WindowFigures& f) {
  const WorkloadTally& t = f.tallies[static_cast<std::size_t>(w)];
  if (t.items == 0)
    throw Error(std::string("no ") + operations_of(w) + " completed in window " + std::to_string(window) +
                " (the load stalled)");
  if (t.deviating > 0) throw VerificationError(describe_deviations(w, window, t));
  for (auto _ : state) state.SetIterationTime(t.seconds_per_op());
  state.counters[w == Workload::Gemm ? "flops" : "bytes_per_second"] = t.rate();
  state.counters["window"] = static_cast<double>(window);
  state.counters["window_start_unix_s"] = f.start_unix;
  state.counters["window_end_unix_s"] = f.end_unix;
  state.counters["window_s"] = f.end_unix - f.start_unix;
  state.counters["soak_elapsed_s"] = f.end_unix - g_opt.soak_start_unix;
  state.counters["operations"] = static_cast<double>(t.items);
  state.counters["operations_checked"] = static_cast<double>(t.checked);
  state.counters["hash_mismatches"] = 0;
  const ClockSummary& c = f.clocks;
  report_clocks(state, c);
  if (c.busy_samples > 0) state.counters["clock_reasons"] = static_cast<double>(c.reasons_seen);
  if (f.joules >= 0 && f.end_unix > f.start_unix) state.counters["watts_mean"] = f.joules / (f.end_unix - f.start_unix);
  if (f.temperature_start_c >= 0) state.counters["temperature_start_c"] = f.temperature_start_c;
  if (f.temperature_end_c >= 0) state.counters["temperature_end_c"] = f.temperature_end_c;
  const SoakPlan& p = soak().plan();
  if (w == Workload::Gemm) {
    state.counters["m"] = state.counters["n"] = state.counters["k"] = static_cast<double>(p.gemm_dim);
    state.counters["level"] = p.gemm_level;
  }
  if (w == Workload::Triad) state.counters["working_set_bytes"] = 3.0 * 4.0 * static_cast<double>(p.triad_elements);
  append_label(state, c.note);
  if (window == g_opt.first_window && w == Workload::Gemm) {
    const EngineSetup& s = soak().engine().setup();
    append_label(state, "checked before the soak: " + s.fp64_check + "; " + s.determinism);
  }
}

void soak_case(benchmark::State& state, long long window, Workload w, bool last) {
  run_guarded(state, [&] {
    Soak& s = soak();
    s.ensure_started();
    if (w == Workload::P2P && !s.engine().setup().p2p_unavailable.empty())
      throw SkipCase(s.engine().setup().p2p_unavailable);
    const WindowFigures& f = s.window(window);
    if (last) s.finished();
    report(state, window, w, f);
  });
}

void register_soak() {
  if (g_opt.gemm_dim % 128 != 0)
    throw std::invalid_argument("--gemm-dim=" + std::to_string(g_opt.gemm_dim) + ": a multiple of 128");
  if (g_opt.copy_bytes < (1u << 20) || g_opt.copy_bytes % (1u << 20) != 0 || g_opt.copy_bytes > (4ull << 30))
    throw std::invalid_argument("--copy-bytes: a whole number of MiB from 1 MiB to 4 GiB");
  if (g_opt.soak_start_unix == 0) g_opt.soak_start_unix = unix_now();
  // The catalogue does not depend on the device (the triad's arrays, sized by the L2, are named
  // by it: soak_case_name).
  const SoakPlan named = plan_of(0);
  std::vector<Workload> loads = {Workload::Gemm, Workload::Triad, Workload::H2D, Workload::D2H};
  if (g_opt.peer_device >= 0) loads.push_back(Workload::P2P);
  const long long end = g_opt.first_window + g_opt.windows;
  for (long long w = g_opt.first_window; w < end; ++w)
    for (std::size_t i = 0; i < loads.size(); ++i) {
      const Workload x = loads[i];
      const bool last = w == end - 1 && i == loads.size() - 1;
      register_case(soak_case_name(x, named), [w, x, last](benchmark::State& st) { soak_case(st, w, x, last); });
    }
  benchmark::AddCustomContext("soak_windows", std::to_string(g_opt.windows));
  benchmark::AddCustomContext("soak_first_window", std::to_string(g_opt.first_window));
  benchmark::AddCustomContext("soak_window_s", std::to_string(g_opt.window_s));
  benchmark::AddCustomContext("soak_start_unix_s", std::to_string(g_opt.soak_start_unix));
  benchmark::AddCustomContext("soak_hash_log", g_opt.hash_log.empty() ? "none" : g_opt.hash_log);
}

void add_flags(FlagSet& f) {
  f.add_int("windows", &g_opt.windows, 1, 10000000, "windows to run (each a call of every case)");
  f.add_int("first-window", &g_opt.first_window, 0, 100000000, "the first window's number (a resumed soak goes on)");
  f.add_double("window-s", &g_opt.window_s, 1.0, 3600.0, "seconds per window");
  f.add_int("gemm-level", &g_opt.gemm_level, 2, 5, "the ladder level of the GEMM (BF16: 2-5; 4-5 on H100/H200 only)");
  f.add_int("gemm-dim", &g_opt.gemm_dim, 256, 16384, "M = N = K of the GEMM (a multiple of 128)");
  f.add_size("copy-bytes", &g_opt.copy_bytes, "bytes per copy (a whole number of MiB)");
  f.add_int("peer-device", &g_opt.peer_device, -1, 1023, "CUDA ordinal of the GPU to copy to and back (-1: none)");
  f.add_double("soak-start-unix", &g_opt.soak_start_unix, 0.0, 1e11,
               "when the soak began (seconds since 1970; soak_elapsed_s counts from it; 0: now)");
}

// The hash log lies beside the result file: its name comes from --benchmark_out, and --force
// (the suite's) lets it be replaced. Read before the suite takes the flags.
void find_hash_log(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--benchmark_out=", 0) == 0) g_opt.hash_log = hash_log_path(a.substr(16));
    if (a == "--force" || a == "--force=true") g_opt.replace_log = true;
    if (a.rfind("--benchmark_list_tests", 0) == 0 && a != "--benchmark_list_tests=false") listing = true;
  }
  if (listing) g_opt.hash_log.clear();
}

}  // namespace
}  // namespace triaudit

int main(int argc, char** argv) {
  using namespace triaudit;
  find_hash_log(argc, argv);
  if (!g_opt.hash_log.empty() && !g_opt.replace_log && access(g_opt.hash_log.c_str(), F_OK) == 0) {
    std::cerr << "triaudit_soak: bad command line: " << g_opt.hash_log
              << " exists: refusing to overwrite it (--force replaces it)\n";
    return kExitBadCommandLine;
  }
  const SuiteSpec spec{
      "triaudit_soak", "every load at once for hours (GEMM, STREAM triad, copies), every output checked bit for bit",
      add_flags,       register_soak,
      nullptr,         false};
  return suite_main(argc, argv, spec);
}
