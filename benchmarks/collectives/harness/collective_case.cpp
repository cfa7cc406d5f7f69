// One case of a collective, measured as nccl-tests measures it, for either executable.
//
// Names:    <collective>/<in_place|out_of_place|graph>/<type>/algo:<ring|auto|...>[/root:<r>]/bytes:<N>
//           <collective>/scaling/<type>/algo:<...>[/root:<r>]/gpus:<g>/bytes:<N>   (--scaling=on)
//           N is nccl-tests' size: the larger of a rank's send and receive buffers.
// Counters: algbw = the collective's bytes (its description: nccl-tests' getBw) / time, busbw =
//           algbw x its bus factor (allreduce 2(n-1)/n, ...), busbw_max_rank (the same from the
//           slowest rank's time), ranks, gpus, size_bytes and count (nccl-tests' size and count
//           columns for this communicator).
// Time:     algbw/busbw: after a warm-up, regions of >= 20 back-to-back collectives, each rank's
//           own CUDA events, the mean over ranks (every process's ranks); the slowest rank's time
//           is kept as busbw_max_rank. busbw_host_timed: nccl-tests' own method (src/common.cu
//           BenchTime): the host clock around 20 collectives up to their completion, averaged over
//           processes; it includes the enqueue and the sync, so it reads lower at small sizes.
// Algo:     ring sets NCCL_ALGO=Ring when the communicator is made (the seeds' 2(n-1)/n model);
//           auto leaves NCCL's choice (NVLS on NVSwitch Hopper systems; published nccl-tests
//           figures); nvls is skipped with the reason where NCCL will not offer it (nvls.hpp).
//           What NCCL chose per size is recorded in the label (single process: a probe run).
// Check:    inputs are integers whose result is exact in any order and precision (pattern.hpp);
//           after timing every output element of every rank is compared with it (the wrong ones
//           counted across all ranks, as nccl-tests counts #wrong). Any wrong element makes the
//           case an error.
// MPI:      every phase of a case ends with the ranks agreeing on its outcome (agreement.hpp), so
//           a case that fails on one rank fails on all of them, and the job goes on in step.
#include "collective_case.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "agreement.hpp"
#include "clock_watch.hpp"
#include "collective_math.hpp"
#include "measure.hpp"
#include "nccl_call.hpp"
#include "nccl_check.hpp"
#include "nccl_choice.hpp"
#include "nvls.hpp"
#include "world.hpp"

#if TRIAUDIT_WITH_MPI
#include <mpi.h>
#endif

namespace triaudit {
namespace {

constexpr int kNcclTestsIters = 20;  // nccl-tests' default -n

struct RankBuffers {
  DeviceBuffer<unsigned char> send, recv;
  DeviceBuffer<unsigned long long> wrong;
};

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

// What the timed phase leaves for the report.
struct Timings {
  std::vector<double> mean_per_op;  // per region: the mean over ranks of one collective's time
  double sum_mean = 0, sum_max = 0, window = 0, warmup = 0;
  long long timed_ops = 0, warmup_ops = 0;
  double host_per_op = 0;  // nccl-tests' BenchTime figure
  EnergyReading e0, e1;
  ClockSummary clocks;
  double job_ranks = 0;
};

// One case, in the phases run() lists. Every MPI collective goes through `agree_`
// (agreement.hpp), so the ranks of a job leave each phase together, failed or not.
class CollectiveCase {
 public:
  CollectiveCase(const CaseSpec& c, Agreement& agree)
      : coll_(the_collective()),
        c_(c),
        agree_(agree),
        t_(*c.type),
        bytes_(c.bytes),
        in_place_(c.mode == "in_place"),
        graph_(c.mode == "graph") {}

  void run(benchmark::State& state) {
    enter();
    choose_ranks();
    allocate_and_first_run();
    check_wrong("before timing");
    Timings tm;
    for (auto _ : state) {
      measure(tm);
      state.SetIterationTime(tm.sum_mean / static_cast<double>(tm.timed_ops));
      host_timed(tm);
    }
    if (in_place_)
      agree_.step([&] {  // repeated in-place sums have grown the data: check one fresh operation
        prepare();
        run_once();
      });
    check_wrong("after timing");
    report(state, tm);
  }

