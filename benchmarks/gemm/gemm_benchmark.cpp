// triaudit_gemm: the compute corner.
//
//   gemm/cublaslt/<precision>/layout:<nn|tn>/m:M/n:N/k:K   cuBLASLt, the fastest of the heuristic's
//                                                           candidates (label: which one won)
//   gemm/ceiling/<precision>/shapes:12                      best FLOP/s over a sweep of large shapes:
//                                                           the measured compute roof
//   gemm/ladder_l<L>_<name>/<fp32|bf16>/layout:tn/...       hand-written kernels, with their ratio to
//                                                           cuBLASLt on the same shape (ratio_to_cublas)
// Counters: flops (ops for INT8: 2*M*N*K per GEMM, a rate), arithmetic_intensity (FLOPs / minimum
// bytes), algo_id. D is checked against an FP64 reference at 1026 sampled elements before any
// number is reported; inputs are random in [-1, 1] and rotated over enough copies to exceed L2.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "../common/gpu_timer.hpp"
#include "../common/names.hpp"
#include "../common/suite.hpp"
#include "cublaslt_gemm.hpp"
#include "gemm/ladder/ladder.cuh"
#include "gemm_check.hpp"

namespace triaudit {
namespace {

struct GemmOptions {
  std::uint64_t max_square = 16384;
  std::vector<std::string> families = {"square", "llm", "misaligned", "ceiling", "ladder"};
} g_opt;

int device_cc() { return device().description.cc_major * 10 + device().description.cc_minor; }

void require_precision(GemmPrecision p) {
  std::string why;
  if (!precision_supported(p, device_cc(), &why)) throw SkipCase(why);
}

// GEMMs cheap enough to be launch-bound are batched inside one held region.
int gemms_per_region(const GemmShape& s) {
  const double f = gemm_flops(s.m, s.n, s.k);
  return f >= 1e10 ? 1 : static_cast<int>(std::clamp(1e10 / f, 1.0, 50.0));
}

std::unique_ptr<GemmBuffers> make_buffers(kernels::ElemType ab, kernels::ElemType cd, const GemmShape& s, Stream& stream,
                                          std::size_t extra_bytes) {
  const std::uint64_t per_set = operand_set_bytes(s, kernels::elem_bytes(ab), kernels::elem_bytes(cd));
  int sets = rotation_sets(per_set, device().description.l2_bytes);
  require_free_memory(per_set + extra_bytes);
  std::size_t free_bytes = 0, total = 0;
  TRIAUDIT_CUDA(cudaMemGetInfo(&free_bytes, &total));
  while (sets > 1 && per_set * static_cast<std::uint64_t>(sets) + extra_bytes + (512u << 20) > free_bytes) --sets;
  return std::make_unique<GemmBuffers>(ab, cd, s, sets, stream);
}

void set_counters(benchmark::State& state, GemmPrecision p, const GemmShape& s) {
  const PrecisionInfo& info = precision_info(p);
  state.counters[info.counter] = benchmark::Counter(gemm_flops(s.m, s.n, s.k), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["arithmetic_intensity"] = gemm_intensity(s.m, s.n, s.k, info.a_bytes, info.c_bytes);
  state.counters["m"] = static_cast<double>(s.m);  // LLM cases are named by layer and tokens: the shape is here
  state.counters["n"] = static_cast<double>(s.n);
  state.counters["k"] = static_cast<double>(s.k);
}

// Google Benchmark calls a case's body several times (sizing the iteration count, then once
// per repetition): the operands, the workspace and the tuned algorithm of the last case are kept,
// so the candidates are timed once per case, not once per call.
struct LtCaseCache {
  std::string name;
  std::unique_ptr<GemmBuffers> buf;
  std::unique_ptr<DeviceBuffer<unsigned char>> ws;
  std::unique_ptr<LtGemm> gemm;
};

const LtHandle& lt_handle() {
  static LtHandle h;
  return h;
}

void cublaslt_case(benchmark::State& state, GemmPrecision p, GemmShape s) {
  run_guarded(state, [&] {
    require_precision(p);
    const LtTypes t = lt_types(p);
    const std::size_t ws_bytes = lt_workspace_bytes(device_cc());
    Stream stream;
    static LtCaseCache cache;
    const std::string key = gemm_case_name("cublaslt", p, s);
    if (cache.name != key) {
      cache = LtCaseCache{};  // free the previous case's operands first
      cache.buf = make_buffers(t.ab_elem, t.cd_elem, s, stream, ws_bytes);
      cache.ws = std::make_unique<DeviceBuffer<unsigned char>>(ws_bytes);
      cache.gemm = std::make_unique<LtGemm>(lt_handle(), p, s, ws_bytes);
      cache.gemm->autotune(cache.buf->a(0), cache.buf->b(0), cache.buf->d(0), cache.ws->data(), stream);
      cache.name = key;
    }
    GemmBuffers* buf = cache.buf.get();
    DeviceBuffer<unsigned char>& ws = *cache.ws;
    LtGemm& gemm = *cache.gemm;

    // Verify before timing (and again after, below): a wrong fast number is never reported.
    TRIAUDIT_CUDA(cudaMemsetAsync(buf->d(0), 0xFF, s.m * s.n * static_cast<std::uint64_t>(kernels::elem_bytes(t.cd_elem)), stream));
    gemm.run(buf->a(0), buf->b(0), buf->d(0), ws.data(), stream);
    const double tol = precision_info(p).tolerance;
    if (const GemmCheck c = check_gemm(*buf, 0, tol, stream); !c.ok()) throw VerificationError(c.describe());

    const int ops = gemms_per_region(s);
    StreamLatch latch;
    GpuTimer timer(stream);
    ClockWatch clocks = watch_clocks();
    int set = 0;
    for (auto _ : state) {
      auto region = timer.region(state, ops, &latch);
      for (int i = 0; i < ops; ++i) {
        gemm.run(buf->a(set), buf->b(set), buf->d(set), ws.data(), stream);
        set = (set + 1) % buf->sets();
      }
    }
    timer.check();
    clocks.finish(state);
    if (const GemmCheck c = check_gemm(*buf, 0, tol, stream); !c.ok()) throw VerificationError("after timing: " + c.describe());

    set_counters(state, p, s);
    state.counters["algo_id"] = gemm.algo_id();
    state.counters["candidates_timed"] = gemm.candidates_tried();
    state.counters["operand_sets"] = buf->sets();
    state.counters["gemms_per_region"] = ops;
    if (p == GemmPrecision::FP64) state.counters["fp64_tensor_cores"] = fp64_has_tensor_cores(device_cc()) ? 1 : 0;
    state.SetLabel(gemm.chosen_description());
  });
}

// The measured compute roof: every ceiling shape autotuned and timed; the best is reported.
void ceiling_case(benchmark::State& state, GemmPrecision p) {
  run_guarded(state, [&] {
    require_precision(p);
    const LtTypes t = lt_types(p);
    const std::size_t ws_bytes = lt_workspace_bytes(device_cc());
    Stream stream;
    DeviceBuffer<unsigned char> ws(ws_bytes);
    double best_rate = 0, best_time = 0;
    GemmShape best{};
    std::string best_algo;
    for (auto _ : state) {
      for (const GemmShape& s : ceiling_shapes()) {
        GemmShape shape = s;
        if (!precision_info(p).tn_only && p != GemmPrecision::BF16) shape.transa = false;
        std::unique_ptr<GemmBuffers> buf;
        try {
          buf = make_buffers(t.ab_elem, t.cd_elem, shape, stream, ws_bytes);
        } catch (const SkipCase&) {
          continue;  // this shape does not fit: the others still count
        }
        LtGemm gemm(lt_handle(), p, shape, ws_bytes);
        gemm.autotune(buf->a(0), buf->b(0), buf->d(0), ws.data(), stream);
        gemm.run(buf->a(0), buf->b(0), buf->d(0), ws.data(), stream);
        if (const GemmCheck c = check_gemm(*buf, 0, precision_info(p).tolerance, stream); !c.ok())
          throw VerificationError("m:" + std::to_string(shape.m) + " n:" + std::to_string(shape.n) + " k:" +
                                  std::to_string(shape.k) + ": " + c.describe());
        const double rate = gemm_flops(shape.m, shape.n, shape.k) / gemm.tuned_seconds();
        if (rate > best_rate) {
          best_rate = rate;
          best_time = gemm.tuned_seconds();
          best = shape;
          best_algo = gemm.chosen_description();
        }
      }
      if (best_rate == 0) throw SkipCase("no ceiling shape fits in device memory");
      state.SetIterationTime(best_time);
    }
    state.counters[precision_info(p).counter] =
        benchmark::Counter(gemm_flops(best.m, best.n, best.k), benchmark::Counter::kIsIterationInvariantRate);
    state.counters["best_m"] = static_cast<double>(best.m);
    state.counters["best_n"] = static_cast<double>(best.n);
    state.counters["best_k"] = static_cast<double>(best.k);
    state.SetLabel("best at m:" + std::to_string(best.m) + " n:" + std::to_string(best.n) + " k:" + std::to_string(best.k) +
                   ", " + best_algo);
  });
}

void ladder_case(benchmark::State& state, int level, GemmShape s) {
  run_guarded(state, [&] {
    int count = 0;
    const kernels::LadderLevel& info = kernels::ladder_levels(&count)[level];
    if (const std::string why = kernels::ladder_unsupported(level, s.m, s.n, s.k, device_cc()); !why.empty()) throw SkipCase(why);
    const GemmPrecision p = info.bf16 ? GemmPrecision::BF16 : GemmPrecision::FP32;
    const LtTypes t = lt_types(p);
    const std::size_t ws_bytes = lt_workspace_bytes(device_cc());
    Stream stream;
    auto buf = make_buffers(t.ab_elem, t.cd_elem, s, stream, ws_bytes);
    const double tol = precision_info(p).tolerance;

    kernels::ladder_gemm(level, buf->a(0), buf->b(0), buf->d(0), s.m, s.n, s.k, stream);
    TRIAUDIT_CUDA_LAUNCH();
    if (const GemmCheck c = check_gemm(*buf, 0, tol, stream); !c.ok()) throw VerificationError(c.describe());

    // cuBLASLt on the same shape and buffers: the yardstick.
    DeviceBuffer<unsigned char> ws(ws_bytes);
    LtGemm ref(lt_handle(), p, s, ws_bytes);
    ref.autotune(buf->a(0), buf->b(0), buf->d(0), ws.data(), stream);

    StreamLatch latch;
    GpuTimer timer(stream);
    ClockWatch clocks = watch_clocks();
    int set = 0;
    for (auto _ : state) {
      auto region = timer.region(state, 1, &latch);
      kernels::ladder_gemm(level, buf->a(set), buf->b(set), buf->d(set), s.m, s.n, s.k, stream);
      set = (set + 1) % buf->sets();
    }
    TRIAUDIT_CUDA_LAUNCH();
    timer.check();
    clocks.finish(state);
    set_counters(state, p, s);
    state.counters["ratio_to_cublas"] = ref.tuned_seconds() / timer.seconds_per_op();
    state.counters["level"] = level;
    // Resident blocks per SM as the occupancy calculator gives them for this launch (after the
    // launcher set its shared-memory attributes): level 3 and 4 are written for 2.
    const kernels::LadderLaunch launch = kernels::ladder_launch(level, static_cast<int>(s.m), static_cast<int>(s.n));
    int resident = 0;
    TRIAUDIT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, launch.kernel, static_cast<int>(launch.threads),
                                                               static_cast<std::size_t>(launch.smem_bytes)));
    state.counters["occupancy_blocks_per_sm"] = resident;
    state.counters["blocks_per_sm_intended"] = launch.min_blocks_per_sm;
    state.SetLabel(std::string("level ") + std::to_string(level) + ": " + info.idea);
  });
}

void register_gemm() {
  auto wanted = [](const char* f) {
    return std::find(g_opt.families.begin(), g_opt.families.end(), f) != g_opt.families.end();
  };
  auto add_lt = [](GemmPrecision p, const GemmShape& s) {
    register_case(gemm_case_name("cublaslt", p, s), [=](benchmark::State& st) { cublaslt_case(st, p, s); });
  };
  for (const PrecisionInfo& info : gemm_precisions()) {
    if (wanted("square"))
      for (const GemmShape& s : square_shapes(g_opt.max_square))
        if (s.transa || !info.tn_only) add_lt(info.precision, s);
  }
  if (wanted("llm"))
    for (GemmPrecision p : {GemmPrecision::BF16, GemmPrecision::FP8})
      for (const GemmShape& s : llm_shapes()) add_lt(p, s);
  if (wanted("misaligned"))
    for (GemmPrecision p : {GemmPrecision::BF16, GemmPrecision::TF32})
      for (const GemmShape& s : misaligned_shapes()) add_lt(p, s);
  if (wanted("ceiling"))
    for (const PrecisionInfo& info : gemm_precisions()) {
      const std::string name = BenchName("gemm", "ceiling", info.name).arg("shapes", ceiling_shapes().size()).str();
      const GemmPrecision p = info.precision;
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { ceiling_case(st, p); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(1);  // one pass over the sweep: each shape is already timed 5 times per candidate
    }
  if (wanted("ladder")) {
    int count = 0;
    const kernels::LadderLevel* levels = kernels::ladder_levels(&count);
    for (int l = 0; l < count; ++l)
      for (std::uint64_t d : {1024ULL, 4096ULL, 8192ULL}) {
        if (l <= 1 && d > 4096) continue;  // CUDA-core levels: minutes per iteration beyond this
        const GemmShape s{d, d, d, "square", true};
        const std::string name = gemm_case_name(std::string("ladder_l") + std::to_string(l) + "_" + levels[l].name,
                                                levels[l].bf16 ? GemmPrecision::BF16 : GemmPrecision::FP32, s);
        register_case(name, [=](benchmark::State& st) { ladder_case(st, l, s); });
      }
  }
}

// The cuBLASLt library actually loaded (the context's cublas_version is the headers').
void record_library_version() {
  const std::size_t v = cublasLtGetVersion();
  benchmark::AddCustomContext("cublaslt_runtime_version", std::to_string(v / 10000) + "." +
                                                              std::to_string(v / 100 % 100) + "." + std::to_string(v % 100));
}

void add_flags(FlagSet& f) {
  f.add_size("max-square", &g_opt.max_square, "largest square dimension (a power of two from 256)");
  f.add_list("families", &g_opt.families, {"square", "llm", "misaligned", "ceiling", "ladder"}, "shape families");
}

}  // namespace
}  // namespace triaudit

int main(int argc, char** argv) {
  using namespace triaudit;
  const SuiteSpec spec{"triaudit_gemm",
                       "GEMM throughput per precision (cuBLASLt, autotuned) and a hand-written Tensor Core ladder",
                       add_flags, register_gemm, record_library_version, false};
  return suite_main(argc, argv, spec);
}
