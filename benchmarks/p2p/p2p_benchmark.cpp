// triaudit_p2p: the movement corner between GPUs, every ordered pair.
//
// Names: p2p/<ce|ce_read|sm_read|sm_write>/<uni|bidir>/src:<i>/dst:<j>/bytes:<N>
//        p2p/staged/uni/src:<i>/dst:<j>/bytes:<N>          (--staged=on: peer access off, via pinned host memory)
//        p2p/small_copy/<ce|sm_write>/src:<i>/dst:<j>/bytes:<N>   back-to-back small copies, the time
//        per copy (p2pBandwidthLatencyTest's "latency"; not nvbandwidth's pointer-chase latency;
//        p2p/latency/... before schema 2)
// (p2p_catalogue.hpp). The catalogue covers GPUs 0 .. --max-gpus-1 on every machine; a pair
// beyond the visible GPUs, or without peer access, is skipped with the reason (NVML's P2P status).
// Timing as triaudit_memcpy: CUDA events on the issuing GPU's stream, held by a spinning kernel
// while the copies (and warm-up copies ahead of the start event) are queued, regions of >= 0.5 ms
// of copies where one hold's queue allows (else said latency-bound); bidirectional: each
// direction timed on its own stream while the other direction, twice as large, runs (nvbandwidth).
// Every destination is checked word by word after timing. Energy: both GPUs' counters summed.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "gpu_timer.hpp"
#include "gpu_topology.hpp"
#include "measure.hpp"
#include "pair_runner.hpp"
#include "region_plan.hpp"
#include "suite.hpp"

namespace triaudit {
namespace {

struct Options {
  P2pOptions p2p;
  long long max_gpus = 8;
  std::string staged = "off";
  std::string pairs = "all";  // or "representative": one ordered pair per link type
} g_opt;

P2pMachine& machine() {
  static P2pMachine m;
  return m;
}

// Peer access for the pair being measured, both ways; the previous pair's is disabled first
// (a GPU may hold only a few peer mappings on some systems, and a staged copy must not have one).
class PeerAccess {
 public:
  void hold(int a, int b) {
    if (held_ == std::make_pair(std::min(a, b), std::max(a, b))) return;
    release();
    enable(a, b);
    enable(b, a);
    held_ = {std::min(a, b), std::max(a, b)};
  }
  void release() {
    if (held_.first < 0) return;
    disable(held_.first, held_.second);
    disable(held_.second, held_.first);
    held_ = {-1, -1};
  }