 private:
  // The suite's checks and a live world, on every rank.
  void enter() {
    agree_.step([&] {
      if (forced_failure(std::getenv("TRIAUDIT_FAIL_CASE"), my_rank(), c_.name))
        throw Error("failed on purpose (TRIAUDIT_FAIL_CASE)");
      require_runnable();            // the suite's checks (skipped by run_guarded_outcome under MPI)
      (void)CollectiveWorld::get();  // throws when the communicators were never made or were aborted
    });
    agree_.agree();
    w_ = &CollectiveWorld::get();
    buf_.resize(w_->local().size());
  }

  // This case's communicators and the local ranks in them; skipped where memory is short.
  void choose_ranks() {
    auto& ranks = w_->local();
    agree_.step([&] {
      if (graph_ && ranks.size() != 1)
        throw SkipCase("graph mode captures one GPU per process: run triaudit_" + coll_.name +
                       "_mpi, one rank per GPU");
      world_ = c_.gpus > 0 ? c_.gpus : w_->info().ranks;
      if (world_ > w_->info().ranks)
        throw SkipCase("needs " + std::to_string(world_) + " GPUs, the job has " + std::to_string(w_->info().ranks));
      size_counts();
      if (c_.algo == "nvls") require_nvls();
      comms_ = w_->comms(c_.algo, c_.gpus);
      for (std::size_t i = 0; i < ranks.size(); ++i)
        if (comms_[i] != nullptr) active_.push_back(i);
      for (std::size_t i : active_) watch_case_device(ranks[i].device);  // their error counters (health.hpp)
      const std::uint64_t need = send_bytes() + recv_bytes();
      for (std::size_t i : active_) {
        TRIAUDIT_CUDA(cudaSetDevice(ranks[i].device));
        std::size_t free_b = 0, total_b = 0;
        TRIAUDIT_CUDA(cudaMemGetInfo(&free_b, &total_b));
        if (need + (512u << 20) > free_b)
          throw SkipCase("needs " + std::to_string(need) + " bytes of free device memory per rank (send and receive)");
      }
    });
    agree_.agree();
  }

  // Buffers and events (and the graph, captured once: instantiation outside any timing), then one
  // collective on fresh inputs.
  void allocate_and_first_run() {
    auto& ranks = w_->local();
    agree_.step([&] {
      for (std::size_t i : active_) {
        TRIAUDIT_CUDA(cudaSetDevice(ranks[i].device));
        buf_[i].send = DeviceBuffer<unsigned char>(send_bytes());
        buf_[i].recv = DeviceBuffer<unsigned char>(recv_bytes());
        buf_[i].wrong = DeviceBuffer<unsigned long long>(1);
        starts_.emplace_back();
        stops_.emplace_back();
        stop_handles_.push_back(stops_.back().get());
      }
      if (graph_) {
        TRIAUDIT_CUDA(cudaSetDevice(ranks[0].device));
        Graph g = Graph::capture(*ranks[0].stream, [&](cudaStream_t cs) { enqueue(cs); });
        exec_ = GraphExec(g);
      }
      prepare();
      run_once();
    });
    agree_.agree();
  }

  // A poisoned output (NaN in every type: never an expected value) and fresh inputs (integers whose
  // result is exact), in place inside the output buffer where the mode says so.
  void prepare() {
    auto& ranks = w_->local();
    for (std::size_t i : active_) {
      TRIAUDIT_CUDA(cudaSetDevice(ranks[i].device));
      TRIAUDIT_CUDA(cudaMemsetAsync(buf_[i].recv.data(), 0xFF, recv_bytes(), *ranks[i].stream));
      kernels::fill_collective_input(send_ptr(i), t_.type, n_.send, ranks[i].rank, layout_, *ranks[i].stream);
      TRIAUDIT_CUDA_LAUNCH();
      TRIAUDIT_CUDA(cudaStreamSynchronize(*ranks[i].stream));
    }
  }

  void enqueue(cudaStream_t capture_stream) {
    auto& ranks = w_->local();
    TRIAUDIT_NCCL(ncclGroupStart());
    for (std::size_t i : active_) {
      NcclCallArgs a;
      a.send = send_ptr(i);
      a.recv = recv_ptr(i);
      a.count = n_.param;
      a.type = t_.nccl;
      a.elem_bytes = t_.bytes;
      a.op = ncclSum;
      a.root = static_cast<int>(g_opt.root);
      a.ranks = world_;
      a.comm = comms_[i];
      a.stream = capture_stream ? capture_stream : ranks[i].stream->get();
      coll_.enqueue(a);
    }
    TRIAUDIT_NCCL(ncclGroupEnd());
  }

