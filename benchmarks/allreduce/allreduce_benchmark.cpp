// triaudit_allreduce (one process, every visible GPU) and triaudit_allreduce_mpi (one rank per
// process and GPU, under mpirun or srun): NCCL allreduce (sum) as nccl-tests measures it.
//
// Names:    allreduce/<in_place|out_of_place|graph>/<fp32|bf16|fp16>/algo:<ring|auto|...>/bytes:<per rank>
//           allreduce/scaling/<fp32|bf16|fp16>/algo:<...>/gpus:<g>/bytes:<per rank>   (--scaling=on)
// Counters: algbw = bytes / time, busbw = algbw x 2(n-1)/n (decimal, rates), busbw_max_rank
//           (the same from the slowest rank's time), ranks, gpus.
// Time:     algbw/busbw: after a warm-up, regions of >= 20 back-to-back collectives, each rank's
//           own CUDA events, the mean over ranks (every process's ranks); the slowest rank's time
//           is kept as busbw_max_rank. busbw_host_timed: nccl-tests' own method (src/common.cu
//           BenchTime): the host clock around 20 collectives up to their completion, averaged over
//           processes; it includes the enqueue and the sync, so it reads lower at small sizes.
// Algo:     ring sets NCCL_ALGO=Ring when the communicator is made (the seeds' 2(n-1)/n model);
//           auto leaves NCCL's choice (NVLS on NVSwitch Hopper systems; published nccl-tests figures).
//           What NCCL chose per size is recorded in the label (single process: a probe run).
// Check:    inputs are small integers, so the sum is exact in any order and precision; after
//           timing every element of every rank is compared with it (the wrong ones counted across
//           all ranks). Any wrong element makes the case an error.
// MPI:      every phase of a case ends with the ranks agreeing on its outcome (agreement.hpp), so
//           a case that fails on one rank fails on all of them, and the job goes on in step.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agreement.hpp"
#include "allreduce/pattern.cuh"
#include "allreduce_math.hpp"
#include "clock_watch.hpp"
#include "measure.hpp"
#include "names.hpp"
#include "nccl_check.hpp"
#include "nccl_choice.hpp"
#include "suite.hpp"
#include "world.hpp"

#if TRIAUDIT_WITH_MPI
#include <mpi.h>
#endif
#include <sys/stat.h>
#include <unistd.h>

