// The shared driver of every triaudit executable: flags, device choice, JSON context, the
// no-GPU path, turning exceptions into Google Benchmark errors, and the exit code.
//
// Exit codes (documented in README.md):
//   0  every case ran (some may be skipped for a stated reason, e.g. too little memory)
//   1  at least one case failed: a CUDA/library error or a failed verification
//   2  bad command line (the message names the flag)
//   77 no usable CUDA device: every case was reported "skipped: no CUDA device (...)"
#pragma once
#include <benchmark/benchmark.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "case_description.hpp"
#include "clock_watch.hpp"
#include "device_query.hpp"
#include "error.hpp"
#include "flags.hpp"

namespace triaudit {

constexpr int kExitOk = 0;
constexpr int kExitCaseFailed = 1;
constexpr int kExitBadCommandLine = 2;
constexpr int kExitNoDevice = 77;

struct SuiteSpec {
  std::string executable;  // e.g. "triaudit_stream"
  std::string summary;     // one line for --help
  std::function<void(FlagSet&)> add_flags;
  // Registers the catalogue. Must not depend on the device: `--benchmark_list_tests` is the
  // same everywhere; what a device cannot do is skipped at run time.
  std::function<void()> register_benchmarks;
  // Runs once the device is known, before any case (e.g. creating NCCL communicators); may add
  // context entries. An exception here makes every case an error with its message.
  std::function<void()> before_run;
  // Other ranks of a multi-process job: print nothing, write no file (rank 0 reports).
  bool quiet = false;
  // What its cases measure: "gpu" (one GPU each) or "node" (all of a node's GPUs at once: p2p, the
  // collectives); each case's description says so (case_description.hpp).
  std::string scope = "gpu";
};

int suite_main(int argc, char** argv, const SuiteSpec& spec);

// Google Benchmark must accept each case's first call: the case's own loop (measure.hpp) warms up
// and times regions until --min-time, so re-running it to size an iteration count would only
// multiply the time. Set through the global flag (a per-case Iterations(1) would append
// "/iterations:1" to every name): 1.8+ "--benchmark_min_time=1x"; 1.7 accepts any call whose
// reported time exceeds a nanosecond. A user's --benchmark_min_time=S (or Ss) is taken out and
// becomes the seconds of timed regions per call (--min-time), stored in *min_time_s: Google
// Benchmark would otherwise call each case again and again to fill S seconds of reported time.
// Returns argv with the flag in place, null-terminated (size() - 1 arguments). Throws FlagError
// for a value that is not a number of seconds (e.g. 1.8's "10x": iterations are triaudit's).
std::vector<char*> with_one_iteration_per_call(int argc, char** argv, double* min_time_s = nullptr);

// Refuses Google Benchmark flags whose values would crash or mislead it, with FlagError naming the
// flag: --benchmark_repetitions must be a whole number from 1 (-1 made every executable abort).
void check_google_benchmark_flags(int argc, char** argv);

// The device under test. Only valid inside run_guarded bodies (throws otherwise).
const DeviceContext& device();

// Runs a benchmark body: without a device the case is skipped with the reason; SkipCase,
// VerificationError and any other exception become Google Benchmark errors with their message.
void run_guarded(benchmark::State& state, const std::function<void()>& body);

// The same in two halves, for a case whose processes must agree on its outcome before it is
// reported (allreduce under MPI): run the body, then report what came out.
struct CaseOutcome {
  enum Kind { kOk, kSkipped, kFailed } kind = kOk;
  std::string message;  // "skipped: ...", "error: ...", "verification failed: ..."
};
// `preflight` false: the suite's own checks (no device, a failed setup, a lost context) are left to
// the body, which calls require_runnable() where it suits it (inside an MPI agreement).
CaseOutcome run_guarded_outcome(benchmark::State& state, const std::function<void()>& body, bool preflight = true);
void report_outcome(benchmark::State& state, const CaseOutcome& outcome);

// A case that drives GPUs besides --device (a p2p pair, allreduce ranks) names them here, once it
// knows them: their hardware error counters are read from now to the case's end (health.hpp).
void watch_case_device(int ordinal);
// Throws SkipCase / Error when the suite's checks say the case cannot run.
void require_runnable();

// Every triaudit flag of this executable (the suite's and the corner's).
FlagSet suite_flags(const SuiteSpec& spec);
// Checks a command line without touching a device or a launcher: --help prints the help (0), a
// bad triaudit flag or an argument that is neither a triaudit nor a --benchmark_ flag is refused
// naming it (2). nullopt: fine, go on. `also_allowed`: further plain flags (e.g. --dry-run).
std::optional<int> check_command_line(int argc, char** argv, const SuiteSpec& spec,
                                      const std::vector<std::string>& also_allowed = {});

// Registers a case timed manually (CUDA events or the host clock), reported in microseconds,
// with the suite-wide --min-time when one was given.
benchmark::internal::Benchmark* register_case(const std::string& name, std::function<void(benchmark::State&)> body);

// Skips the case unless `bytes` more device memory is free (with a margin for the runtime).
void require_free_memory(std::size_t bytes);

}  // namespace triaudit