  void run_once() {
    if (graph_)
      exec_.launch(*w_->local()[0].stream);
    else
      enqueue(nullptr);
  }

  void record(std::vector<Event>& ev) {
    auto& ranks = w_->local();
    for (std::size_t k = 0; k < active_.size(); ++k) {
      TRIAUDIT_CUDA(cudaSetDevice(ranks[active_[k]].device));
      ev[k].record(*ranks[active_[k]].stream);
    }
  }

  void wait_for_stops() {
    record(stops_);
    w_->wait(stop_handles_, comms_, g_opt.timeout_s);
  }

  // The wrong elements of this process's ranks (the caller sums over processes).
  double count_wrong() {
    auto& ranks = w_->local();
    wait_for_stops();
    unsigned long long wrong = 0;
    for (std::size_t i : active_) {
      TRIAUDIT_CUDA(cudaSetDevice(ranks[i].device));
      TRIAUDIT_CUDA(cudaMemsetAsync(buf_[i].wrong.data(), 0, sizeof(unsigned long long), *ranks[i].stream));
      kernels::count_collective_wrong(recv_ptr(i), t_.type, n_.recv, ranks[i].rank, layout_, buf_[i].wrong.data(),
                                      *ranks[i].stream);
      TRIAUDIT_CUDA_LAUNCH();
      unsigned long long here = 0;
      TRIAUDIT_CUDA(
          cudaMemcpyAsync(&here, buf_[i].wrong.data(), sizeof here, cudaMemcpyDeviceToHost, *ranks[i].stream));
      TRIAUDIT_CUDA(cudaStreamSynchronize(*ranks[i].stream));
      wrong += here;
    }
    return static_cast<double>(wrong);
  }

  // Every output element of every rank against its expected value (nccl-tests' #wrong: the
  // receive buffer's elements, summed over ranks); any wrong one makes the case an error.
  void check_wrong(const char* when) {
    double wrong = 0;
    agree_.step([&] { wrong = count_wrong(); });
    const double total = agree_.sum_max(wrong, wrong).first;
    if (total > 0)
      throw VerificationError(std::string(when) + ": " + std::to_string(static_cast<unsigned long long>(total)) +
                              " of " + std::to_string(n_.recv * static_cast<std::uint64_t>(world_)) +
                              " elements across " + std::to_string(world_) + " ranks differ from " +
                              (layout_.rule.source == OutputSource::kSumOfRanks ? "the exact sum" : "the values sent"));
  }

  // One region: `ops_` collectives back to back, each local rank timed by its own events. Gives
  // this process's sum of per-rank times and its slowest rank's time.
  void region(double& local_sum, double& local_max) {
    record(starts_);
    for (int i = 0; i < ops_; ++i) run_once();
    wait_for_stops();
    local_sum = local_max = 0;
    for (std::size_t k = 0; k < active_.size(); ++k) {
      const double sec = Event::seconds_between(starts_[k], stops_[k]);
      local_sum += sec;
      local_max = std::max(local_max, sec);
    }
  }

  // Warm-up, then timed regions until --min-time. Every rank runs the same number of regions:
  // whether time is up is agreed (the max over processes).
  void measure(Timings& tm) {
    auto& ranks = w_->local();
    const MeasureSettings& cfg = measure_settings();
    tm.job_ranks = agree_.sum_max(static_cast<double>(active_.size()), 0.0).first;
    ClockWatch watch(active_.empty() ? nullptr : ranks[active_[0]].nvml.get(),
                     static_cast<unsigned>(std::max(0, device().description.sm_clock_max_khz / 1000)));
    tm.e0 = summed_energy(ranks, active_);
    const double t0 = HostTimer::now();
    for (int phase = 0; phase < 2; ++phase) {
      const double start = HostTimer::now(), limit = phase == 0 ? cfg.warmup_s : cfg.min_time_s;
      bool more = true;
      while (more) {
        double local_sum = 0, local_max = 0;
        agree_.step([&] { region(local_sum, local_max); });
        const auto [total, slowest] = agree_.sum_max(local_sum, local_max);
        if (phase == 1) {
          tm.mean_per_op.push_back(total / tm.job_ranks / ops_);
          tm.sum_mean += total / tm.job_ranks;
          tm.sum_max += slowest;
          tm.timed_ops += ops_;
        } else {
          tm.warmup_ops += ops_;
        }
        const double up = HostTimer::now() - start >= limit ? 1.0 : 0.0;
        more = agree_.sum_max(0.0, up).second == 0.0;
      }
      if (phase == 0) tm.warmup = HostTimer::now() - t0;
    }
    tm.window = HostTimer::now() - t0;
    tm.e1 = summed_energy(ranks, active_);
    tm.clocks = watch.finish();
  }