namespace triaudit {
namespace {

constexpr int kNcclTestsIters = 20;  // nccl-tests' default -n

struct AllreduceOptions {
  std::uint64_t min_bytes = 8, max_bytes = 8ULL << 30;  // sizes beyond free memory are skipped
  std::vector<std::string> types = {"fp32", "bf16", "fp16"};
  std::vector<std::string> modes = {"out_of_place", "in_place", "graph"};
  std::vector<std::string> algos = {"ring", "auto"};
  long long gpus = 0;
  double timeout_s = 120;
  std::string scaling = "off";
  long long scaling_max_gpus = 8;
  std::string record_choice = "on";
} g_opt;

struct TypeInfo {
  const char* name;
  kernels::ReduceType type;
  ncclDataType_t nccl;
  int bytes;
};
const TypeInfo kTypes[] = {{"fp32", kernels::ReduceType::FP32, ncclFloat32, 4},
                           {"bf16", kernels::ReduceType::BF16, ncclBfloat16, 2},
                           {"fp16", kernels::ReduceType::FP16, ncclFloat16, 2}};

struct RankBuffers {
  DeviceBuffer<unsigned char> send, recv;
  DeviceBuffer<unsigned long long> wrong;
};

struct CaseSpec {
  std::string name, mode, algo;
  const TypeInfo* type;
  std::uint64_t bytes;
  int gpus = 0;  // 0: every rank; scaling: the first g
};

bool mpi_build() { return TRIAUDIT_WITH_MPI != 0; }

int my_rank() {
#if TRIAUDIT_WITH_MPI
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
#else
  return 0;
#endif
}

// The energy of every GPU this process drives, summed (mJ), or why it cannot be read.
EnergyReading summed_energy(std::vector<LocalRank>& ranks, const std::vector<std::size_t>& active) {
  std::uint64_t total = 0;
  for (std::size_t i : active) {
    if (!ranks[i].nvml) return {std::nullopt, "no NVML device"};
    const EnergyReading e = ranks[i].nvml->total_energy();
    if (!e.millijoules) return e;
    total += *e.millijoules;
  }
  return {total, ""};
}

// One case in phases; every MPI collective goes through `agree` (agreement.hpp).
void allreduce_body(benchmark::State& state, const CaseSpec& c, Agreement& agree) {
  agree.step([] {
    require_runnable();           // the suite's checks (skipped by run_guarded_outcome under MPI)
    (void)AllreduceWorld::get();  // throws when the communicators were never made or were aborted
  });
  agree.agree();
  AllreduceWorld& w = AllreduceWorld::get();
  auto& ranks = w.local();
  const TypeInfo& t = *c.type;
  const std::uint64_t bytes = c.bytes, n = bytes / static_cast<std::uint64_t>(t.bytes);
  const bool in_place = c.mode == "in_place", graph = c.mode == "graph";
  std::vector<ncclComm_t> comms;
  std::vector<RankBuffers> buf(ranks.size());
  std::vector<Event> starts, stops;
  std::vector<cudaEvent_t> stop_handles;
  GraphExec exec;
  int world = 0;
  std::vector<std::size_t> active;  // local ranks in this case's communicator

  agree.step([&] {
    if (graph && ranks.size() != 1)
      throw SkipCase("graph mode captures one GPU per process: run triaudit_allreduce_mpi, one rank per GPU");
    comms = w.comms(c.algo, c.gpus);
    world = c.gpus > 0 ? c.gpus : w.info().ranks;
    for (std::size_t i = 0; i < ranks.size(); ++i)
      if (comms[i] != nullptr) active.push_back(i);
    for (std::size_t i : active) {
      TRIAUDIT_CUDA(cudaSetDevice(ranks[i].device));
      std::size_t free_b = 0, total_b = 0;
      TRIAUDIT_CUDA(cudaMemGetInfo(&free_b, &total_b));
      if (2 * bytes + (512u << 20) > free_b)
        throw SkipCase("needs 2 x " + std::to_string(bytes) + " bytes of free device memory per rank");
    }
  });
  agree.agree();

  auto prepare = [&] {
    for (std::size_t i : active) {
      TRIAUDIT_CUDA(cudaSetDevice(ranks[i].device));
      kernels::fill_allreduce_input(in_place ? buf[i].recv.data() : buf[i].send.data(), t.type, n, ranks[i].rank, world,
                                    *ranks[i].stream);
      TRIAUDIT_CUDA_LAUNCH();
      if (!in_place) TRIAUDIT_CUDA(cudaMemsetAsync(buf[i].recv.data(), 0xFF, bytes, *ranks[i].stream));
      TRIAUDIT_CUDA(cudaStreamSynchronize(*ranks[i].stream));
    }
  };
  auto enqueue = [&](cudaStream_t capture_stream) {
    TRIAUDIT_NCCL(ncclGroupStart());
    for (std::size_t i : active) {
      const void* src = in_place ? buf[i].recv.data() : buf[i].send.data();
      TRIAUDIT_NCCL(ncclAllReduce(src, buf[i].recv.data(), n, t.nccl, ncclSum, comms[i],
                                  capture_stream ? capture_stream : ranks[i].stream->get()));
    }
    TRIAUDIT_NCCL(ncclGroupEnd());
  };
  auto run_once = [&] {
    if (graph)
      exec.launch(*ranks[0].stream);
    else
      enqueue(nullptr);
  };
  auto record = [&](std::vector<Event>& ev) {
    for (std::size_t k = 0; k < active.size(); ++k) {
      TRIAUDIT_CUDA(cudaSetDevice(ranks[active[k]].device));
      ev[k].record(*ranks[active[k]].stream);
    }
  };
  // The wrong elements of this process's ranks (the caller sums over processes).
  auto count_wrong = [&] {
    record(stops);
    w.wait(stop_handles, comms, g_opt.timeout_s);
    unsigned long long wrong = 0;
    for (std::size_t i : active) {
      TRIAUDIT_CUDA(cudaSetDevice(ranks[i].device));
      TRIAUDIT_CUDA(cudaMemsetAsync(buf[i].wrong.data(), 0, sizeof(unsigned long long), *ranks[i].stream));
      kernels::count_allreduce_wrong(buf[i].recv.data(), t.type, n, world, buf[i].wrong.data(), *ranks[i].stream);
      TRIAUDIT_CUDA_LAUNCH();
      unsigned long long here = 0;
      TRIAUDIT_CUDA(cudaMemcpyAsync(&here, buf[i].wrong.data(), sizeof here, cudaMemcpyDeviceToHost, *ranks[i].stream));
      TRIAUDIT_CUDA(cudaStreamSynchronize(*ranks[i].stream));
      wrong += here;
    }
    return static_cast<double>(wrong);
  };
  auto check_wrong = [&](const char* when) {
    double wrong = 0;
    agree.step([&] { wrong = count_wrong(); });
    const double total = agree.sum_max(wrong, wrong).first;
    if (total > 0)
      throw VerificationError(std::string(when) + ": " + std::to_string(static_cast<unsigned long long>(total)) +
                              " of " + std::to_string(n * static_cast<std::uint64_t>(world)) + " elements across " +
                              std::to_string(world) + " ranks differ from the exact sum");
  };

  agree.step([&] {
    for (std::size_t i : active) {
      TRIAUDIT_CUDA(cudaSetDevice(ranks[i].device));
      buf[i].send = DeviceBuffer<unsigned char>(bytes);
      buf[i].recv = DeviceBuffer<unsigned char>(bytes);
      buf[i].wrong = DeviceBuffer<unsigned long long>(1);
      starts.emplace_back();
      stops.emplace_back();
      stop_handles.push_back(stops.back().get());
    }
    if (graph) {  // the operation captured once (instantiation outside any timing), replayed
      TRIAUDIT_CUDA(cudaSetDevice(ranks[0].device));
      Graph g = Graph::capture(*ranks[0].stream, [&](cudaStream_t cs) { enqueue(cs); });
      exec = GraphExec(g);
    }
    if (forced_failure(std::getenv("TRIAUDIT_FAIL_CASE"), my_rank(), c.name))
      throw Error("failed on purpose (TRIAUDIT_FAIL_CASE)");
    prepare();
    run_once();
  });
  agree.agree();
  check_wrong("before timing");

  // One region: `ops` collectives back to back, each local rank timed by its own events. Gives
  // this process's sum of per-rank times and its slowest rank's time.
  const int ops = collectives_per_region(bytes);
  auto region = [&](double& local_sum, double& local_max) {
    record(starts);
    for (int i = 0; i < ops; ++i) run_once();
    record(stops);
    w.wait(stop_handles, comms, g_opt.timeout_s);
    local_sum = local_max = 0;
    for (std::size_t k = 0; k < active.size(); ++k) {
      const double sec = Event::seconds_between(starts[k], stops[k]);
      local_sum += sec;
      local_max = std::max(local_max, sec);
    }
  };
  const MeasureSettings& cfg = measure_settings();
  const double job_ranks = agree.sum_max(static_cast<double>(active.size()), 0.0).first;
  std::vector<double> mean_per_op;
  double sum_mean = 0, sum_max = 0, window = 0, warmup = 0;
  long long timed_ops = 0, warmup_ops = 0;
  double host_per_op = 0;  // nccl-tests' BenchTime figure
  EnergyReading e0, e1;
  ClockSummary clocks;
  for (auto _ : state) {
    ClockWatch watch(active.empty() ? nullptr : ranks[active[0]].nvml.get(),
                     static_cast<unsigned>(std::max(0, device().description.sm_clock_max_khz / 1000)));
    e0 = summed_energy(ranks, active);
    const double t0 = HostTimer::now();
    // Warm-up, then timed regions until --min-time. Every rank runs the same number of regions:
    // whether time is up is agreed (the max over processes).
    for (int phase = 0; phase < 2; ++phase) {
      const double start = HostTimer::now(), limit = phase == 0 ? cfg.warmup_s : cfg.min_time_s;
      bool more = true;
      while (more) {
        double local_sum = 0, local_max = 0;
        agree.step([&] { region(local_sum, local_max); });
        const auto [total, slowest] = agree.sum_max(local_sum, local_max);
        if (phase == 1) {
          mean_per_op.push_back(total / job_ranks / ops);
          sum_mean += total / job_ranks;
          sum_max += slowest;
          timed_ops += ops;
        } else {
          warmup_ops += ops;
        }
        const double up = HostTimer::now() - start >= limit ? 1.0 : 0.0;
        more = agree.sum_max(0.0, up).second == 0.0;
      }
      if (phase == 0) warmup = HostTimer::now() - t0;
    }
    window = HostTimer::now() - t0;
    e1 = summed_energy(ranks, active);
    clocks = watch.finish();
    state.SetIterationTime(sum_mean / static_cast<double>(timed_ops));
    // nccl-tests' own figure (BenchTime): the host clock around 20 collectives queued after the
    // warm-up, up to their completion, averaged over processes. It includes the host's enqueue
    // and the final sync, which per-rank events leave out, so it reads lower at small sizes.
    double host_s = 0;
    agree.step([&] {
      const double h0 = HostTimer::now();
      for (int i = 0; i < kNcclTestsIters; ++i) run_once();
      record(stops);
      w.wait(stop_handles, comms, g_opt.timeout_s);
      host_s = (HostTimer::now() - h0) / kNcclTestsIters;
    });
    host_per_op = agree.sum_max(host_s, 0.0).first / agree.sum_max(1.0, 0.0).first;
  }
  if (in_place)
    agree.step([&] {  // repeated in-place sums have grown the data: check one fresh operation
      prepare();
      run_once();
    });
  check_wrong("after timing");

  const double b = static_cast<double>(bytes), per_op = sum_mean / static_cast<double>(timed_ops);
  const double per_op_max = sum_max / static_cast<double>(timed_ops);
  state.counters["algbw"] = benchmark::Counter(b, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["busbw"] =
      benchmark::Counter(b * allreduce_bus_factor(world), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["busbw_max_rank"] = per_op_max > 0 ? busbw(b, per_op_max, world) : 0.0;
  if (host_per_op > 0) {
    state.counters["seconds_per_op_host_timed"] = host_per_op;
    state.counters["algbw_host_timed"] = b / host_per_op;
    state.counters["busbw_host_timed"] = busbw(b, host_per_op, world);
  }
  state.counters["ranks"] = world;
  state.counters["gpus"] = world;

  // Energy of every GPU that took part: this process's, summed over processes.
  LoopResult r;
  r.regions = static_cast<int>(mean_per_op.size());
  r.ops = timed_ops;
  r.seconds_per_op = per_op;
  r.noise = region_stats(mean_per_op).noise;
  r.warmup_seconds = warmup;
  r.window_seconds = window;
  r.clocks = clocks;
  const bool mine_known = e0.millijoules && e1.millijoules;
  const bool all_known = agree.sum_max(0.0, mine_known ? 0.0 : 1.0).second == 0.0;
  const double delta_mj =
      agree.sum_max(mine_known ? static_cast<double>(*e1.millijoules - *e0.millijoules) : 0.0, 0.0).first;
  const EnergyReading start_all =
      all_known ? EnergyReading{0, ""}
                : (mine_known       ? EnergyReading{std::nullopt, "another rank cannot read its counter"}
                   : e0.millijoules ? e1
                                    : e0);
  const EnergyReading end_all = all_known ? EnergyReading{static_cast<std::uint64_t>(delta_mj), ""} : start_all;
  r.energy =
      record_case_energy(c.name, window, start_all, end_all, timed_ops + warmup_ops, static_cast<int>(job_ranks));
  report_loop(state, r);
  state.counters["ops_per_region"] = ops;
  if (r.energy.valid && r.energy.watts_mean > 0)
    state.counters["busbw_per_watt"] = busbw(b, per_op, world) / r.energy.watts_mean;
  if (world == 1) append_label(state, "1 rank: busbw = algbw x 2(n-1)/n is 0; the time is a local reduction's latency");
  append_label(state, nccl_choice_label(c.algo, t.name, bytes, world));
}

// Under MPI the suite's own checks (a failed setup, a lost CUDA context) run inside the body's
// first phase, so a rank that cannot run the case still meets the others at their agreement
// instead of leaving the case early; a rank whose communicators were aborted makes every rank
// abort theirs (the next case would otherwise wait on a peer that is gone).
void allreduce_case(benchmark::State& state, const CaseSpec& c) {
  Agreement agree(mpi_build());
  agree.on_broken([](const std::string& why) { AllreduceWorld::abort_if_alive("another rank: " + why); });
  agree.broken_probe([] { return AllreduceWorld::broken(); });
  const CaseOutcome out = run_guarded_outcome(state, [&] { allreduce_body(state, c, agree); }, !mpi_build());
  report_outcome(state, out);
}

std::vector<std::uint64_t> scaling_sizes() {
  std::vector<std::uint64_t> out;
  for (std::uint64_t b : {1ULL << 20, 64ULL << 20, 1ULL << 30})
    if (b >= g_opt.min_bytes && b <= g_opt.max_bytes) out.push_back(b);
  return out;
}

std::vector<CaseSpec>& catalogue() {
  static std::vector<CaseSpec> cases;
  return cases;
}

void register_allreduce() {
  if (g_opt.min_bytes > g_opt.max_bytes) throw std::invalid_argument("--min-bytes is above --max-bytes");
  if (g_opt.algos.empty()) throw std::invalid_argument("--algos names no algorithm");
  auto wanted = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  std::vector<CaseSpec>& all = catalogue();
  for (const std::string mode : {"out_of_place", "in_place", "graph"}) {
    if (!wanted(g_opt.modes, mode)) continue;
    for (const TypeInfo& t : kTypes) {
      if (!wanted(g_opt.types, t.name)) continue;
      for (const std::string& algo : g_opt.algos)
        for (std::uint64_t bytes : allreduce_sizes(g_opt.min_bytes, g_opt.max_bytes, t.bytes))
          all.push_back({BenchName("allreduce", mode, t.name).arg("algo", algo).arg("bytes", bytes).str(), mode, algo,
                         &t, bytes, 0});
    }
  }
  if (g_opt.scaling == "on")
    for (const TypeInfo& t : kTypes) {
      if (!wanted(g_opt.types, t.name)) continue;
      for (const std::string& algo : g_opt.algos)
        for (int g : scaling_gpu_counts(static_cast<int>(g_opt.scaling_max_gpus)))
          for (std::uint64_t bytes : scaling_sizes())
            all.push_back({BenchName("allreduce", "scaling", t.name)
                               .arg("algo", algo)
                               .arg("gpus", static_cast<std::uint64_t>(g))
                               .arg("bytes", bytes)
                               .str(),
                           "out_of_place", algo, &t, bytes, g});
    }
  for (const CaseSpec& c : all) register_case(c.name, [c](benchmark::State& s) { allreduce_case(s, c); });
}

void add_flags(FlagSet& f) {
  f.add_size("min-bytes", &g_opt.min_bytes, "smallest message per rank");
  f.add_size("max-bytes", &g_opt.max_bytes, "largest message per rank (sizes not fitting in free memory are skipped)");
  f.add_list("types", &g_opt.types, {"fp32", "bf16", "fp16"}, "element types");
  f.add_list("modes", &g_opt.modes, {"out_of_place", "in_place", "graph"}, "operation modes");
  f.add_list("algos", &g_opt.algos, {"ring", "tree", "nvls", "collnet", "auto"},
             "NCCL algorithms, each its own case (ring sets NCCL_ALGO=Ring; auto: NCCL's choice, or NCCL_ALGO as set)");
  f.add_int("gpus", &g_opt.gpus, 0, 1024, "single process: how many GPUs (0: all visible)");
  f.add_double("timeout-s", &g_opt.timeout_s, 1, 86400, "abort a collective that has not completed after this long");
  f.add_choice("scaling", &g_opt.scaling, {"off", "on"},
               "also measure 1, 2, 4, ... GPUs (1 MiB, 64 MiB, 1 GiB; out of place)");
  f.add_int("scaling-max-gpus", &g_opt.scaling_max_gpus, 1, 1024, "the largest GPU count of the scaling sweep");
  f.add_choice("record-choice", &g_opt.record_choice, {"on", "off"},
               "single process: find out which algorithm and protocol NCCL picks per case (a short probe run "
               "with NCCL_DEBUG_SUBSYS=TUNING before the measurement)");
}

bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], flag) == 0) return true;
  return false;
}

