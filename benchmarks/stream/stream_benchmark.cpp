// triaudit_stream: the bandwidth corner. STREAM copy / scale / add / triad / dot in FP32 and
// FP64 over a sweep of array sizes from L2-resident to far beyond the L2, hot (data left in L2
// by the previous operation) and cold (L2 flushed before each timed operation).
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
#include "sizes.hpp"
#include "stream_check.hpp"
#include "stream_latch.hpp"
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

// Hot cases batch small operations into one timed region (reported per operation) so the
// event resolution and the gap between launches do not dominate. Each operation is one launch
// (dot: two) and a region must fit behind one stream hold.
int ops_per_region(std::uint64_t array_bytes, bool cold, StreamOp op) {
  if (cold) return 1;  // each operation must start from a flushed L2
  const int entries = op == StreamOp::Dot ? 2 : 1;
  const std::uint64_t fit = static_cast<std::uint64_t>((StreamLatch::kMaxQueuedEntries - 2) / entries);
  return static_cast<int>(
      std::clamp<std::uint64_t>((256ULL << 20) / array_bytes, 1, std::min<std::uint64_t>(100, fit)));
}

// Device arrays kept across the calls of one case (Google Benchmark calls it once per
// repetition); re-filled on every call.
struct Workspace {
  std::uint64_t bytes = 0;
  DeviceBuffer<unsigned char> a, b, c, partial, result;
  std::unique_ptr<L2Flusher> flusher;
};

Workspace& workspace_for(std::uint64_t array_bytes) {
  static Workspace ws;
  if (ws.bytes != array_bytes) {
    ws = Workspace{};  // free the previous case's arrays before asking for more
    require_free_memory(kStreamArraysAllocated * array_bytes + 3 * device().description.l2_bytes);
    ws.a = DeviceBuffer<unsigned char>(array_bytes);
    ws.b = DeviceBuffer<unsigned char>(array_bytes);
    ws.c = DeviceBuffer<unsigned char>(array_bytes);
    ws.partial = DeviceBuffer<unsigned char>(64 * 1024 * sizeof(double));
    ws.result = DeviceBuffer<unsigned char>(sizeof(double));
    ws.bytes = array_bytes;
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
    Workspace& ws = workspace_for(array_bytes);
    const kernels::StreamArrays arrays{ws.a.data(), ws.b.data(), ws.c.data(), ws.partial.data(), ws.result.data()};
    const kernels::StreamLaunch launch = kernels::stream_launch<T>(op);
    if (launch.blocks * sizeof(T) > ws.partial.bytes()) throw Error("dot: too many blocks for the partial-sum buffer");

    Stream stream;
    stream_prepare<T>(op, arrays, n, stream);
    DeviceWork work;
    work.stream = stream;
    work.ops = ops_per_region(array_bytes, cold, op);
    work.queue_entries_per_op = op == StreamOp::Dot ? 2 : 1;
    const std::uint64_t touched = stream_arrays_touched(op) * array_bytes;
    work.flusher = stream_flush_between_regions(cold, sustained.window_s > 0, touched, dev.description.l2_bytes)
                       ? ws.flusher.get()
                       : nullptr;
    work.enqueue_op = [&] { kernels::stream_run<T>(op, arrays, n, launch, stream); };
    const LoopResult r = sustained.window_s > 0 ? measure_device_sustained(state, work, sustained.window_s)
                                                : measure_device(state, work);

    // Every element of every call, on the device: only a count comes back (the first call used to
    // copy the whole output, 1 GiB, to the host and check it there, a second between repetitions).
    const VerifyResult v = stream_verify<T>(op, arrays, n, launch, stream);
    if (!v.ok()) throw VerificationError(v.describe());

    const double bytes = static_cast<double>(stream_bytes_moved(op, n, sizeof(T)));
    state.counters["bytes_per_second"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["bytes_per_op"] = bytes;
    state.counters["working_set_bytes"] = static_cast<double>(stream_arrays_touched(op) * array_bytes);
    const double seconds = sustained.window_s > 0 ? r.median_seconds_per_op : r.seconds_per_op;
    const double peak = theoretical_memory_bandwidth(dev.description);
    if (peak > 0 && seconds > 0 && stream_peak_fraction_applies(touched, dev.description.l2_bytes))
      state.counters["peak_fraction"] = bytes / seconds / peak;
    if (sustained.window_s > 0) report_sustained(state, r);
    // Cold: every operation's window also holds the L2 flush (a read of 3x the L2), so the energy
    // per joule counts those bytes too: bytes_per_joule is the DRAM traffic per joule of the window.
    const double flushed = work.flusher != nullptr ? static_cast<double>(ws.flusher->bytes()) : 0.0;
    if (work.flusher != nullptr)
      append_label(state, "energy: each operation's window includes the L2 flush (bytes_per_joule counts its reads)");
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
