// triaudit_launch: what it costs to start work on the GPU.
//
//   launch/empty/enqueue/kernels:512        host cost of one eager launch (512 queued, no sync; launch
//                                           errors checked once per region, outside the time)
//   launch/empty/round_trip/kernels:1       launch + stream synchronize, per launch
//   launch/chain/<eager|graph>/kernels:N    N empty kernels launched eagerly or as one CUDA Graph,
//                                           host clock to completion; the graph's capture (capture_s)
//                                           and instantiation (instantiate_s) are timed apart, never
//                                           inside the replay
//   launch/chain_fit/<eager|graph>/kernels:1-1024   per-kernel and fixed cost (with standard errors)
//                                           from a weighted fit over N = 1, 2, 4, ..., 1024
//   launch/fusion/<unfused|fused>/steps:K/bytes:S   K elementwise steps as K kernels or one
//   launch/sync/<stream_synchronize|event_query|event_synchronize>   synchronisation latency
// Host-clock cases measure work that is host-synchronous by nature; fusion uses CUDA events with
// the stream held.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "chain_check.hpp"
#include "common/spin.cuh"
#include "cuda_raii.hpp"
#include "gpu_timer.hpp"
#include "launch/chain.cuh"
#include "linear_fit.hpp"
#include "measure.hpp"
#include "names.hpp"
#include "region_stats.hpp"
#include "suite.hpp"

