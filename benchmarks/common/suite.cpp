#include "suite.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "case_description.hpp"
#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "health.hpp"
#include "host_info.hpp"
#include "measure.hpp"
#include "result_file.hpp"
#include "sizes.hpp"
#include "stream_latch.hpp"
#include "version.hpp"

namespace triaudit {
namespace {

struct SuiteState {
  long long ordinal = 0;
  std::string bind_numa = "off";
  bool force = false;     // --force: an existing --benchmark_out may be replaced
  bool describe = false;  // --describe-cases: print every case's description (JSON) and stop
  DeviceProbe probe;
  std::string setup_error;   // before_run failed: every case fails with this
  std::string context_lost;  // a case hit a sticky CUDA error: every later case fails with this
  std::unique_ptr<DeviceContext> context;
  std::atomic<int> failed{0};
  std::map<int, std::unique_ptr<NvmlDevice>> other_nvml;  // GPUs besides --device that cases use
};

SuiteState& suite() {
  static SuiteState s;
  return s;
}

void skip(benchmark::State& state, const std::string& reason) {
  const std::string msg = "skipped: " + reason;
#if TRIAUDIT_HAVE_SKIP_WITH_MESSAGE
  state.SkipWithMessage(msg);
#else
  state.SkipWithError(msg.c_str());
#endif
}

void fail(benchmark::State& state, const std::string& what) {
  ++suite().failed;
  state.SkipWithError(what.c_str());
}

bool wants_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  return false;
}

bool wants_version(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--version") == 0) return true;
  return false;
}

void print_version(const SuiteSpec& spec) {
  std::cout << spec.executable << " " << suite_version() << " (commit " << suite_git_commit() << ", JSON schema "
            << kSchemaVersion << ")\n";
}

bool lists_only(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--benchmark_list_tests", 22) == 0 &&
        std::strcmp(argv[i], "--benchmark_list_tests=false") != 0)
      return true;
  return false;
}

// A kernel that traps or faults leaves the context broken for the rest of the process: every
// later CUDA call returns the same error. Sticky errors are the ones a second synchronize still
// reports; an ordinary failed call does not show up here at all.
std::string sticky_cuda_error() {  // every device in use: a p2p case drives two
  std::string found;
  auto sticky_here = [&found] {
    if (cudaDeviceSynchronize() == cudaSuccess) return;
    const cudaError_t again = cudaDeviceSynchronize();
    if (again != cudaSuccess) found = std::string(cudaGetErrorName(again)) + ": " + cudaGetErrorString(again);
  };
  int current = 0;
  std::set<int> devices = devices_in_use();
  if (cudaGetDevice(&current) != cudaSuccess || (devices.insert(current), devices.size() == 1)) {
    sticky_here();  // the current device only
    return found;
  }
  for (const int d : devices) {
    (void)cudaSetDevice(d);
    sticky_here();
    if (!found.empty()) break;
  }
  (void)cudaSetDevice(current);
  return found;
}

// The hardware error counters of the GPUs a case uses (health.hpp), read before and after each
// call: --device's at the start, the others from when the case names them (watch_case_device).
class CaseHealth {
 public:
  static CaseHealth*& active() {
    static CaseHealth* watch = nullptr;
    return watch;
  }
  CaseHealth() {
    if (!suite().probe.available || !suite().context || !suite().context->nvml) return;
    active() = this;
    watch(static_cast<int>(suite().ordinal), *suite().context->nvml);
  }
  ~CaseHealth() {
    if (active() == this) active() = nullptr;
  }
  CaseHealth(const CaseHealth&) = delete;
  CaseHealth& operator=(const CaseHealth&) = delete;

  void watch(int ordinal, NvmlDevice& nvml) {
    for (const Watched& w : gpus_)
      if (w.ordinal == ordinal) return;
    gpus_.push_back({ordinal, &nvml, read_health(nvml)});
  }

  // After the case's body: the deltas as counters, what moved in the label, and the case made an
  // error when a counter says its figure cannot be trusted (unless it failed already).
  void finish(benchmark::State& state) {
    if (active() == this) active() = nullptr;
    if (gpus_.empty() || state.error_occurred()) return;
    std::vector<GpuReadings> readings;
    for (Watched& w : gpus_) readings.push_back({"GPU " + std::to_string(w.ordinal), w.before, read_health(*w.nvml)});
    const HealthChange c = health_change(readings);
    for (const auto& [k, v] : c.counters) state.counters[k] = v;
    if (!c.moved.empty()) {
      std::string said;
      for (const std::string& m : c.moved) said += (said.empty() ? "" : ", ") + m;
      append_label(state, "health: " + said + " during the case");
    }
    if (!c.failure.empty()) fail(state, c.failure);
  }

 private:
  struct Watched {
    int ordinal;
    NvmlDevice* nvml;
    HealthReading before;
  };
  std::vector<Watched> gpus_;
};

}  // namespace