  // nccl-tests' own figure (BenchTime): the host clock around 20 collectives queued after the
  // warm-up, up to their completion, averaged over processes. It includes the host's enqueue
  // and the final sync, which per-rank events leave out, so it reads lower at small sizes.
  void host_timed(Timings& tm) {
    double host_s = 0;
    agree_.step([&] {
      const double h0 = HostTimer::now();
      for (int i = 0; i < kNcclTestsIters; ++i) run_once();
      wait_for_stops();
      host_s = (HostTimer::now() - h0) / kNcclTestsIters;
    });
    tm.host_per_op = agree_.sum_max(host_s, 0.0).first / agree_.sum_max(1.0, 0.0).first;
  }

  // The energy of every GPU that took part: this process's, summed over processes.
  EnergyFigures job_energy(const Timings& tm) {
    const bool mine_known = tm.e0.millijoules && tm.e1.millijoules;
    const bool all_known = agree_.sum_max(0.0, mine_known ? 0.0 : 1.0).second == 0.0;
    const double delta_mj =
        agree_.sum_max(mine_known ? static_cast<double>(*tm.e1.millijoules - *tm.e0.millijoules) : 0.0, 0.0).first;
    const EnergyReading start_all =
        all_known ? EnergyReading{0, ""}
                  : (mine_known          ? EnergyReading{std::nullopt, "another rank cannot read its counter"}
                     : tm.e0.millijoules ? tm.e1
                                         : tm.e0);
    const EnergyReading end_all = all_known ? EnergyReading{static_cast<std::uint64_t>(delta_mj), ""} : start_all;
    return record_case_energy(c_.name, tm.window, start_all, end_all, tm.timed_ops + tm.warmup_ops,
                              static_cast<int>(tm.job_ranks));
  }