 private:
  static void enable(int from, int to) {
    DeviceGuard g(from);
    const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
    if (e == cudaSuccess) return;
    (void)cudaGetLastError();  // not sticky: clear it
    if (e == cudaErrorPeerAccessAlreadyEnabled) return;
    const std::string what = "enabling peer access from GPU " + std::to_string(from) + " to GPU " + std::to_string(to) +
                             " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
    if (e == cudaErrorTooManyPeers) throw SkipCase(what);
    throw Error(what);
  }
  static void disable(int from, int to) {
    DeviceGuard g(from);
    if (cudaDeviceDisablePeerAccess(to) != cudaSuccess) (void)cudaGetLastError();
  }
  std::pair<int, int> held_{-1, -1};
};

PeerAccess& peers() {
  static PeerAccess p;
  return p;
}

// Skips the case unless `bytes` more memory is free on `device`, naming the GPU.
void require_free_memory_on(int device, std::uint64_t bytes) {
  DeviceGuard g(device);
  try {
    require_free_memory(bytes);
  } catch (const SkipCase& e) {
    throw SkipCase("GPU " + std::to_string(device) + " " + e.what());
  }
}

// The last case's buffers, kept across Google Benchmark's repeated calls of that case.
PairRunner& runner_for(const P2pCase& c) {
  static std::unique_ptr<PairRunner> cached;
  if (!cached || cached->bytes() != c.bytes || cached->src() != c.src || cached->dst() != c.dst ||
      cached->kind().test != c.kind.test || cached->kind().direction != c.kind.direction) {
    cached.reset();
    const std::uint64_t need = p2p_device_bytes(c.kind, c.bytes);
    require_free_memory_on(c.src, need);
    require_free_memory_on(c.dst, need);
    cached = std::make_unique<PairRunner>(c.kind, c.src, c.dst, c.bytes);
  }
  return *cached;
}

// Both GPUs of the pair draw power for a copy: their energy counters summed, per case over its
// calls (the harness's own account reads the --device GPU only).
EnergyReading pair_energy(const P2pCase& c) {
  const auto& nv = machine().nvml;
  return sum_energy(nv.at(static_cast<std::size_t>(c.src))->total_energy(),
                    nv.at(static_cast<std::size_t>(c.dst))->total_energy());
}

EnergyAccount& pair_account(const std::string& name) {
  static std::map<std::string, EnergyAccount> accounts;
  return accounts[name];
}

// The link of every covered ordered pair, for --pairs=representative.
const std::vector<std::vector<std::string>>& link_names() {
  static std::vector<std::vector<std::string>> names;
  if (names.empty())
    for (const auto& row : machine().pairs) {
      names.emplace_back();
      for (const PairTopology& p : row) names.back().push_back(p.link);
    }
  return names;
}

LoopResult timed(PairRunner& run, const P2pCase& c, bool forward, EnergyAccount& energy) {
  DeviceGuard g(run.timing_device(forward));  // the latch, the events and the kernels live there
  DeviceWork work;
  work.stream = run.timing_stream(forward);
  work.ops = p2p_ops_per_region(c.kind, c.bytes);  // at least; then >= 0.5 ms where one hold's queue allows
  // Small copies are timed per copy, 100 back to back (p2pBandwidthLatencyTest's shape): not resized.
  work.min_region_s = c.kind.small_copy ? 0.0 : kRegionMinSeconds;
  work.queue_entries_per_op = p2p_queue_entries(c.kind);
  work.untimed_ops_in_region = p2p_untimed_ops(c.kind, c.bytes);
  if (c.kind.direction == "bidir") work.before_region = [&] { run.join(forward); };
  work.enqueue_op = [&] { run.enqueue(forward); };
  const EnergyReading start = pair_energy(c);
  const double t0 = HostTimer::now();
  LoopResult r = time_device(work);
  energy.add(HostTimer::now() - t0, start, pair_energy(c), r.ops_in_window(), 2);  // two GPUs' counters
  return r;
}

std::string method_label(const P2pKind& k) {
  if (k.test == "ce") return "copy engine: cudaMemcpyPeerAsync issued on the source GPU";
  if (k.test == "ce_read")
    return "copy engine, read: cudaMemcpyPeerAsync issued on the destination GPU (nvbandwidth's *_memcpy_read_ce)";
  if (k.test == "sm_read") return "SM copy: a kernel on the destination GPU reads the source's memory over the link";
  if (k.test == "sm_write")
    return "SM copy: a kernel on the source GPU writes into the destination's memory over the link";
  return "staged, peer access off: source -> pinned host memory -> destination, two copies in sequence";
}

void p2p_case(benchmark::State& state, const P2pCase& c) {
  run_guarded(state, [&] {
    const std::string name = c.name();
    if (const auto why = pair_visibility_skip(c.src, c.dst, machine().visible)) throw SkipCase(*why);
    if (g_opt.pairs == "representative")
      if (const auto why = representative_pair_skip(c.src, c.dst, link_names())) throw SkipCase(*why);
    const auto s = static_cast<std::size_t>(c.src), d = static_cast<std::size_t>(c.dst);
    if (c.kind.test == "staged") {
      peers().release();
    } else {
      for (auto [a, b] : {std::make_pair(s, d), std::make_pair(d, s)})
        if (!machine().can_access[a][b])
          throw SkipCase("no peer access from GPU " + std::to_string(a) + " to GPU " + std::to_string(b) + ": " +
                         machine().pairs[a][b].access + "; --staged=on measures the copy through host memory");
      peers().hold(c.src, c.dst);
    }
    watch_case_device(c.src);  // both GPUs' error counters over the case (health.hpp)
    watch_case_device(c.dst);
    PairRunner& run = runner_for(c);
    run.poison();
    EnergyAccount& energy = pair_account(name);
    const bool bidir = c.kind.direction == "bidir";
    LoopResult r, reverse;
    for (auto _ : state) {
      r = timed(run, c, true, energy);
      if (bidir) reverse = timed(run, c, false, energy);
      state.SetIterationTime(r.seconds_per_op);
    }

    // Every word the first time a case runs in this process; every 997th (and the last) on
    // Google Benchmark's later calls of the same case.
    static std::set<std::string> fully_verified;
    const VerifyResult v = run.verify(fully_verified.insert(name).second ? 1 : 997);
    if (!v.ok()) throw VerificationError(v.describe());

    const double counted = static_cast<double>(c.bytes);  // once per copy, as nvbandwidth counts
    state.counters["bytes_per_op"] = counted;
    if (!c.kind.small_copy)
      state.counters["bytes_per_second"] = benchmark::Counter(counted, benchmark::Counter::kIsIterationInvariantRate);
    append_label(state, method_label(c.kind) + "; GPU " + std::to_string(c.src) + " -> GPU " + std::to_string(c.dst) +
                            " over " + machine().pairs[s][d].link);
    if (bidir && reverse.seconds_per_op > 0) {
      const double there = counted / r.seconds_per_op, back = counted / reverse.seconds_per_op;
      state.counters["bytes_per_second_reverse"] = back;
      state.counters["bytes_per_second_total"] = there + back;
      append_label(state,
                   "per direction as nvbandwidth: bytes_per_second is src->dst while a dst->src copy of twice the "
                   "size runs; bytes_per_second_reverse the other way, measured the same; total adds both");
    }
    if (c.kind.small_copy)
      append_label(state, std::to_string(r.regions > 0 ? r.ops / r.regions : 0) +
                              " copies back to back per region; seconds_per_op is the time per copy "
                              "(p2pBandwidthLatencyTest's \"latency\"; not nvbandwidth's latency, a pointer chase)");
    else if (r.median_seconds_per_op > 0)
      state.counters["bytes_per_second_median"] = counted / r.median_seconds_per_op;
    report_loop(state, r);
    // The harness's energy figures describe the --device GPU alone: replace them with the pair's.
    state.counters.erase("joules_per_op");
    state.counters.erase("watts_mean");
    const EnergyFigures e = energy.figures();
    state.counters["energy_window_s"] = e.window_s;
    if (e.valid) {
      state.counters["joules_per_op"] = e.joules_per_op;
      state.counters["watts_mean"] = e.watts_mean;
      // The bytes the window moved per operation: a bidirectional one also carries the opposite
      // copy, twice as large.
      const double moved = c.kind.direction == "bidir" ? 3.0 * counted : counted;
      if (e.joules_per_op > 0) state.counters["bytes_per_joule"] = moved / e.joules_per_op;
      append_label(state, "energy: GPU " + std::to_string(c.src) + " and GPU " + std::to_string(c.dst) + " together");
    } else {
      append_label(state, "pair energy " + e.why);
    }
  });
}

void register_p2p() {
  g_opt.p2p.max_gpus = static_cast<int>(g_opt.max_gpus);
  g_opt.p2p.staged = g_opt.staged == "on";
  for (const P2pCase& c : p2p_catalogue(g_opt.p2p))
    register_case(c.name(), [c](benchmark::State& s) { p2p_case(s, c); });
}

void before_run() {
  P2pMachine& m = machine();
  m = discover_machine(static_cast<int>(g_opt.max_gpus));
  benchmark::AddCustomContext("p2p_gpus_visible", std::to_string(m.visible));
  for (const auto& [k, v] : p2p_context_entries(m.gpus, m.pairs)) benchmark::AddCustomContext(k, v);
  benchmark::AddCustomContext("p2p_energy", "per case, both GPUs of the pair (NVML energy counters summed)");
}

void add_flags(FlagSet& f) {
  f.add_int("max-gpus", &g_opt.max_gpus, 2, 64,
            "pairs of GPUs 0 .. N-1 are in the catalogue (beyond the visible ones: skipped)");
  f.add_size("min-bytes", &g_opt.p2p.min_bytes, "smallest copy (the sweep steps by 4 down from --max-bytes)");
  f.add_size("max-bytes", &g_opt.p2p.max_bytes, "largest copy, rounded down to a power of two");
  f.add_list("tests", &g_opt.p2p.tests, {"ce", "ce_read", "sm_read", "sm_write", "small_copy", "latency"},
             "what to measure (latency: the old word for small_copy)");
  f.add_choice("pairs", &g_opt.pairs, {"all", "representative"},
               "every ordered pair, or one per link type (the first of each; the others skipped with the reason)");
  f.add_list("directions", &g_opt.p2p.directions, {"uni", "bidir"}, "one direction at a time, or both at once");
  f.add_choice("staged", &g_opt.staged, {"off", "on"}, "also copy with peer access off, through pinned host memory");
}

}  // namespace
}  // namespace triaudit

int main(int argc, char** argv) {
  using namespace triaudit;
  const SuiteSpec spec{
      "triaudit_p2p",
      "GPU-to-GPU copies for every ordered pair: copy engine (write, read), SM read, SM write, uni- and bidirectional, "
      "staged through the host, back-to-back small copies; link types and peer access in the context",
      add_flags,
      register_p2p,
      before_run,
      false,
      "node"};  // every pair of the node's GPUs: a node-level figure (case_description.hpp)
  return suite_main(argc, argv, spec);
}