namespace triaudit {
namespace {

void launch_empty(int n, cudaStream_t s) {
  for (int i = 0; i < n; ++i) kernels::empty_kernel(s);
  TRIAUDIT_CUDA_LAUNCH();
}

void enqueue_case(benchmark::State& state, int n) {
  run_guarded(state, [&] {
    Stream s;
    launch_empty(n, s);  // first-launch costs (module load) out of the way
    s.synchronize();
    HostWork work;
    work.ops = n;  // a region enqueues n launches; the time is per launch
    // Untimed: the previous region's launch errors are checked (once per region, not per launch:
    // cudaGetLastError is not part of a launch's cost) and the queue drains before the next batch.
    work.before_region = [&] {
      TRIAUDIT_CUDA_LAUNCH();
      s.synchronize();
    };
    work.run_op = [&] { kernels::empty_kernel(s); };
    const LoopResult r = measure_host(state, work);
    TRIAUDIT_CUDA_LAUNCH();
    s.synchronize();
    state.counters["launches_per_second"] = benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
    report_loop(state, r);
  });
}

void round_trip_case(benchmark::State& state) {
  run_guarded(state, [&] {
    Stream s;
    launch_empty(1, s);
    s.synchronize();
    HostWork work;
    work.ops = 100;
    work.run_op = [&] {
      launch_empty(1, s);
      s.synchronize();
    };
    report_loop(state, measure_host(state, work));
  });
}

// One chain of `n` empty kernels, eager or as a graph, timed on the host to completion.
struct Chain {
  Chain(int n, bool graph, cudaStream_t s) : n_(n), graph_(graph), s_(s) {
    if (graph_) {
      const double t0 = HostTimer::now();
      Graph g = Graph::capture(s_, [&](cudaStream_t cs) { launch_empty(n_, cs); });
      const double t1 = HostTimer::now();
      exec_ = GraphExec(g);
      capture_s = t1 - t0;
      instantiate_s = HostTimer::now() - t1;
    }
  }
  void run() {
    if (graph_)
      exec_.launch(s_);
    else
      launch_empty(n_, s_);
    TRIAUDIT_CUDA(cudaStreamSynchronize(s_));
  }
  int n_;
  bool graph_;
  cudaStream_t s_;
  GraphExec exec_;
  double capture_s = 0.0;      // recording the launches into a graph
  double instantiate_s = 0.0;  // cudaGraphInstantiate alone
};

void chain_case(benchmark::State& state, int n, bool graph) {
  run_guarded(state, [&] {
    Stream s;
    Chain chain(n, graph, s);
    chain.run();  // a graph's first launch uploads it
    HostWork work;
    work.run_op = [&] { chain.run(); };
    const LoopResult r = measure_host(state, work);
    state.counters["per_kernel_s"] = r.seconds_per_op / n;
    if (graph) {
      state.counters["capture_s"] = chain.capture_s;
      state.counters["instantiate_s"] = chain.instantiate_s;
    }
    // The seeds' point in numbers: a step with thousands of small kernels.
    state.counters["cost_of_3000_kernels_s"] = 3000 * r.seconds_per_op / n;
    report_loop(state, r);
  });
}

// Chains of 1, 2, 4, ..., 1024 kernels (median of 7 each), fitted with weights 1/t^2: the
// per-kernel cost, the fixed cost and their standard errors, all from the same data as the time
// reported (the per-kernel cost).
void chain_fit_case(benchmark::State& state, bool graph) {
  run_guarded(state, [&] {
    Stream s;
    LineFit fit;
    for (auto _ : state) {
      std::vector<double> x, y;
      for (double n : chain_fit_lengths()) {
        Chain chain(static_cast<int>(n), graph, s);
        chain.run();
        std::vector<double> t;
        for (int r = 0; r < 7; ++r) {
          const double t0 = HostTimer::now();
          chain.run();
          t.push_back(HostTimer::now() - t0);
        }
        x.push_back(n);
        y.push_back(region_stats(t).median);
      }
      fit = fit_line_relative(x, y);
      state.SetIterationTime(std::max(fit.slope, 1e-12));  // the reported time is the per-kernel cost
    }
    state.counters["per_kernel_s"] = fit.slope;
    state.counters["per_kernel_s_se"] = fit.slope_se;
    state.counters["fixed_s"] = fit.intercept;
    state.counters["fixed_s_se"] = fit.intercept_se;
    state.counters["fit_r2"] = fit.r2;
    append_label(state, "weighted fit (1/t^2) over chains of 1-1024 kernels, median of 7 each; *_se: standard errors");
  });
}

// K elementwise steps as K kernels or one, timed behind the stream hold so the time is the GPU's
// (without the hold, the 64 KiB figure was mostly submission latency and the unfused chain the
// host's launch rate). Both count the same bytes, the chain's input read and output written
// once, so their rates compare as their times do.
void fusion_case(benchmark::State& state, bool fused, int steps, std::uint64_t bytes) {
  run_guarded(state, [&] {
    const std::uint64_t n = bytes / sizeof(float);
    require_free_memory(bytes);
    DeviceBuffer<float> x(n);
    Stream s;
    auto run_chain = [&] {
      if (fused)
        kernels::chain_fused(x.data(), n, steps, s);
      else
        for (int k = 0; k < steps; ++k) kernels::chain_step(x.data(), n, s);
    };
    // Verify first, from the known input: K steps must equal the host's K fused multiply-adds.
    chain_prepare(x.data(), n, s);
    run_chain();
    TRIAUDIT_CUDA_LAUNCH();
    const VerifyResult v = chain_verify(x.data(), n, steps, s);
    if (!v.ok()) throw VerificationError(v.describe());

    DeviceWork work;
    work.stream = s;
    work.queue_entries_per_op = fused ? 1 : steps;
    work.enqueue_op = run_chain;
    const LoopResult r = measure_device(state, work);
    const double counted = 2.0 * static_cast<double>(bytes);
    state.counters["bytes_per_second"] = benchmark::Counter(counted, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["bytes_per_op"] = counted;
    state.counters["kernels"] = fused ? 1 : steps;
    state.counters["per_kernel_s"] = r.seconds_per_op / (fused ? 1 : steps);
    append_label(state, "bytes: the chain's input read and output written once, for fused and unfused alike");
    report_loop(state, r, "bytes_per_joule", counted);
  });
}

void sync_case(benchmark::State& state, const std::string& what) {
  run_guarded(state, [&] {
    Stream s;
    Event e(cudaEventDisableTiming);
    e.record(s);
    s.synchronize();
    HostWork work;
    work.ops = 1000;
    work.run_op = [&] {
      if (what == "stream_synchronize")
        TRIAUDIT_CUDA(cudaStreamSynchronize(s));
      else if (what == "event_query")
        TRIAUDIT_CUDA(cudaEventQuery(e));
      else
        TRIAUDIT_CUDA(cudaEventSynchronize(e));
    };
    report_loop(state, measure_host(state, work));
  });
}

void register_launch() {
  auto add = [](const std::string& name, std::function<void(benchmark::State&)> fn) {
    return register_case(name, std::move(fn));
  };
  add(BenchName("launch", "empty", "enqueue").arg("kernels", 512).str(),
      [](benchmark::State& s) { enqueue_case(s, 512); });
  describe_case(BenchName("launch", "empty", "enqueue").arg("kernels", 512).str(), {"time_s", "launch/enqueue", {}});
  add(BenchName("launch", "empty", "round_trip").arg("kernels", 1).str(),
      [](benchmark::State& s) { round_trip_case(s); });
  for (bool graph : {false, true})
    for (int n : {1, 10, 100, 1000})
      add(BenchName("launch", "chain", graph ? "graph" : "eager").arg("kernels", static_cast<std::uint64_t>(n)).str(),
          [=](benchmark::State& s) { chain_case(s, n, graph); });
  for (bool graph : {false, true}) {
    const std::string name = BenchName("launch", "chain_fit", graph ? "graph" : "eager").arg("kernels", "1-1024").str();
    add(name, [=](benchmark::State& s) { chain_fit_case(s, graph); });
    describe_case(name, {"per_kernel_s", graph ? "launch/graph" : "launch/eager", {}});
  }
  for (int steps : {8, 64})
    for (std::uint64_t bytes : {64ULL << 10, 256ULL << 20})
      for (bool fused : {false, true})
        add(BenchName("launch", "fusion", fused ? "fused" : "unfused")
                .arg("steps", static_cast<std::uint64_t>(steps))
                .arg("bytes", bytes)
                .str(),
            [=](benchmark::State& s) { fusion_case(s, fused, steps, bytes); });
  for (const std::string what : {"stream_synchronize", "event_query", "event_synchronize"})
    add(BenchName("launch", "sync", what).str(), [=](benchmark::State& s) { sync_case(s, what); });
}

}  // namespace
}  // namespace triaudit

int main(int argc, char** argv) {
  using namespace triaudit;
  const SuiteSpec spec{"triaudit_launch",
                       "launch cost: eager vs CUDA Graph, fused vs unfused chains, synchronisation",
                       nullptr,
                       register_launch,
                       {},
                       false};
  return suite_main(argc, argv, spec);
}
