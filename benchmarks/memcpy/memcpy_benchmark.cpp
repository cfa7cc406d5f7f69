// triaudit_memcpy: the movement corner between host and device, and inside the device.
//
// Names: memcpy/<h2d|d2h|bidir|d2d>/<memory kind>/bytes:<size>     (see movement_catalogue.hpp)
//        memcpy/overlap/<pinned|pageable>/bytes:<size>
// Pinned, registered, write-combined, zero-copy and device copies: CUDA events on the
// benchmark's stream, held by a spinning kernel while the copies are queued with warm-up copies
// ahead of the start event (nvbandwidth's method), regions of >= 0.5 ms of copies where one hold's
// queue allows (else said latency-bound); device copies with the L2 flushed before each region,
// whose copies rotate over (source, destination) sets each out of the L2, enough of them that the
// write-back left in the L2 at the region's end is <= 0.5 % of its time. Bidirectional: each direction timed on its own
// stream while the opposite direction, twice as large, runs (nvbandwidth). Pageable copies: the
// host clock around completed cudaMemcpy calls, the host caches flushed before each. Every
// destination is checked word by word once per case.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/spin.cuh"
#include "copy_runner.hpp"
#include "gpu_timer.hpp"
#include "measure.hpp"
#include "names.hpp"
#include "region_plan.hpp"
#include "sizes.hpp"
#include "suite.hpp"