void watch_case_device(int ordinal) {
  CaseHealth* watch = CaseHealth::active();
  if (watch == nullptr) return;
  if (ordinal == static_cast<int>(suite().ordinal)) return;  // watched from the start
  std::unique_ptr<NvmlDevice>& nvml = suite().other_nvml[ordinal];
  if (!nvml) {
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal) != cudaSuccess) return;
    nvml = std::make_unique<NvmlDevice>(bus, std::string());
  }
  watch->watch(ordinal, *nvml);
}

const DeviceContext& device() {
  if (!suite().context) throw Error("no device context: device() called outside a benchmark body");
  return *suite().context;
}

void require_runnable() {
  if (!suite().probe.available) throw SkipCase("no CUDA device (" + suite().probe.reason + ")");
  if (!suite().setup_error.empty()) throw Error(suite().setup_error);
  if (!suite().context_lost.empty()) throw Error("not run: " + suite().context_lost);
}

CaseOutcome run_guarded_outcome(benchmark::State& state, const std::function<void()>& body, bool preflight) {
  (void)state;
  if (preflight) {
    if (!suite().probe.available)
      return {CaseOutcome::kSkipped, "skipped: no CUDA device (" + suite().probe.reason + ")"};
    if (!suite().setup_error.empty()) return {CaseOutcome::kFailed, "error: " + suite().setup_error};
    if (!suite().context_lost.empty()) return {CaseOutcome::kFailed, "error: not run: " + suite().context_lost};
  }
  std::string failure;
  try {
    body();
    return {};
  } catch (const SkipCase& e) {
    return {CaseOutcome::kSkipped, std::string("skipped: ") + e.what()};
  } catch (const VerificationError& e) {
    failure = std::string("verification failed: ") + e.what();
  } catch (const std::exception& e) {
    failure = std::string("error: ") + e.what();
  }
  // Without a device every CUDA call fails alike: that is not a context a case broke.
  if (const std::string sticky = suite().probe.available ? sticky_cuda_error() : ""; !sticky.empty()) {
    suite().context_lost = "an earlier case broke the CUDA context (" + sticky + "; its message: " + failure +
                           "); run the remaining cases in a new process, e.g. with --benchmark_filter";
    failure += " [the CUDA context is lost (" + sticky + "): every later case in this process fails]";
  }
  return {CaseOutcome::kFailed, failure};
}

void report_outcome(benchmark::State& state, const CaseOutcome& outcome) {
  if (outcome.kind == CaseOutcome::kSkipped) skip(state, outcome.message.substr(std::string("skipped: ").size()));
  if (outcome.kind == CaseOutcome::kFailed) fail(state, outcome.message);
}

void run_guarded(benchmark::State& state, const std::function<void()>& body) {
  report_outcome(state, run_guarded_outcome(state, body));
}

void require_free_memory(std::size_t bytes) {
  std::size_t free_bytes = 0, total_bytes = 0;
  TRIAUDIT_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t margin = 256u << 20;  // the runtime, cuBLAS workspaces, fragmentation
  if (bytes + margin > free_bytes)
    throw SkipCase("needs " + format_bytes(bytes) + " of device memory, " + format_bytes(free_bytes) + " free of " +
                   format_bytes(total_bytes));
}

benchmark::internal::Benchmark* register_case(const std::string& name, std::function<void(benchmark::State&)> body) {
  note_case(name);
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [name, body](benchmark::State& st) {
    begin_case_call(name);
    CaseHealth health;
    body(st);
    health.finish(st);
  });
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  return b;
}

std::vector<char*> with_one_iteration_per_call(int argc, char** argv, double* min_time_s) {
#if TRIAUDIT_HAVE_SKIP_WITH_MESSAGE
  static char one_iteration[] = "--benchmark_min_time=1x";
#else
  static char one_iteration[] = "--benchmark_min_time=0.000000001";
#endif
  std::vector<char*> args(argv, argv + argc);
  for (auto it = args.begin() + (args.empty() ? 0 : 1); it != args.end();) {
    if (std::strncmp(*it, "--benchmark_min_time", 20) != 0) {
      ++it;
      continue;
    }
    std::string v = std::strchr(*it, '=') ? std::strchr(*it, '=') + 1 : "";
    if (!v.empty() && v.back() == 's') v.pop_back();
    char* end = nullptr;
    const double s = v.empty() ? -1.0 : std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(s >= 0.0) || s > 3600.0)
      throw FlagError(std::string(*it) +
                      ": a number of seconds from 0 to 3600 (triaudit calls each case once per repetition; the "
                      "seconds become the timed regions of that call, as --min-time)");
    if (min_time_s != nullptr) *min_time_s = s;
    it = args.erase(it);
  }
  args.insert(args.begin() + (args.empty() ? 0 : 1), one_iteration);
  args.push_back(nullptr);
  return args;
}

