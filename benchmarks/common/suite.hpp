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
#include <string>

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
};

int suite_main(int argc, char** argv, const SuiteSpec& spec);

// The device under test. Only valid inside run_guarded bodies (throws otherwise).
const DeviceContext& device();

// Runs a benchmark body: without a device the case is skipped with the reason; SkipCase,
// VerificationError and any other exception become Google Benchmark errors with their message.
void run_guarded(benchmark::State& state, const std::function<void()>& body);

// Registers a case timed manually (CUDA events or the host clock), reported in microseconds,
// with the suite-wide --min-time when one was given.
benchmark::internal::Benchmark* register_case(const std::string& name, std::function<void(benchmark::State&)> body);

// Samples the SM clock of the device under test while a case is measured.
ClockWatch watch_clocks();

// Skips the case unless `bytes` more device memory is free (with a margin for the runtime).
void require_free_memory(std::size_t bytes);

}  // namespace triaudit
