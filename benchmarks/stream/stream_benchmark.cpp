// triaudit_stream: the bandwidth corner. STREAM copy / scale / add / triad / dot in FP32 and
// FP64 over a sweep of array sizes from L2-resident to far beyond the L2, hot (data left in L2
// by the previous operation) and cold (the L2 flushed before each region, whose operations rotate
// over buffer sets so each finds its data out of the L2; enough of them that the write-back left
// in the L2 at the region's end is <= 0.5 % of a DRAM figure: stream_plan.hpp). Every region holds
// >= 0.5 ms of device time where one hold's queue allows, or the case says it is latency-bound.
//
// Name:  stream/<op>/<fp32|fp64>/cache:<hot|cold>/bytes:<bytes of ONE array>
//        stream/triad_sustained/<fp32|fp64>/cache:cold/bytes:<largest>: triad back to back for
//        --sustained-s, the median over the window (the cold triad case is the burst figure); no
//        flush between regions when the arrays are >= 3x L2 (nothing of one is left for the next)
// Bytes: arrays read + written per element (copy 2, scale 2, add 3, triad 3, dot 2), as STREAM
//        and BabelStream count them; `working_set_bytes` = arrays touched x array bytes.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cuda_raii.hpp"
#include "gpu_timer.hpp"
#include "measure.hpp"
#include "names.hpp"
#include "region_plan.hpp"
#include "sizes.hpp"
#include "stream_check.hpp"
#include "stream_latch.hpp"
#include "stream_plan.hpp"
#include "suite.hpp"

