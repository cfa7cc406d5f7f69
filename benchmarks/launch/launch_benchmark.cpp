// triaudit_launch: what it costs to start work on the GPU.
//
//   launch/empty/enqueue/kernels:512        host cost of one eager launch (512 queued, no sync)
//   launch/empty/round_trip/kernels:1       launch + stream synchronize, per launch
//   launch/chain/<eager|graph>/kernels:N    N empty kernels launched eagerly or as one CUDA Graph,
//                                           host clock to completion; graph instantiation is timed
//                                           separately (instantiate_s), never inside the replay
//   launch/chain_fit/<eager|graph>/kernels:1-1000   per-kernel and fixed cost from a line fit over N
//   launch/fusion/<unfused|fused>/steps:K/bytes:S   K elementwise steps as K kernels or one
//   launch/sync/<stream_synchronize|event_query|event_synchronize>   synchronisation latency
// Host-clock cases measure work that is host-synchronous by nature; fusion uses CUDA events.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "../common/cuda_raii.hpp"
#include "../common/gpu_timer.hpp"
#include "linear_fit.hpp"
#include "../common/names.hpp"
#include "../common/suite.hpp"
#include "chain_check.hpp"
#include "common/spin.cuh"
#include "launch/chain.cuh"

namespace triaudit {
namespace {

void launch_empty(int n, cudaStream_t s) {
  for (int i = 0; i < n; ++i) kernels::empty_kernel(s);
  TRIAUDIT_CUDA_LAUNCH();
}

void enqueue_case(benchmark::State& state, int n) {
  run_guarded(state, [&] {
    Stream s;
    launch_empty(n, s);  // warm-up: module load, first-launch costs
    s.synchronize();
    HostTimer timer;
    for (auto _ : state) {
      {
        auto region = timer.region(state, n);
        launch_empty(n, s);
      }
      s.synchronize();  // outside the region: the queue must drain before the next batch
    }
    state.counters["launches_per_second"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  });
}

void round_trip_case(benchmark::State& state) {
  run_guarded(state, [&] {
    Stream s;
    launch_empty(1, s);
    s.synchronize();
    HostTimer timer;
    constexpr int kBatch = 100;
    for (auto _ : state) {
      auto region = timer.region(state, kBatch);
      for (int i = 0; i < kBatch; ++i) {
        launch_empty(1, s);
        s.synchronize();
      }
    }
  });
}

// One chain of `n` empty kernels, eager or as a graph, timed on the host to completion.
struct Chain {
  Chain(int n, bool graph, cudaStream_t s) : n_(n), graph_(graph), s_(s) {
    if (graph_) {
      const double t = HostTimer::now();
      Graph g = Graph::capture(s_, [&](cudaStream_t cs) { launch_empty(n_, cs); });
      exec_ = GraphExec(g);
      instantiate_s = HostTimer::now() - t;
    }
  }
  void run() {
    if (graph_) exec_.launch(s_);
    else launch_empty(n_, s_);
    TRIAUDIT_CUDA(cudaStreamSynchronize(s_));
  }
  int n_;
  bool graph_;
  cudaStream_t s_;
  GraphExec exec_;
  double instantiate_s = 0.0;
};

void chain_case(benchmark::State& state, int n, bool graph) {
  run_guarded(state, [&] {
    Stream s;
    Chain chain(n, graph, s);
    chain.run();  // warm-up (a graph's first launch uploads it)
    HostTimer timer;
    ClockWatch clocks = watch_clocks();
    for (auto _ : state) {
      auto region = timer.region(state, 1);
      chain.run();
    }
    clocks.finish(state);
    state.counters["per_kernel_s"] = timer.seconds_per_op() / n;
    if (graph) state.counters["instantiate_s"] = chain.instantiate_s;
    // The seeds' point in numbers: a step with thousands of small kernels.
    state.counters["cost_of_3000_kernels_s"] = 3000 * timer.seconds_per_op() / n;
  });
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void chain_fit_case(benchmark::State& state, bool graph) {
  run_guarded(state, [&] {
    Stream s;
    const std::vector<int> counts = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
    LineFit fit;
    for (auto _ : state) {
      std::vector<double> x, y;
      for (int n : counts) {
        Chain chain(n, graph, s);
        chain.run();
        std::vector<double> t;
        for (int r = 0; r < 7; ++r) {
          const double t0 = HostTimer::now();
          chain.run();
          t.push_back(HostTimer::now() - t0);
        }
        x.push_back(n);
        y.push_back(median_of(t));
      }
      fit = fit_line(x, y);
      state.SetIterationTime(std::max(fit.slope, 1e-12));  // the reported time is the per-kernel cost
    }
    state.counters["per_kernel_s"] = fit.slope;
    state.counters["fixed_s"] = fit.intercept;
    state.counters["fit_r2"] = fit.r2;
  });
}

void fusion_case(benchmark::State& state, bool fused, int steps, std::uint64_t bytes) {
  run_guarded(state, [&] {
    const std::uint64_t n = bytes / sizeof(float);
    require_free_memory(bytes);
    DeviceBuffer<float> x(n);
    Stream s;
    auto run_chain = [&] {
      if (fused) kernels::chain_fused(x.data(), n, steps, s);
      else
        for (int k = 0; k < steps; ++k) kernels::chain_step(x.data(), n, s);
    };
    // Verify first, from the known input: K steps must equal the host's K fused multiply-adds.
    chain_prepare(x.data(), n, s);
    run_chain();
    TRIAUDIT_CUDA_LAUNCH();
    const VerifyResult v = chain_verify(x.data(), n, steps, s);
    if (!v.ok()) throw VerificationError(v.describe());

    GpuTimer timer(s);
    for (auto _ : state) {
      auto region = timer.region(state, 1);
      run_chain();
    }
    timer.check();
    const double moved = 2.0 * static_cast<double>(bytes) * (fused ? 1 : steps);
    state.counters["bytes_per_second"] = benchmark::Counter(moved, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["bytes_per_op"] = moved;
    state.counters["kernels"] = fused ? 1 : steps;
    state.counters["per_kernel_s"] = timer.seconds_per_op() / (fused ? 1 : steps);
  });
}

void sync_case(benchmark::State& state, const std::string& what) {
  run_guarded(state, [&] {
    Stream s;
    Event e(cudaEventDisableTiming);
    e.record(s);
    s.synchronize();
    constexpr int kBatch = 1000;
    HostTimer timer;
    for (auto _ : state) {
      auto region = timer.region(state, kBatch);
      for (int i = 0; i < kBatch; ++i) {
        if (what == "stream_synchronize") TRIAUDIT_CUDA(cudaStreamSynchronize(s));
        else if (what == "event_query") TRIAUDIT_CUDA(cudaEventQuery(e));
        else TRIAUDIT_CUDA(cudaEventSynchronize(e));
      }
    }
  });
}

void register_launch() {
  auto add = [](const std::string& name, std::function<void(benchmark::State&)> fn) { return register_case(name, std::move(fn)); };
  add(BenchName("launch", "empty", "enqueue").arg("kernels", 512).str(), [](benchmark::State& s) { enqueue_case(s, 512); });
  add(BenchName("launch", "empty", "round_trip").arg("kernels", 1).str(), [](benchmark::State& s) { round_trip_case(s); });
  for (bool graph : {false, true})
    for (int n : {1, 10, 100, 1000})
      add(BenchName("launch", "chain", graph ? "graph" : "eager").arg("kernels", static_cast<std::uint64_t>(n)).str(),
          [=](benchmark::State& s) { chain_case(s, n, graph); });
  for (bool graph : {false, true}) {  // a fixed count: each iteration already times 70 chains
    const std::string name = BenchName("launch", "chain_fit", graph ? "graph" : "eager").arg("kernels", "1-1000").str();
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { chain_fit_case(s, graph); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(3);
  }
  for (int steps : {8, 64})
    for (std::uint64_t bytes : {64ULL << 10, 256ULL << 20})
      for (bool fused : {false, true})
        add(BenchName("launch", "fusion", fused ? "fused" : "unfused").arg("steps", static_cast<std::uint64_t>(steps)).arg("bytes", bytes).str(),
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
                       nullptr, register_launch, {}, false};
  return suite_main(argc, argv, spec);
}
