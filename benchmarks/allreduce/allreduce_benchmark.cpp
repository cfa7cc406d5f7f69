// triaudit_allreduce (one process, every visible GPU) and triaudit_allreduce_mpi (one rank per
// process and GPU, under mpirun or srun): NCCL allreduce (sum) as nccl-tests measures it.
//
// Name:     allreduce/<in_place|out_of_place|graph>/<fp32|bf16|fp16>/bytes:<bytes per rank>
// Counters: algbw = bytes / time, busbw = algbw x 2(n-1)/n (decimal, rates), ranks.
// Time:     CUDA events on every rank's stream, the slowest rank's time (MPI: the maximum over
//           all processes, so every rank makes the same iteration decisions), several operations
//           per timed region for small sizes, reported per operation.
// Check:    inputs are small integers, so the sum is exact in any order and precision; after
//           timing every element of every rank is compared with it (the wrong ones counted across
//           all ranks). Any wrong element makes the case an error.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "allreduce_math.hpp"
#include "../common/names.hpp"
#include "../common/nccl_check.hpp"
#include "../common/suite.hpp"
#include "allreduce/pattern.cuh"
#include "world.hpp"

#if TRIAUDIT_WITH_MPI
#include <mpi.h>
#include <unistd.h>
#endif

namespace triaudit {
namespace {

struct AllreduceOptions {
  std::uint64_t min_bytes = 8, max_bytes = 8ULL << 30;  // sizes beyond free memory are skipped
  std::vector<std::string> types = {"fp32", "bf16", "fp16"};
  std::vector<std::string> modes = {"out_of_place", "in_place", "graph"};
  std::string algo = "ring";
  long long gpus = 0;
  double timeout_s = 120;
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

// Every process must take the same branch: a skip anywhere is a skip everywhere.
void collective_require(AllreduceWorld& w, bool ok, const std::string& reason) {
  if (w.max_over_processes(ok ? 0.0 : 1.0) > 0) throw SkipCase(ok ? "another rank: " + reason : reason);
}

void allreduce_case(benchmark::State& state, const std::string& mode, const TypeInfo& t, std::uint64_t bytes) {
  run_guarded(state, [&] {
    AllreduceWorld& w = AllreduceWorld::get();
    auto& ranks = w.local();
    const std::uint64_t n = bytes / static_cast<std::uint64_t>(t.bytes);
    const int world = w.info().ranks;
    if (mode == "graph" && ranks.size() != 1)
      throw SkipCase("graph mode captures one GPU per process: run triaudit_allreduce_mpi, one rank per GPU");
    bool fits = true;
    for (auto& r : ranks) {
      TRIAUDIT_CUDA(cudaSetDevice(r.device));
      std::size_t free_b = 0, total_b = 0;
      TRIAUDIT_CUDA(cudaMemGetInfo(&free_b, &total_b));
      fits = fits && 2 * bytes + (512u << 20) < free_b;
    }
    collective_require(w, fits, "needs 2 x " + std::to_string(bytes) + " bytes of free device memory per rank");

    std::vector<RankBuffers> buf(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      TRIAUDIT_CUDA(cudaSetDevice(ranks[i].device));
      buf[i].send = DeviceBuffer<unsigned char>(bytes);
      buf[i].recv = DeviceBuffer<unsigned char>(bytes);
      buf[i].wrong = DeviceBuffer<unsigned long long>(1);
    }
    const bool in_place = mode == "in_place";
    auto prepare = [&] {
      for (std::size_t i = 0; i < ranks.size(); ++i) {
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
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        const void* src = in_place ? buf[i].recv.data() : buf[i].send.data();
        TRIAUDIT_NCCL(ncclAllReduce(src, buf[i].recv.data(), n, t.nccl, ncclSum, ranks[i].comm,
                                    capture_stream ? capture_stream : ranks[i].stream->get()));
      }
      TRIAUDIT_NCCL(ncclGroupEnd());
    };
    std::vector<Event> starts, stops;
    std::vector<cudaEvent_t> stop_handles;
    for (auto& r : ranks) {
      TRIAUDIT_CUDA(cudaSetDevice(r.device));
      starts.emplace_back();
      stops.emplace_back();
      stop_handles.push_back(stops.back().get());
    }
    auto record = [&](std::vector<Event>& ev) {
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        TRIAUDIT_CUDA(cudaSetDevice(ranks[i].device));
        ev[i].record(*ranks[i].stream);
      }
    };
    auto verify = [&](const char* when) {
      record(stops);
      w.wait(stop_handles, g_opt.timeout_s);
      unsigned long long wrong = 0;
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        TRIAUDIT_CUDA(cudaSetDevice(ranks[i].device));
        TRIAUDIT_CUDA(cudaMemsetAsync(buf[i].wrong.data(), 0, sizeof(unsigned long long), *ranks[i].stream));
        kernels::count_allreduce_wrong(buf[i].recv.data(), t.type, n, world, buf[i].wrong.data(), *ranks[i].stream);
        TRIAUDIT_CUDA_LAUNCH();
        unsigned long long here = 0;
        TRIAUDIT_CUDA(cudaMemcpyAsync(&here, buf[i].wrong.data(), sizeof here, cudaMemcpyDeviceToHost, *ranks[i].stream));
        TRIAUDIT_CUDA(cudaStreamSynchronize(*ranks[i].stream));
        wrong += here;
      }
      wrong = w.sum_over_processes(wrong);
      if (wrong > 0)
        throw VerificationError(std::string(when) + ": " + std::to_string(wrong) + " of " +
                                std::to_string(n * static_cast<std::uint64_t>(world)) + " elements across " +
                                std::to_string(world) + " ranks differ from the exact sum");
    };

    // Graph mode: the operation captured once (instantiation outside any timing), replayed.
    GraphExec exec;
    if (mode == "graph") {
      TRIAUDIT_CUDA(cudaSetDevice(ranks[0].device));
      Graph g = Graph::capture(*ranks[0].stream, [&](cudaStream_t cs) { enqueue(cs); });
      exec = GraphExec(g);
    }
    auto run_once = [&] {
      if (mode == "graph") exec.launch(*ranks[0].stream);
      else enqueue(nullptr);
    };

    prepare();
    run_once();
    verify("before timing");

    const int ops = static_cast<int>(std::clamp<std::uint64_t>((32ULL << 20) / std::max<std::uint64_t>(bytes, 1), 1, 100));
    double total = 0;
    long long total_ops = 0;
    ClockWatch clocks = watch_clocks();  // the GPU this process measures first
    for (auto _ : state) {
      record(starts);
      for (int i = 0; i < ops; ++i) run_once();
      record(stops);
      w.wait(stop_handles, g_opt.timeout_s);
      double slowest = 0;
      for (std::size_t i = 0; i < ranks.size(); ++i) slowest = std::max(slowest, Event::seconds_between(starts[i], stops[i]));
      slowest = w.max_over_processes(slowest);
      total += slowest;
      total_ops += ops;
      state.SetIterationTime(slowest / ops);
    }
    clocks.finish(state);
    if (in_place) {  // repeated in-place sums have grown the data: check one fresh operation
      prepare();
      run_once();
    }
    verify("after timing");

    const double b = static_cast<double>(bytes);
    state.counters["algbw"] = benchmark::Counter(b, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["busbw"] = benchmark::Counter(b * allreduce_bus_factor(world), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["ranks"] = world;
    state.counters["ops_per_region"] = ops;
    state.counters["seconds_per_op"] = total_ops > 0 ? total / static_cast<double>(total_ops) : 0;
    if (world == 1) state.SetLabel("1 rank: busbw = algbw x 2(n-1)/n is 0; the time is a local reduction's latency");
  });
}

void register_allreduce() {
  if (g_opt.min_bytes > g_opt.max_bytes) throw std::invalid_argument("--min-bytes is above --max-bytes");
  auto wanted = [](const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  for (const std::string mode : {"out_of_place", "in_place", "graph"}) {
    if (!wanted(g_opt.modes, mode)) continue;
    for (const TypeInfo& t : kTypes) {
      if (!wanted(g_opt.types, t.name)) continue;
      for (std::uint64_t bytes : allreduce_sizes(g_opt.min_bytes, g_opt.max_bytes, t.bytes)) {
        const std::string name = BenchName("allreduce", mode, t.name).arg("bytes", bytes).str();
        register_case(name, [=, &t](benchmark::State& s) { allreduce_case(s, mode, t, bytes); });
      }
    }
  }
}

void add_flags(FlagSet& f) {
  f.add_size("min-bytes", &g_opt.min_bytes, "smallest message per rank");
  f.add_size("max-bytes", &g_opt.max_bytes, "largest message per rank (sizes not fitting in free memory are skipped)");
  f.add_list("types", &g_opt.types, {"fp32", "bf16", "fp16"}, "element types");
  f.add_list("modes", &g_opt.modes, {"out_of_place", "in_place", "graph"}, "operation modes");
  f.add_choice("algo", &g_opt.algo, {"ring", "tree", "nvls", "collnet", "auto"},
               "NCCL algorithm (sets NCCL_ALGO); auto: NCCL's choice, or NCCL_ALGO as the environment has it");
  f.add_int("gpus", &g_opt.gpus, 0, 1024, "single process: how many GPUs (0: all visible)");
  f.add_double("timeout-s", &g_opt.timeout_s, 1, 86400, "abort a collective that has not completed after this long");
}

void apply_algo() {
  if (g_opt.algo == "auto") return;
  std::string v = g_opt.algo;
  v[0] = static_cast<char>(v[0] - 'a' + 'A');
  if (v == "Nvls") v = "NVLS";
  if (v == "Collnet") v = "CollNet";
  setenv("NCCL_ALGO", v.c_str(), 1);
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

#if TRIAUDIT_WITH_MPI
namespace {
// A short, printable digest of the unique id: equal on every rank when the broadcast worked.
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

  // The unique id: made by rank 0, broadcast to all (NCCL needs no GPU for this step).
  ncclUniqueId id{};
  int id_ok = 1;
  if (rank == 0) id_ok = ncclGetUniqueId(&id) == ncclSuccess ? 1 : 0;
  MPI_Bcast(&id_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);

  int count = 0;
  const cudaError_t ce = cudaGetDeviceCount(&count);
  std::string map_error = ce == cudaSuccess ? "" : std::string("no CUDA device (") + cudaGetErrorString(ce) + ")";
  const int device = ce == cudaSuccess ? device_for_local_rank(local_rank, local_size, count, &map_error) : -1;

  char host[256] = {};
  gethostname(host, sizeof host - 1);
  char line[1024];
  std::snprintf(line, sizeof line, "rank %d of %d on %s: local rank %d of %d, %d node(s); NCCL unique id %s; device %s", rank,
                size, host, local_rank, local_size, nodes, id_ok ? fingerprint(id).c_str() : "FAILED",
                device >= 0 ? std::to_string(device).c_str() : map_error.c_str());
  std::vector<char> all(rank == 0 ? static_cast<std::size_t>(size) * sizeof line : 1);
  MPI_Gather(line, sizeof line, MPI_CHAR, all.data(), sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);

  int worst = 0, mine = !id_ok ? 2 : (device < 0 ? (ce == cudaSuccess ? 2 : 1) : 0);
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
    return worst == 1 ? kExitNoDevice : kExitBadCommandLine;
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

  SuiteSpec spec = base_spec("triaudit_allreduce_mpi");
  spec.quiet = rank != 0;
  const WorldInfo info{size, nodes, local_size, true};
  spec.before_run = [&] {
    apply_algo();
    AllreduceWorld::create_mpi_rank(id, rank, info, device);
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
  if (has_flag(argc, argv, "--dry-run")) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) std::printf("single process: no CUDA device (%s)\n", cudaGetErrorString(e));
    else std::printf("single process: %d visible GPU(s) -> %d rank(s), one NCCL communicator each\n", count, count);
    return 0;
  }
  SuiteSpec spec = base_spec("triaudit_allreduce");
  spec.before_run = [] {
    apply_algo();
    AllreduceWorld::create_single_process(static_cast<int>(g_opt.gpus));
    for (const auto& [k, v] : AllreduceWorld::get().context()) benchmark::AddCustomContext(k, v);
  };
  return suite_main(argc, argv, spec);
}
#endif