namespace triaudit {
namespace {

struct StreamOptions {
  std::uint64_t min_bytes = 512ULL << 10;
  std::uint64_t max_bytes = 1ULL << 30;
  std::vector<std::string> ops = {"copy", "scale", "add", "triad", "dot"};
  std::vector<std::string> types = {"fp32", "fp64"};
  std::vector<std::string> caches = {"hot", "cold"};
  double sustained_s = 10.0;
} g_opt;

// Device arrays kept across the calls of one case (Google Benchmark calls it once per
// repetition); re-filled on every call. `sets` copies of (a, b, c), side by side: a cold case's
// operations rotate through them (stream_plan.hpp) so each finds its data out of the L2.
struct Workspace {
  std::uint64_t bytes = 0;
  int sets = 0;
  int next_set = 0;  // the set the next operation uses
  DeviceBuffer<unsigned char> a, b, c, partial, result;
  std::unique_ptr<L2Flusher> flusher;
  kernels::StreamArrays arrays(int set) {
    const std::uint64_t at = static_cast<std::uint64_t>(set) * bytes;
    return {a.data() + at, b.data() + at, c.data() + at, partial.data(), result.data()};
  }
};

Workspace& workspace_for(std::uint64_t array_bytes, int sets) {
  static Workspace ws;
  if (ws.bytes != array_bytes || ws.sets != sets) {
    ws = Workspace{};  // free the previous case's arrays before asking for more
    const std::uint64_t per_array = array_bytes * static_cast<std::uint64_t>(sets);
    require_free_memory(kStreamArraysAllocated * per_array + 3 * device().description.l2_bytes);
    ws.a = DeviceBuffer<unsigned char>(per_array);
    ws.b = DeviceBuffer<unsigned char>(per_array);
    ws.c = DeviceBuffer<unsigned char>(per_array);
    ws.partial = DeviceBuffer<unsigned char>(64 * 1024 * sizeof(double));
    ws.result = DeviceBuffer<unsigned char>(sizeof(double));
    ws.bytes = array_bytes;
    ws.sets = sets;
  }
  if (!ws.flusher) ws.flusher = std::make_unique<L2Flusher>(device().description.l2_bytes);
  return ws;
}

// Sustained: back-to-back cold operations for --sustained-s (triad at the largest size), with
// the clock, power and temperature seen over the window.
struct Sustained {
  double window_s = 0.0;  // 0: the case is not sustained
};

template <typename T>
void stream_case(benchmark::State& state, StreamOp op, std::uint64_t array_bytes, bool cold, Sustained sustained = {}) {
  run_guarded(state, [&] {
    const DeviceContext& dev = device();
    const std::uint64_t n = array_bytes / sizeof(T);
    const StreamRegionPlan plan =
        stream_region_plan(op, array_bytes, cold, sustained.window_s > 0, dev.description.l2_bytes);
    Workspace& ws = workspace_for(array_bytes, plan.sets);
    const kernels::StreamLaunch launch = kernels::stream_launch<T>(op);
    if (launch.blocks * sizeof(T) > ws.partial.bytes()) throw Error("dot: too many blocks for the partial-sum buffer");

    Stream stream;
    for (int set = 0; set < ws.sets; ++set) stream_prepare<T>(op, ws.arrays(set), n, stream);
    DeviceWork work;
    work.stream = stream;
    work.ops = plan.min_ops;  // at least: the write-back rule's count (cold); then >= 0.5 ms of device time
    work.max_ops = plan.max_ops;
    work.min_region_s = kRegionMinSeconds;
    work.queue_entries_per_op = op == StreamOp::Dot ? 2 : 1;
    const std::uint64_t touched = stream_arrays_touched(op) * array_bytes;
    work.flusher = plan.flush ? ws.flusher.get() : nullptr;
    work.enqueue_op = [&] {
      kernels::stream_run<T>(op, ws.arrays(ws.next_set), n, launch, stream);
      ws.next_set = (ws.next_set + 1) % ws.sets;
    };
    const LoopResult r = sustained.window_s > 0 ? measure_device_sustained(state, work, sustained.window_s)
                                                : measure_device(state, work);

    // Every element of every set, on the device (dot: its one result, from the last set it used).
    for (int set = 0; set < (op == StreamOp::Dot ? 1 : ws.sets); ++set) {
      const VerifyResult v = stream_verify<T>(op, ws.arrays(set), n, launch, stream);
      if (!v.ok()) throw VerificationError((ws.sets > 1 ? "set " + std::to_string(set) + ": " : "") + v.describe());
    }

    const double bytes = static_cast<double>(stream_bytes_moved(op, n, sizeof(T)));
    state.counters["bytes_per_second"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["bytes_per_op"] = bytes;
    state.counters["working_set_bytes"] = static_cast<double>(stream_arrays_touched(op) * array_bytes);
    state.counters["buffer_sets"] = ws.sets;
    const double seconds = sustained.window_s > 0 ? r.median_seconds_per_op : r.seconds_per_op;
    const double peak = theoretical_memory_bandwidth(dev.description);
    if (peak > 0 && seconds > 0 && stream_peak_fraction_applies(touched, dev.description.l2_bytes))
      state.counters["peak_fraction"] = bytes / seconds / peak;
    const double ops_per_region = r.regions > 0 ? static_cast<double>(r.ops) / r.regions : 1.0;
    if (plan.flush) {
      // The write-back still in the L2 at each region's end, a share of the region's traffic (region_plan.hpp).
      const std::uint64_t written = op == StreamOp::Dot ? 0 : array_bytes;
      state.counters["writeback_residual"] =
          writeback_residual(dev.description.l2_bytes, written, touched, static_cast<int>(ops_per_region));
    }
    if (sustained.window_s > 0) report_sustained(state, r);
    // Cold: every region's window also holds the L2 flush (a read of 3x the L2), shared by its
    // operations, so bytes_per_joule counts those bytes too: the DRAM traffic per joule of the window.
    const double flushed = work.flusher != nullptr ? static_cast<double>(ws.flusher->bytes()) / ops_per_region : 0.0;
    if (work.flusher != nullptr)
      append_label(state, "cold: the L2 flushed before each region of " +
                              std::to_string(static_cast<int>(ops_per_region)) + " operations over " +
                              std::to_string(ws.sets) +
                              " buffer set(s), each out of the L2; energy: bytes_per_joule counts the flush's reads");
    report_loop(state, r, "bytes_per_joule", bytes + flushed);
  });
}

void register_stream() {
  if (g_opt.min_bytes > g_opt.max_bytes)
    throw std::invalid_argument("--min-bytes (" + format_bytes(g_opt.min_bytes) + ") is above --max-bytes (" +
                                format_bytes(g_opt.max_bytes) + ")");
  const auto sizes = power_of_two_sweep(g_opt.min_bytes, g_opt.max_bytes);
  if (sizes.empty()) throw std::invalid_argument("no power of two lies between --min-bytes and --max-bytes");
  auto wanted = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  // Sustained triad at the largest size (FP32): what the card holds beside the burst figure of
  // the ordinary cold case.
  if (wanted(g_opt.ops, "triad") && wanted(g_opt.caches, "cold") && g_opt.sustained_s > 0)
    for (const std::string type : {"fp32"}) {
      if (!wanted(g_opt.types, type)) continue;
      const std::uint64_t bytes = sizes.back();
      const std::string name =
          BenchName("stream", "triad_sustained", type).arg("cache", "cold").arg("bytes", bytes).str();
      const Sustained sus{g_opt.sustained_s};
      register_case(name, [=](benchmark::State& s) { stream_case<float>(s, StreamOp::Triad, bytes, true, sus); });
      describe_case(name, {"bytes_per_second", "triad/sustained", {}});
    }
  for (StreamOp op : kStreamOps) {
    if (!wanted(g_opt.ops, stream_op_name(op))) continue;
    for (const std::string type : {"fp32", "fp64"}) {
      if (!wanted(g_opt.types, type)) continue;
      for (const std::string cache : {"hot", "cold"}) {
        if (!wanted(g_opt.caches, cache)) continue;
        for (std::uint64_t bytes : sizes) {
          const std::string name =
              BenchName("stream", stream_op_name(op), type).arg("cache", cache).arg("bytes", bytes).str();
          const bool cold = cache == "cold";
          if (type == "fp32")
            register_case(name, [=](benchmark::State& s) { stream_case<float>(s, op, bytes, cold); });
          else
            register_case(name, [=](benchmark::State& s) { stream_case<double>(s, op, bytes, cold); });
          // The HBM headline (the Python corners' key): the FP32 triad with the L2 flushed.
          const bool hbm = op == StreamOp::Triad && cold && type == "fp32";
          describe_case(name, {"bytes_per_second", hbm ? "triad" : "", {}});
        }
      }
    }
  }
}

void add_flags(FlagSet& f) {
  f.add_size("min-bytes", &g_opt.min_bytes, "smallest array (one of the arrays), rounded up to a power of two");
  f.add_size("max-bytes", &g_opt.max_bytes,
             "largest array, rounded down to a power of two; sizes that do not fit in free device memory are skipped");
  f.add_list("ops", &g_opt.ops, {"copy", "scale", "add", "triad", "dot"}, "operations");
  f.add_list("types", &g_opt.types, {"fp32", "fp64"}, "element types");
  f.add_list("cache", &g_opt.caches, {"hot", "cold"}, "hot: data left in L2; cold: L2 flushed before each op");
  f.add_double("sustained-s", &g_opt.sustained_s, 0.0, 3600.0,
               "window of the sustained triad at the largest size (0: no sustained case)");
}

}  // namespace
}  // namespace triaudit

int main(int argc, char** argv) {
  using namespace triaudit;
  const SuiteSpec spec{"triaudit_stream",
                       "STREAM bandwidth (copy, scale, add, triad, dot) from L2-resident sizes to HBM",
                       add_flags,
                       register_stream,
                       {},
                       false};
  return suite_main(argc, argv, spec);
}