SuiteSpec base_spec(const char* exe) {
  SuiteSpec spec;
  spec.executable = exe;
  spec.summary = "NCCL allreduce (sum): algbw and busbw as nccl-tests define them, every element checked";
  spec.add_flags = add_flags;
  spec.register_benchmarks = register_allreduce;
  return spec;
}

}  // namespace
}  // namespace triaudit

#if !TRIAUDIT_WITH_MPI
namespace triaudit {
namespace {

// The probe child (--nccl-choice-probe=FILE, started by the parent with NCCL's debug log on):
// one collective per (algorithm, type, size) of the catalogue, up to 1 GiB, each followed by
// reading what NCCL logged for it. Writes "<algo> <type> <bytes> <Algo>/<Proto>" lines.
int run_choice_probe(const std::string& out_path) {
  const char* log_path = std::getenv("NCCL_DEBUG_FILE");
  if (log_path == nullptr) return 2;
  AllreduceWorld::create_single_process(static_cast<int>(g_opt.gpus));
  AllreduceWorld& w = AllreduceWorld::get();
  auto& ranks = w.local();
  const std::uint64_t cap = std::min<std::uint64_t>(g_opt.max_bytes, 1ULL << 30);
  std::vector<DeviceBuffer<unsigned char>> bufs;
  for (auto& r : ranks) {
    TRIAUDIT_CUDA(cudaSetDevice(r.device));
    bufs.emplace_back(cap);
    TRIAUDIT_CUDA(cudaMemset(bufs.back().data(), 0, cap));
  }
  std::string out;
  std::size_t seen = 0;
  auto new_log = [&] {
    std::FILE* f = std::fopen(log_path, "rb");
    std::string text;
    if (f) {
      std::fseek(f, static_cast<long>(seen), SEEK_SET);
      char chunk[4096];
      std::size_t got = 0;
      while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0) text.append(chunk, got);
      std::fclose(f);
    }
    seen += text.size();
    return text;
  };
  for (const CaseSpec& c : catalogue()) {
    if (c.mode == "scaling" || c.gpus != 0 || c.bytes > cap) continue;
    const std::string key = nccl_choice_key(c.algo, c.type->name, c.bytes);
    if (out.find(key + " ") != std::string::npos) continue;  // in-place/graph: the same choice
    const std::vector<ncclComm_t>& comms = w.comms(c.algo);
    (void)new_log();  // skip what communicator creation logged
    TRIAUDIT_NCCL(ncclGroupStart());
    for (std::size_t i = 0; i < ranks.size(); ++i)
      TRIAUDIT_NCCL(ncclAllReduce(bufs[i].data(), bufs[i].data(), c.bytes / static_cast<std::uint64_t>(c.type->bytes),
                                  c.type->nccl, ncclSum, comms[i], *ranks[i].stream));
    TRIAUDIT_NCCL(ncclGroupEnd());
    for (auto& r : ranks) TRIAUDIT_CUDA(cudaStreamSynchronize(*r.stream));
    const std::vector<NcclChoice> choices = parse_nccl_tuning(new_log());
    if (!choices.empty())
      out +=
          format_nccl_choice(c.algo, c.type->name, c.bytes, choices.front().algorithm + "/" + choices.front().protocol);
  }
  std::FILE* f = std::fopen(out_path.c_str(), "w");
  if (f == nullptr) return 1;
  std::fputs(out.c_str(), f);
  std::fclose(f);
  return 0;
}

// The parent's side: run this executable again as the probe, with NCCL's debug log in a temporary
// file, and keep its answers for the labels. Never fails the run: a probe that finds nothing says
// so in the labels.
void probe_nccl_choices(const char* self, int argc, char** argv) {
  if (g_opt.record_choice != "on") {
    set_nccl_choices({}, "NCCL's choice not recorded (--record-choice=off)");
    return;
  }
  char dir_template[] = "/tmp/triaudit-nccl-probe-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) {
    set_nccl_choices({}, "NCCL's choice not recorded (no temporary folder)");
    return;
  }
  const std::string log = std::string(dir) + "/nccl.log", answers = std::string(dir) + "/choices.txt";
  // At most 5 minutes (timeout(1) where it exists): a probe whose NCCL setup hangs must not hold
  // the measurement back forever.
  const bool have_timeout = std::system("command -v timeout > /dev/null 2>&1") == 0;
  std::string cmd = std::string(have_timeout ? "timeout -k 10 300 " : "") +
                    "env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE='" + log + "' '" + self + "'";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--benchmark_", 0) == 0) continue;
    std::string quoted;
    for (char ch : a) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    cmd += " '" + quoted + "'";
  }
  cmd += " '--nccl-choice-probe=" + answers + "' > '" + std::string(dir) + "/probe.out' 2>&1";
  const int rc = std::system(cmd.c_str());
  std::string text;
  if (std::FILE* f = std::fopen(answers.c_str(), "r")) {
    char chunk[4096];
    std::size_t got = 0;
    while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0) text.append(chunk, got);
    std::fclose(f);
  }
  NcclChoices choices = read_nccl_choices(text);
  const std::string why = choices.empty() ? "NCCL's choice not recorded (the probe run, exit " + std::to_string(rc) +
                                                ", logged no NCCL_DEBUG_SUBSYS=TUNING line)"
                                          : "NCCL's choice not recorded for this size (the probe stops at 1 GiB)";
  benchmark::AddCustomContext("nccl_choice_probe",
                              choices.empty() ? why : std::to_string(choices.size()) + " choices recorded");
  set_nccl_choices(std::move(choices), why);
  std::remove(log.c_str());
  std::remove(answers.c_str());
  std::remove((std::string(dir) + "/probe.out").c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace triaudit
#endif

#if TRIAUDIT_WITH_MPI
namespace {
// A short, printable digest of a unique id: equal on every rank when the broadcast worked.
std::string fingerprint(const ncclUniqueId& id) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : id.internal) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace triaudit;
  // The command line first, before MPI or CUDA: --help, a bad flag or a stray word get their
  // answer (exit 0 / 2) on any machine, as every other executable gives it.
  SuiteSpec spec = base_spec("triaudit_allreduce_mpi");
  if (const auto rc = check_command_line(argc, argv, spec, {"--dry-run"})) return *rc;
  // Every rank must run the cases in the same order: Google Benchmark seeds its shuffle per process.
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--benchmark_enable_random_interleaving", 38) == 0 &&
        std::strcmp(argv[i], "--benchmark_enable_random_interleaving=false") != 0) {
      std::cerr << "triaudit_allreduce_mpi: bad command line: " << argv[i]
                << " would run the cases in a different order on every rank (each process shuffles on its own)\n";
      return kExitBadCommandLine;
    }

  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  int local_rank = 0, local_size = 1;
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_size(local, &local_size);
  int leader = local_rank == 0 ? 1 : 0, nodes = 1;
  MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  // One unique id per algorithm variant: made by rank 0, broadcast to all (no GPU needed).
  std::map<std::string, ncclUniqueId> ids;
  int id_ok = 1;
  for (const std::string& algo : g_opt.algos) {
    ncclUniqueId id{};
    if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) id_ok = 0;
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ids[algo] = id;
  }
  MPI_Bcast(&id_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);

  int count = 0;
  const cudaError_t ce = cudaGetDeviceCount(&count);
  std::string map_error = ce == cudaSuccess ? "" : std::string("no CUDA device (") + cudaGetErrorString(ce) + ")";
  int device = ce == cudaSuccess ? device_for_local_rank(local_rank, local_size, count, &map_error) : -1;
  // Two ranks of a node must not share a GPU (e.g. one GPU visible to each, but the same one):
  // compare the chosen devices' UUIDs over the node.
  char uuid[16] = {};
  if (device >= 0) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) std::memcpy(uuid, prop.uuid.bytes, sizeof uuid);
  }
  std::vector<char> uuids(static_cast<std::size_t>(local_size) * sizeof uuid);
  MPI_Allgather(uuid, sizeof uuid, MPI_CHAR, uuids.data(), sizeof uuid, MPI_CHAR, local);
  for (int r = 0; r < local_size && device >= 0; ++r)
    if (r != local_rank && std::memcmp(&uuids[static_cast<std::size_t>(r) * sizeof uuid], uuid, sizeof uuid) == 0 &&
        std::any_of(uuid, uuid + sizeof uuid, [](char ch) { return ch != 0; })) {
      map_error = "local ranks " + std::to_string(std::min(r, local_rank)) + " and " +
                  std::to_string(std::max(r, local_rank)) + " would share one GPU: start at most one rank per GPU";
      device = -1;
    }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  char line[1024];
  std::snprintf(line, sizeof line, "rank %d of %d on %s: local rank %d of %d, %d node(s); NCCL unique id %s; device %s",
                rank, size, host, local_rank, local_size, nodes,
                id_ok ? fingerprint(ids.begin()->second).c_str() : "FAILED",
                device >= 0 ? std::to_string(device).c_str() : map_error.c_str());
  std::vector<char> all(rank == 0 ? static_cast<std::size_t>(size) * sizeof line : 1);
  MPI_Gather(line, sizeof line, MPI_CHAR, all.data(), sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);

  // The worst over ranks: 3 NCCL could not make an id (a failure, exit 1), 2 ranks mapped onto GPUs
  // they cannot use (the launch's setup, exit 2), 1 no GPU (77), 0 ready.
  int worst = 0, mine = !id_ok ? 3 : (device < 0 ? (ce == cudaSuccess ? 2 : 1) : 0);
  MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  if (has_flag(argc, argv, "--dry-run")) {
    if (rank == 0)
      for (int r = 0; r < size; ++r) std::printf("%s\n", &all[static_cast<std::size_t>(r) * sizeof line]);
    MPI_Finalize();
    return id_ok ? 0 : 1;  // the bootstrap got through; mapping problems are printed per rank
  }
  if (worst != 0) {
    if (rank == 0) {
      for (int r = 0; r < size; ++r) std::fprintf(stderr, "%s\n", &all[static_cast<std::size_t>(r) * sizeof line]);
      std::fprintf(stderr, "triaudit_allreduce_mpi: not every rank has a GPU and a unique id: nothing measured\n");
    }
    MPI_Finalize();
    return worst == 1 ? kExitNoDevice : worst == 2 ? kExitBadCommandLine : 1;
  }

  // Rank 0 reports; the others keep quiet and write no file.
  std::vector<char*> args(argv, argv + argc);
  if (rank != 0)
    args.erase(std::remove_if(args.begin() + 1, args.end(),
                              [](char* a) { return std::strncmp(a, "--benchmark_out", 15) == 0; }),
               args.end());
  std::string device_flag = "--device=" + std::to_string(device);
  args.push_back(device_flag.data());
  args.push_back(nullptr);
  int n_args = static_cast<int>(args.size()) - 1;

  spec.quiet = rank != 0;
  const WorldInfo info{size, nodes, local_size, true};
  spec.before_run = [&] {
    set_nccl_choices({},
                     "NCCL's choice not recorded under MPI (run triaudit_allreduce on one node, or read "
                     "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING output)");
    AllreduceWorld::create_mpi_rank(ids, rank, info, device);
    for (const auto& [k, v] : AllreduceWorld::get().context()) benchmark::AddCustomContext(k, v);
  };
  const int rc = suite_main(n_args, args.data(), spec);
  int worst_rc = rc;
  MPI_Allreduce(&rc, &worst_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst_rc;
}
#else
int main(int argc, char** argv) {
  using namespace triaudit;
  const std::string trap = single_process_trap([](const char* k) { return std::getenv(k); });
  if (!trap.empty()) {
    std::cerr << "triaudit_allreduce: refusing to run: " << trap << "\n";
    return kExitBadCommandLine;
  }
  SuiteSpec spec = base_spec("triaudit_allreduce");
  // The probe child: parse the same flags, build the catalogue, report NCCL's choices, exit.
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--nccl-choice-probe=", 20) == 0) {
      const std::string out = argv[i] + 20;
      std::vector<char*> rest;
      for (int j = 0; j < argc; ++j)
        if (j != i) rest.push_back(argv[j]);
      FlagSet flags = suite_flags(spec);
      int n = static_cast<int>(rest.size());
      try {
        flags.parse(&n, rest.data());
        register_allreduce();
        return run_choice_probe(out);
      } catch (const std::exception& e) {
        std::cerr << "triaudit_allreduce (NCCL choice probe): " << e.what() << "\n";
        return 1;
      }
    }
  if (has_flag(argc, argv, "--dry-run")) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
      std::printf("single process: no CUDA device (%s)\n", cudaGetErrorString(e));
    else
      std::printf("single process: %d visible GPU(s) -> %d rank(s), one NCCL communicator each\n", count, count);
    return 0;
  }
  // The probe needs the command line as given (suite_main removes the flags it consumes).
  auto original = std::make_shared<std::vector<std::string>>(argv, argv + argc);
  spec.before_run = [original] {
    std::vector<char*> args;
    for (std::string& a : *original) args.push_back(a.data());
    probe_nccl_choices(args[0], static_cast<int>(args.size()), args.data());
    AllreduceWorld::create_single_process(static_cast<int>(g_opt.gpus));
    for (const auto& [k, v] : AllreduceWorld::get().context()) benchmark::AddCustomContext(k, v);
  };
  return suite_main(argc, argv, spec);
}
#endif