  void report(benchmark::State& state, const Timings& tm) {
    // nccl-tests' getBw: the bytes algbw divides by the time, and busbw's factor.
    const double b = coll_.algbw_bytes(n_.param, t_.bytes, world_), factor = coll_.bus_factor(world_);
    const double per_op = tm.sum_mean / static_cast<double>(tm.timed_ops);
    const double per_op_max = tm.sum_max / static_cast<double>(tm.timed_ops);
    state.counters["algbw"] = benchmark::Counter(b, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["busbw"] = benchmark::Counter(b * factor, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["busbw_max_rank"] = per_op_max > 0 ? b * factor / per_op_max : 0.0;
    if (tm.host_per_op > 0) {
      state.counters["seconds_per_op_host_timed"] = tm.host_per_op;
      state.counters["algbw_host_timed"] = b / tm.host_per_op;
      state.counters["busbw_host_timed"] = b * factor / tm.host_per_op;
    }
    state.counters["ranks"] = world_;
    state.counters["gpus"] = world_;
    // nccl-tests' size and count columns for this communicator (bytes:N is the size asked for).
    state.counters["size_bytes"] =
        static_cast<double>(std::max(n_.send, n_.recv) * static_cast<std::uint64_t>(t_.bytes));
    state.counters["count"] = static_cast<double>(n_.param);

    LoopResult r;
    r.regions = static_cast<int>(tm.mean_per_op.size());
    r.ops = tm.timed_ops;
    r.seconds_per_op = per_op;
    r.noise = region_stats(tm.mean_per_op).noise;
    r.warmup_seconds = tm.warmup;
    r.window_seconds = tm.window;
    r.clocks = tm.clocks;
    r.energy = job_energy(tm);
    report_loop(state, r);
    state.counters["ops_per_region"] = ops_;
    if (r.energy.valid && r.energy.watts_mean > 0 && per_op > 0)
      state.counters["busbw_per_watt"] = b * factor / per_op / r.energy.watts_mean;
    if (world_ == 1)
      append_label(state, factor == 0.0
                              ? "1 rank: busbw = algbw x " + coll_.bus_factor_formula + " is 0; the time is a local " +
                                    (layout_.rule.source == OutputSource::kSumOfRanks ? "reduction" : "copy") +
                                    "'s latency"
                              : "1 rank: the time is a local copy's latency");
    append_label(state, nccl_choice_label(c_.algo, t_.name, bytes_, world_));
  }

  // nccl-tests' counts for this communicator, and the rule of the expected values; a size too
  // small to give each rank an element is skipped (nccl-tests would time an empty collective).
  void size_counts() {
    const std::uint64_t count = bytes_ / static_cast<std::uint64_t>(t_.bytes);
    n_ = coll_.counts(count, t_.bytes, world_);
    if (n_.param == 0)
      throw SkipCase(std::to_string(bytes_) + " bytes over " + std::to_string(world_) +
                     " ranks leave no element per rank (nccl-tests' count per rank, in whole 16-byte units)");
    if (coll_.has_root && g_opt.root >= world_)
      throw SkipCase("root " + std::to_string(g_opt.root) + " is not a rank of this " + std::to_string(world_) +
                     "-rank communicator");
    layout_ = output_layout(coll_, n_, world_, static_cast<int>(g_opt.root));
  }

  // NVLS only where NCCL will offer it (nvls.hpp): otherwise a skip with the reason, not NCCL's error.
  void require_nvls() const {
    NvlsFacts f;
    f.collective = coll_.name;
    f.collective_has_nvls = coll_.has_nvls;
    f.ranks = world_;
    f.nvls_enable = std::getenv("NCCL_NVLS_ENABLE");
    if (f.collective_has_nvls)
      f.multicast_supported = w_->multicast_supported(&f.device_without_multicast, &f.unknown_why);
    if (const std::string why = nvls_unavailable_reason(f); !why.empty()) throw SkipCase(why);
  }

  // Bytes of each rank's buffers: the send buffer, and the receive buffer (large enough to be the
  // one buffer of an in-place case, which holds the send data too).
  std::uint64_t send_bytes() const { return n_.send * static_cast<std::uint64_t>(t_.bytes); }
  std::uint64_t recv_bytes() const { return std::max(n_.send, n_.recv) * static_cast<std::uint64_t>(t_.bytes); }
  int comm_rank(std::size_t i) const { return w_->local()[i].rank; }
  void* send_ptr(std::size_t i) {
    if (!in_place_) return buf_[i].send.data();
    return buf_[i].recv.data() + n_.send_in_place_offset * static_cast<std::uint64_t>(comm_rank(i)) * t_.bytes;
  }
  void* recv_ptr(std::size_t i) {
    if (!in_place_) return buf_[i].recv.data();
    return buf_[i].recv.data() + n_.recv_in_place_offset * static_cast<std::uint64_t>(comm_rank(i)) * t_.bytes;
  }

  const CollectiveSpec& coll_;
  const CaseSpec& c_;
  Agreement& agree_;
  const TypeInfo& t_;
  const std::uint64_t bytes_;
  BufferCounts n_;
  OutputLayout layout_;
  const bool in_place_, graph_;
  const int ops_ = collectives_per_region(bytes_);
  CollectiveWorld* w_ = nullptr;
  std::vector<ncclComm_t> comms_;
  std::vector<RankBuffers> buf_;
  std::vector<Event> starts_, stops_;
  std::vector<cudaEvent_t> stop_handles_;
  GraphExec exec_;
  int world_ = 0;
  std::vector<std::size_t> active_;  // local ranks in this case's communicator
};

}  // namespace

// Under MPI the suite's own checks (a failed setup, a lost CUDA context) run inside the case's
// first phase, so a rank that cannot run the case still meets the others at their agreement
// instead of leaving the case early; a rank whose communicators were aborted makes every rank
// abort theirs (the next case would otherwise wait on a peer that is gone).
void collective_case(benchmark::State& state, const CaseSpec& c) {
  Agreement agree(mpi_build());
  agree.on_broken([](const std::string& why) { CollectiveWorld::abort_if_alive("another rank: " + why); });
  agree.broken_probe([] { return CollectiveWorld::broken(); });
  const CaseOutcome out = run_guarded_outcome(state, [&] { CollectiveCase(c, agree).run(state); }, !mpi_build());
  report_outcome(state, out);
}

}  // namespace triaudit