void check_google_benchmark_flags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strncmp(a, "--benchmark_repetitions", 23) != 0) continue;
    const char* v = std::strchr(a, '=');
    char* end = nullptr;
    const long long n = v ? std::strtoll(v + 1, &end, 10) : 0;
    if (v == nullptr || v[1] == '\0' || *end != '\0' || n < 1 || n > 100000)
      throw FlagError(std::string(a) + ": the repetitions must be a whole number from 1 to 100000");
  }
}

FlagSet suite_flags(const SuiteSpec& spec) {
  FlagSet flags;
  flags.add_int("device", &suite().ordinal, 0, 1023, "CUDA device ordinal to measure (after CUDA_VISIBLE_DEVICES)");
  flags.add_choice("bind-numa", &suite().bind_numa, {"off", "on"},
                   "restrict the process (CPUs and memory) to the GPU's NUMA node");
  flags.add_double("min-time", &measure_settings().min_time_s, 0.0, 3600.0,
                   "seconds of timed regions per call of a case (wall time: it bounds the real time)");
  flags.add_double("warmup-s", &measure_settings().warmup_s, 0.0, 60.0,
                   "seconds of a case's own work before its timed regions, on every call");
  flags.add_switch("force", &suite().force, "replace an existing --benchmark_out file (refused otherwise)");
  flags.add_switch(
      "describe-cases", &suite().describe,
      "print what every case says of itself (axes, judged counter, scope, headline) as JSON; no device used");
  if (spec.add_flags) spec.add_flags(flags);
  return flags;
}

std::optional<int> check_command_line(int argc, char** argv, const SuiteSpec& spec,
                                      const std::vector<std::string>& also_allowed) {
  if (wants_version(argc, argv)) {
    print_version(spec);
    return kExitOk;
  }
  const FlagSet flags = suite_flags(spec);
  if (wants_help(argc, argv)) {
    std::cout << spec.executable << ": " << spec.summary << "\n\ntriaudit flags:\n"
              << flags.help() << "\nExit codes: 0 ok, 1 a case failed, 2 bad command line, 77 no CUDA device.\n"
              << "Google Benchmark's --benchmark_* flags work as usual.\n";
    return kExitOk;
  }
  std::vector<char*> copy(argv, argv + argc);
  copy.push_back(nullptr);
  int n = argc;
  try {
    flags.parse(&n, copy.data());
    check_google_benchmark_flags(n, copy.data());
    (void)with_one_iteration_per_call(n, copy.data());
    std::vector<char*> rest(copy.begin(), copy.begin() + n);
    if (const auto out = take_result_file_flags(rest); out && !lists_only(n, copy.data()))
      if (const std::string why = result_file_refusal(out->path, suite().force); !why.empty()) throw FlagError(why);
  } catch (const FlagError& e) {
    std::cerr << spec.executable << ": bad command line: " << e.what() << "\n";
    return kExitBadCommandLine;
  }
  for (int i = 1; i < n; ++i) {
    const std::string a = copy[static_cast<std::size_t>(i)];
    const bool known = a.rfind("--benchmark_", 0) == 0 || a.rfind("--v=", 0) == 0 ||
                       std::find(also_allowed.begin(), also_allowed.end(), a) != also_allowed.end();
    if (!known) {
      std::cerr << spec.executable << ": bad command line: unrecognized argument '" << a << "' (see --help)\n";
      return kExitBadCommandLine;
    }
  }
  return std::nullopt;
}