namespace triaudit {
namespace {

struct MemcpyOptions {
  std::uint64_t min_bytes = 4ULL << 10;
  std::uint64_t max_bytes = 1ULL << 30;
  std::string step = "4";
  std::vector<std::string> directions = {"h2d", "d2h", "bidir", "d2d", "overlap"};
} g_opt;

// The last case's buffers, kept across Google Benchmark's repeated calls of that case.
CopyRunner& runner_for(const CopyKind& kind, std::uint64_t bytes, int sets = 1) {
  static std::unique_ptr<CopyRunner> cached;
  if (!cached || cached->bytes() != bytes || cached->kind().direction != kind.direction ||
      cached->kind().memory != kind.memory || cached->sets() != sets) {
    cached.reset();
    require_free_memory(2 * bytes * static_cast<std::uint64_t>(sets));
    cached = std::make_unique<CopyRunner>(kind, bytes, sets);
  }
  return *cached;
}

// Pageable copies: writing a buffer larger than any CPU cache before each copy evicts the source
// (h2d) or destination (d2h), so a copy at a size that fits the last-level cache is not timed
// from a warm cache (bandwidthTest's FLUSH_SIZE).
void flush_host_caches() {
  static std::vector<unsigned char> buffer(kHostFlushBytes);
  static unsigned char value = 0;
  std::memset(buffer.data(), ++value, buffer.size());
  benchmark::DoNotOptimize(buffer.data());
}

void copy_case(benchmark::State& state, const std::string& name, const CopyKind& kind, std::uint64_t bytes) {
  run_guarded(state, [&] {
    const CopyRegionPlan plan = copy_region_plan(kind, bytes, device().description.l2_bytes);
    CopyRunner& run = runner_for(kind, bytes, plan.sets);
    run.poison();
    Stream s1, s2;
    const int ops = plan.min_ops;
    LoopResult r;
    double other_direction_s = 0.0, flush_bytes_per_op = 0.0;
    if (copy_is_host_timed(kind)) {
      HostWork work;
      work.ops = ops;
      work.min_region_s = kRegionMinSeconds;  // one copy a region (each after a host-cache flush): said when shorter
      work.before_region = flush_host_caches;
      work.run_op = [&] { run.run_synchronous(); };
      // A pageable host-to-device cudaMemcpy may return once the data sits in the driver's
      // staging buffer, before its last DMA lands: the region ends when the device is done.
      work.end_region = [] { TRIAUDIT_CUDA(cudaDeviceSynchronize()); };
      r = measure_host(state, work);
    } else {
      DeviceWork work;
      work.stream = s1;
      work.ops = ops;  // at least; then >= 0.5 ms of device time where one hold's queue allows
      work.min_region_s = kRegionMinSeconds;
      work.queue_entries_per_op = copy_queue_entries(kind);
      work.untimed_ops_in_region = untimed_copies_in_region(kind, bytes);
      std::unique_ptr<L2Flusher> flusher;
      if (copy_flushes_l2(kind)) {
        flusher = std::make_unique<L2Flusher>(device().description.l2_bytes);
        work.flusher = flusher.get();
        // One flush per region, shared by the region's copies (timed and untimed): sized after the loop.
        flush_bytes_per_op = static_cast<double>(flusher->bytes());
      }
      if (kind.direction == "bidir") {
        // Each direction measured on its own stream while the other direction, twice as large,
        // runs on a second one (nvbandwidth's bidirectional tests).
        work.before_region = [&] { run.join(s1, s2); };
        for (auto _ : state) {
          work.enqueue_op = [&] { run.enqueue_bidir(s1, s2, true); };
          r = time_device(work);
          work.enqueue_op = [&] { run.enqueue_bidir(s1, s2, false); };
          other_direction_s = time_device(work).seconds_per_op;
          state.SetIterationTime(r.seconds_per_op);
        }
      } else {
        work.enqueue_op = [&] { run.enqueue(s1); };
        r = measure_device(state, work);
      }
    }

    const double ops_per_region = r.regions > 0 ? static_cast<double>(r.ops) / r.regions : 1.0;
    if (copy_flushes_l2(kind)) {
      flush_bytes_per_op /= ops_per_region + untimed_copies_in_region(kind, bytes);
      state.counters["buffer_sets"] = run.sets();
      state.counters["writeback_residual"] =
          writeback_residual(device().description.l2_bytes, bytes, 2 * bytes, static_cast<int>(ops_per_region));
    }
    // Every word the first time a case runs in this process; every 997th (and the last) on
    // Google Benchmark's later calls of the same case.
    static std::set<std::string> fully_verified;
    const VerifyResult v = run.verify(fully_verified.insert(name).second ? 1 : 997);
    if (!v.ok()) throw VerificationError(v.describe());
    const double counted = static_cast<double>(copy_bytes_counted(kind, bytes));
    state.counters["bytes_per_second"] = benchmark::Counter(counted, benchmark::Counter::kIsIterationInvariantRate);
    if (r.median_seconds_per_op > 0)  // nvbandwidth reports the median region; the figure above is the mean
      state.counters["bytes_per_second_median"] = counted / r.median_seconds_per_op;
    state.counters["bytes_per_op"] = counted;
    state.counters["host_timed"] = copy_is_host_timed(kind) ? 1 : 0;
    if (kind.direction == "bidir" && other_direction_s > 0) {
      const double h2d = counted / r.seconds_per_op, d2h = counted / other_direction_s;
      state.counters["bytes_per_second_h2d"] = h2d;
      state.counters["bytes_per_second_d2h"] = d2h;
      state.counters["bytes_per_second_total"] = h2d + d2h;
      append_label(state,
                   "per direction as nvbandwidth: bytes_per_second is h2d while a d2h copy of twice the size "
                   "runs; bytes_per_second_total adds both directions");
    }
    if (copy_is_host_timed(kind)) append_label(state, "host caches flushed (256 MiB written) before each copy");
    if (kind.direction == "d2d")
      append_label(state, "bytes counted once (DRAM traffic is read + write = 2x); L2 flushed before each region of " +
                              std::to_string(static_cast<int>(ops_per_region)) + " copies over " +
                              std::to_string(run.sets()) + " (source, destination) set(s), each out of the L2");
    // bytes_per_joule: the bytes the window moved per operation (joules_per_op divides the window's
    // energy by every copy in it, untimed ones too). Bidirectional: the measured copy and the
    // interfering one, twice as large (3x); device copies: read + write, and their share of the
    // L2 flush read before each region.
    double moved = counted;
    if (kind.direction == "bidir") moved = counted + static_cast<double>(bidir_interfering_bytes(bytes));
    if (copy_flushes_l2(kind)) moved = 2.0 * counted + flush_bytes_per_op;
    report_loop(state, r, "bytes_per_joule", moved);
  });
}

// A kernel of known duration on one stream and an async host-to-device copy on another: how
// much of the copy hides behind the kernel with pinned memory, and with pageable memory.
void overlap_case(benchmark::State& state, const std::string& memory, std::uint64_t bytes) {
  run_guarded(state, [&] {
    CopyRunner& run = runner_for({"h2d", memory}, bytes);
    Stream s1, s2;
    // Calibrate: the copy alone, host-timed to completion (as the overlapped runs are).
    auto copy_once = [&] {
      run.enqueue(s2);
      s2.synchronize();
    };
    copy_once();
    const double t0 = HostTimer::now();
    for (int i = 0; i < 3; ++i) copy_once();
    const double copy_s = (HostTimer::now() - t0) / 3;
    const auto kernel_ns = static_cast<std::uint64_t>(copy_s * 1e9);

    // Pairs (serial, overlapped) until --min-time has passed; the mean of each is reported.
    double serial_sum = 0, overlapped_sum = 0;
    long long n = 0;
    for (auto _ : state) {
      const double start = HostTimer::now();
      do {
        double t = HostTimer::now();
        kernels::spin_for(kernel_ns, s1);
        s1.synchronize();
        copy_once();
        serial_sum += HostTimer::now() - t;

        t = HostTimer::now();
        kernels::spin_for(kernel_ns, s1);
        run.enqueue(s2);
        s1.synchronize();
        s2.synchronize();
        overlapped_sum += HostTimer::now() - t;
        ++n;
      } while (n < 3 || HostTimer::now() - start < measure_settings().min_time_s);
      state.SetIterationTime(overlapped_sum / static_cast<double>(n));
    }
    TRIAUDIT_CUDA_LAUNCH();
    const VerifyResult v = run.verify();
    if (!v.ok()) throw VerificationError(v.describe());
    const double serial = serial_sum / static_cast<double>(n), overlapped = overlapped_sum / static_cast<double>(n);
    state.counters["copy_s"] = copy_s;
    state.counters["kernel_s"] = static_cast<double>(kernel_ns) * 1e-9;
    state.counters["serial_s"] = serial;
    state.counters["overlapped_s"] = overlapped;
    state.counters["hidden_fraction"] = std::clamp((serial - overlapped) / copy_s, -1.0, 1.0);
    state.counters["pairs"] = static_cast<double>(n);
  });
}

// The headline a copy stands for (the Python corners' keys), "" for none.
std::string copy_headline(const CopyKind& kind) {
  if (kind.memory == "pinned" && (kind.direction == "h2d" || kind.direction == "d2h")) return kind.direction;
  if (kind.memory == "pageable" && kind.direction == "h2d") return "h2d/pageable";
  if (kind.direction == "d2d" && kind.memory == "copy_engine") return "d2d";
  return "";
}

void register_memcpy() {
  if (g_opt.min_bytes > g_opt.max_bytes) throw std::invalid_argument("--min-bytes is above --max-bytes");
  if (g_opt.min_bytes < 16) throw std::invalid_argument("--min-bytes must be at least 16");
  const auto sizes = geometric_sizes(g_opt.min_bytes, g_opt.max_bytes, static_cast<unsigned>(std::stoi(g_opt.step)));
  auto wanted = [](const std::string& d) {
    return std::find(g_opt.directions.begin(), g_opt.directions.end(), d) != g_opt.directions.end();
  };
  for (const CopyKind& kind : copy_kinds()) {
    if (!wanted(kind.direction)) continue;
    for (std::uint64_t bytes : sizes) {
      if (!copy_applies_to_size(kind, bytes)) continue;
      const std::string name = BenchName("memcpy", kind.direction, kind.memory).arg("bytes", bytes).str();
      register_case(name, [=](benchmark::State& s) { copy_case(s, name, kind, bytes); });
      describe_case(name, {"bytes_per_second", copy_headline(kind), {}});
    }
  }
  if (wanted("overlap"))
    for (const std::string memory : {"pinned", "pageable"})
      for (std::uint64_t bytes : {16ULL << 20, 256ULL << 20}) {
        const std::string name = BenchName("memcpy", "overlap", memory).arg("bytes", bytes).str();
        register_case(name, [=](benchmark::State& s) { overlap_case(s, memory, bytes); });
      }
}

void add_flags(FlagSet& f) {
  f.add_size("min-bytes", &g_opt.min_bytes, "smallest copy");
  f.add_size("max-bytes", &g_opt.max_bytes, "largest copy");
  f.add_choice("step", &g_opt.step, {"2", "4"}, "size multiplier between cases");
  f.add_list("directions", &g_opt.directions, {"h2d", "d2h", "bidir", "d2d", "overlap"}, "what to measure");
}

}  // namespace
}  // namespace triaudit

int main(int argc, char** argv) {
  using namespace triaudit;
  const SuiteSpec spec{
      "triaudit_memcpy",
      "host<->device and device<->device copies: pageable, pinned, registered, write-combined, zero-copy; overlap",
      add_flags,
      register_memcpy,
      {},
      false};
  return suite_main(argc, argv, spec);
}