int suite_main(int argc, char** argv, const SuiteSpec& spec) {
  if (wants_version(argc, argv)) {
    print_version(spec);
    return kExitOk;
  }
  const FlagSet flags = suite_flags(spec);
  const long long& ordinal = suite().ordinal;
  const std::string& bind_numa = suite().bind_numa;

  if (wants_help(argc, argv)) {
    std::cout << spec.executable << ": " << spec.summary << "\n\ntriaudit flags:\n"
              << flags.help() << "\nExit codes: 0 ok, 1 a case failed, 2 bad command line, 77 no CUDA device.\n"
              << "\nGoogle Benchmark flags follow.\n\n";
  }
  const bool list_only = lists_only(argc, argv);  // before Initialize consumes the flag
  std::vector<char*> args;
  std::optional<ResultFileRequest> out;
  try {
    flags.parse(&argc, argv);
    check_google_benchmark_flags(argc, argv);
    args = with_one_iteration_per_call(argc, argv, &measure_settings().min_time_s);
    out = take_result_file_flags(args);
    if (out && !list_only && !suite().describe)
      if (const std::string why = result_file_refusal(out->path, suite().force); !why.empty()) throw FlagError(why);
  } catch (const FlagError& e) {
    std::cerr << spec.executable << ": bad command line: " << e.what() << "\n";
    return kExitBadCommandLine;
  }
  // The result file is triaudit's (result_file.hpp): Google Benchmark gets /dev/null as its file.
  static char dev_null_out[] = "--benchmark_out=/dev/null";
  std::unique_ptr<DurableJsonReporter> file;
  if (out && !list_only && !suite().describe) {
    file = std::make_unique<DurableJsonReporter>(out->path, suite().force);
    args.insert(args.end() - 1, dev_null_out);
  }
  argc = static_cast<int>(args.size()) - 1;
  argv = args.data();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return kExitBadCommandLine;

  set_case_scope(spec.scope);
  try {
    spec.register_benchmarks();
  } catch (const std::exception& e) {
    std::cerr << spec.executable << ": bad command line: " << e.what() << "\n";
    return kExitBadCommandLine;
  }
  if (suite().describe) {
    std::cout << describe_all_cases();
    benchmark::Shutdown();
    return kExitOk;
  }
  if (list_only) {
    const std::size_t listed = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return listed > 0 ? kExitOk : kExitBadCommandLine;
  }

  SuiteState& s = suite();
  for (const auto& [k, v] : build_context_entries(std::getenv("CUDA_VISIBLE_DEVICES")))
    benchmark::AddCustomContext(k, v);
  for (const auto& [k, v] :
       run_context_entries(std::getenv("TRIAUDIT_GPU_INDEX"), std::getenv("TRIAUDIT_SIBLINGS_LOADED")))
    benchmark::AddCustomContext(k, v);
  benchmark::AddCustomContext("stream_latch",
                              StreamLatch::disabled()
                                  ? std::string("off (") + StreamLatch::disabled_reason() + ": launch gaps are timed)"
                                  : std::string("on"));
  s.probe = probe_device(static_cast<int>(ordinal));
  if (s.probe.available) {
    try {
      auto ctx = std::make_unique<DeviceContext>();
      char bus[32] = {};
      TRIAUDIT_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, static_cast<int>(ordinal)));
      ctx->nvml = std::make_unique<NvmlDevice>(bus, std::string());
      ctx->description = describe_device(static_cast<int>(ordinal), *ctx->nvml);
      s.context = std::move(ctx);
    } catch (const std::exception& e) {
      s.probe.available = false;
      s.probe.reason = std::string("describing the device failed: ") + e.what();
    }
  }
  if (s.probe.available) {
    for (const auto& [k, v] : device_context_entries(s.context->description)) benchmark::AddCustomContext(k, v);
    for (const auto& [k, v] : power_context_entries(*s.context->nvml)) benchmark::AddCustomContext(k, v);
    // Which error counters this GPU has (a case's missing counter is "not supported", never 0);
    // the first reading also registers for XID events.
    benchmark::AddCustomContext("health_counters", health_support(read_health(*s.context->nvml)));
    benchmark::AddCustomContext("nvml_library", NvmlDevice::library());
    const std::string& bus = s.context->description.pci_bus_id;
    benchmark::AddCustomContext("numa_binding", bind_numa == "on" ? bind_to_numa_node(gpu_numa_node(bus)) : "off");
    for (const auto& [k, v] : host_context_entries(bus)) benchmark::AddCustomContext(k, v);
  } else {
    benchmark::AddCustomContext("gpu_available", "false");
    benchmark::AddCustomContext("gpu_unavailable_reason", s.probe.reason);
    std::cerr << spec.executable << ": no CUDA device (" << s.probe.reason
              << "): every case is reported as skipped; exit code " << kExitNoDevice << "\n";
  }

  if (s.probe.available && spec.before_run) {
    try {
      spec.before_run();
    } catch (const std::exception& e) {
      s.setup_error = e.what();
      std::cerr << spec.executable << ": " << e.what() << "\n";
    }
  }
  struct NullReporter : benchmark::BenchmarkReporter {
    bool ReportContext(const Context&) override { return true; }
    void ReportRuns(const std::vector<Run>&) override {}
  } null_reporter;
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks(spec.quiet ? &null_reporter : nullptr, file.get());
  benchmark::Shutdown();
  if (file && !file->error().empty()) {
    std::cerr << spec.executable << ": the result file: " << file->error() << " (" << file->cases_written()
              << " case(s) written)\n";
    return kExitCaseFailed;
  }

  if (ran == 0) {
    std::cerr << spec.executable
              << ": bad command line: no case matches --benchmark_filter (see --benchmark_list_tests)\n";
    return kExitBadCommandLine;
  }
  if (!s.probe.available) return kExitNoDevice;
  if (s.failed > 0) {
    std::cerr << spec.executable << ": " << s.failed.load() << " case(s) failed; see their error messages\n";
    return kExitCaseFailed;
  }
  return kExitOk;
}

}  // namespace triaudit
