// triaudit_gemm: the compute corner.
//
//   gemm/cublaslt/<precision>/layout:<nn|tn>/m:M/n:N/k:K   cuBLASLt, the fastest of the heuristic's
//                                                           candidates (label: which one won)
//   gemm/cublaslt/<precision>/llm:<model>-<layer>/tokens:T  an LLM linear layer as PyTorch runs it
//   gemm/ceiling/<precision>/burst                          best FLOP/s over a sweep of large TN shapes
//                                                           (--ceiling-shapes=mamf: mamf-finder's grid),
//                                                           right after a warm-up: the compute roof;
//                                                           flops_best_region beside the mean
//   gemm/ceiling/<precision>/sustained                      8192^3 back to back for --sustained-s:
//                                                           the median over the window (what the card holds)
//   gemm/ladder_l<L>_<name>/<fp32|bf16>/layout:tn/...       hand-written kernels, with their ratio to
//                                                           cuBLASLt timed the same way (ratio_to_cublas)
// Every figure is timed through the same path (measure.hpp): a warm-up of the case's own GEMMs,
// then held regions of GEMMs on rotated operand sets (>= 3x L2). Counters: flops (ops for INT8:
// 2*M*N*K per GEMM, a rate), arithmetic_intensity (FLOPs / minimum bytes), algo_id, m, n, k.
// D is checked against an FP64 reference (gemm_bound.hpp: every 64 x 64 block, as many per block as a
// k-tile lost in one CTA needs to be caught, and 1020 elements at random; each element against a bound
// that grows with K as the declared arithmetic's error does, and all of them by the mean square of their
// errors, so a cheaper arithmetic fails), D poisoned before each checked launch, before and after timing;
// inputs are random in [-1, 1]. A shape whose GEMM would run longer than --max-op-seconds (or
// than a display watchdog allows) is skipped with the estimate, before it is launched.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "cublaslt_gemm.hpp"
#include "gemm/ladder/ladder.cuh"
#include "gemm_check.hpp"
#include "measure.hpp"
#include "names.hpp"
#include "suite.hpp"

namespace triaudit {
namespace {

struct GemmOptions {
  long long max_square = 16384;
  std::vector<std::string> families = {"square", "llm", "misaligned", "ceiling", "ladder"};
  double sustained_s = 10.0;
  double max_op_seconds = 1.0;
  std::string ceiling_shapes = "triaudit";  // or "mamf": mamf-finder's documented grid
} g_opt;

// The shape the sustained ceiling holds back to back (its description names it for the time model).
const GemmShape kSustainedShape{8192, 8192, 8192, "ceiling", true};

std::vector<GemmShape> sweep_shapes() {
  return g_opt.ceiling_shapes == "mamf" ? mamf_ceiling_shapes() : ceiling_shapes();
}

int device_cc() { return device().description.cc_major * 10 + device().description.cc_minor; }

void require_precision(GemmPrecision p) {
  std::string why;
  if (!precision_supported(p, device_cc(), &why)) throw SkipCase(why);
}

std::unique_ptr<GemmBuffers> make_buffers(kernels::ElemType ab, kernels::ElemType cd, const GemmShape& s,
                                          Stream& stream, std::size_t extra_bytes) {
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
  state.counters[info.counter] =
      benchmark::Counter(gemm_flops(s.m, s.n, s.k), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["arithmetic_intensity"] = gemm_intensity(s.m, s.n, s.k, info.a_bytes, info.c_bytes);
  state.counters["m"] = static_cast<double>(s.m);  // LLM cases are named by layer and tokens: the shape is here
  state.counters["n"] = static_cast<double>(s.n);
  state.counters["k"] = static_cast<double>(s.k);
}

// What the check after timing saw: the errors' mean square against the declared arithmetic's, the
// samples per 64 x 64 block, and how likely a k-tile lost in one CTA is caught (said in the label
// where it is below 0.99).
void report_check(benchmark::State& state, const GemmCheck& c) {
  state.counters["verify_mean_square_ratio"] = c.mean_square_ratio;
  state.counters["verify_samples_per_block"] = c.sampling.per_block;
  state.counters["verify_lost_tile_catch"] = c.sampling.catch_probability;
  append_label(state, c.sampling_note());
}

const LtHandle& lt_handle() {
  static LtHandle h;
  return h;
}

// How long one GEMM of `s` would run, from a probe of the same precision at up to 2048 per
// dimension (its rate is a lower bound for larger shapes, so the estimate errs long). Probes are
// cached per precision and layout. Used before the first launch of a shape: a desktop card's
// display watchdog kills a kernel that runs too long, and the CUDA context with it.
double estimate_gemm_seconds(GemmPrecision p, const GemmShape& s) {
  static std::map<std::pair<int, bool>, double> rate;  // FLOP/s
  const auto key = std::make_pair(static_cast<int>(p), s.transa);
  if (!rate.count(key)) {
    const GemmShape probe{2048, 2048, 2048, "probe", s.transa};
    const LtTypes t = lt_types(p);
    Stream stream;
    const std::size_t ws_bytes = lt_workspace_bytes(device_cc());
    GemmBuffers buf(t.ab_elem, t.cd_elem, probe, 1, stream);
    DeviceBuffer<unsigned char> ws(ws_bytes);
    LtGemm g(lt_handle(), p, probe, ws_bytes);
    g.autotune(buf, ws.data(), stream, 1, 1, AutotuneEffort{0.0, 0.0, 1});  // one candidate, no warm-up: a rough rate
    Event start, stop;
    g.run(buf.a(0), buf.b(0), buf.d(0), ws.data(), stream);
    start.record(stream);
    for (int i = 0; i < 3; ++i) g.run(buf.a(0), buf.b(0), buf.d(0), ws.data(), stream);
    stop.record(stream);
    stop.synchronize();
    rate[key] = 3 * gemm_flops(probe.m, probe.n, probe.k) / Event::seconds_between(start, stop);
  }
  return gemm_flops(s.m, s.n, s.k) / rate[key];
}

// The longest single GEMM a case may launch: --max-op-seconds, and a quarter second under a
// display watchdog (cudaDevAttrKernelExecTimeout: the OS kills kernels after about 2 s).
double op_time_limit() {
  int watchdog = 0;
  TRIAUDIT_CUDA(cudaDeviceGetAttribute(&watchdog, cudaDevAttrKernelExecTimeout, device().description.ordinal));
  return watchdog ? std::min(g_opt.max_op_seconds, 0.25) : g_opt.max_op_seconds;
}

void require_short_enough(double estimate_s, const std::string& what) {
  const double limit = op_time_limit();
  if (estimate_s > limit) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s would take about %.2f s per GEMM on this card (from a 2048^3 probe), above the "
                  "%.2f s limit per launch (--max-op-seconds%s)",
                  what.c_str(), estimate_s, limit,
                  limit < g_opt.max_op_seconds ? "; a display watchdog is active" : "");
    throw SkipCase(buf);
  }
}

// The loop's work: GEMMs for >= 0.5 ms per region (gemms_per_region, from the shape's estimated
// time), each on the next operand set.
DeviceWork gemm_work(cudaStream_t stream, double seconds_per_gemm, const std::function<void(int)>& run_on_set, int sets,
                     std::shared_ptr<int> set) {
  DeviceWork work;
  work.stream = stream;
  work.ops = gemms_per_region(seconds_per_gemm);
  work.queue_entries_per_op = 4;  // cuBLASLt may add a memset and split-K/stream-K kernels
  work.enqueue_op = [run_on_set, sets, set] {
    run_on_set(*set);
    *set = (*set + 1) % sets;
  };
  return work;
}

// Google Benchmark calls a case's body once per repetition: the operands, the workspace and the
// tuned algorithm of the case are kept (KeptForCase), so the candidates are timed once per case.
struct LtCaseState {
  std::unique_ptr<GemmBuffers> buf;
  std::unique_ptr<DeviceBuffer<unsigned char>> ws;
  std::unique_ptr<LtGemm> gemm;
};

void cublaslt_case(benchmark::State& state, GemmPrecision p, GemmShape s) {
  run_guarded(state, [&] {
    require_precision(p);
    const LtTypes t = lt_types(p);
    const std::size_t ws_bytes = lt_workspace_bytes(device_cc());
    Stream stream;
    static KeptForCase<LtCaseState> kept;
    LtCaseState& cache = kept.get(gemm_case_name("cublaslt", p, s), [&] {
      require_short_enough(estimate_gemm_seconds(p, s), "this shape");
      LtCaseState made;
      made.buf = make_buffers(t.ab_elem, t.cd_elem, s, stream, ws_bytes);
      made.ws = std::make_unique<DeviceBuffer<unsigned char>>(ws_bytes);
      made.gemm = std::make_unique<LtGemm>(lt_handle(), p, s, ws_bytes);
      made.gemm->autotune(*made.buf, made.ws->data(), stream, gemms_per_region(estimate_gemm_seconds(p, s)));
      return made;
    });
    GemmBuffers* buf = cache.buf.get();
    DeviceBuffer<unsigned char>& ws = *cache.ws;
    LtGemm& gemm = *cache.gemm;

    // Verify before timing (and again after, below): a wrong fast number is never reported.
    const GemmBound& bound = precision_info(p).bound;
    const auto once = [&] { gemm.run(buf->a(0), buf->b(0), buf->d(0), ws.data(), stream); };
    if (const GemmCheck c = launch_and_check(*buf, 0, bound, once, stream); !c.ok())
      throw VerificationError(c.describe());

    const DeviceWork work = gemm_work(
        stream, gemm.tuned_seconds(), [&](int i) { gemm.run(buf->a(i), buf->b(i), buf->d(i), ws.data(), stream); },
        buf->sets(), std::make_shared<int>(0));
    const LoopResult r = measure_device(state, work);
    const GemmCheck after = launch_and_check(*buf, 0, bound, once, stream);
    if (!after.ok()) throw VerificationError("after timing: " + after.describe());

    set_counters(state, p, s);
    report_check(state, after);
    state.counters["algo_id"] = gemm.algo_id();
    state.counters["candidates_timed"] = gemm.candidates_tried();
    state.counters["operand_sets"] = buf->sets();
    if (p == GemmPrecision::FP64) state.counters["fp64_tensor_cores"] = fp64_has_tensor_cores(device_cc()) ? 1 : 0;
    append_label(state, gemm.chosen_description());
    report_loop(state, r, "flops_per_joule", gemm_flops(s.m, s.n, s.k));
  });
}

// One shape of the ceiling: its buffers and tuned GEMM, verified before it is timed.
struct CeilingShape {
  GemmShape shape;
  std::unique_ptr<GemmBuffers> buf;
  std::unique_ptr<LtGemm> gemm;
};

// One GEMM of a ceiling shape on operand set 0, for launch_and_check.
std::function<void()> ceiling_once(const CeilingShape& c, DeviceBuffer<unsigned char>& ws, Stream& stream) {
  return [&c, &ws, &stream] { c.gemm->run(c.buf->a(0), c.buf->b(0), c.buf->d(0), ws.data(), stream); };
}

// `device_warm`: the previous shape of the sweep just ran, so the selection needs no warm-up of its own.
CeilingShape prepare_ceiling_shape(GemmPrecision p, GemmShape shape, DeviceBuffer<unsigned char>& ws, Stream& stream,
                                   bool device_warm = false) {
  const LtTypes t = lt_types(p);
  CeilingShape c{shape, nullptr, nullptr};
  require_short_enough(estimate_gemm_seconds(p, shape), "m:" + std::to_string(shape.m) + " n:" +
                                                            std::to_string(shape.n) + " k:" + std::to_string(shape.k));
  c.buf = make_buffers(t.ab_elem, t.cd_elem, shape, stream, ws.bytes());
  c.gemm = std::make_unique<LtGemm>(lt_handle(), p, shape, ws.bytes());
  AutotuneEffort effort;
  if (device_warm) effort.warmup_s = 0.0;
  c.gemm->autotune(*c.buf, ws.data(), stream, gemms_per_region(estimate_gemm_seconds(p, shape)), 8, effort);
  if (const GemmCheck chk = launch_and_check(*c.buf, 0, precision_info(p).bound, ceiling_once(c, ws, stream), stream);
      !chk.ok())
    throw VerificationError("m:" + std::to_string(shape.m) + " n:" + std::to_string(shape.n) +
                            " k:" + std::to_string(shape.k) + ": " + chk.describe());
  return c;
}

// Burst: the first call of the case times every ceiling shape through the measured path (the
// warm-up runs once, before the first shape; the others follow back to back), each with all the
// free memory to itself, then prepares the best one again and keeps it; the repetitions that
// follow time that shape again. The best is the compute roof.
void ceiling_burst_case(benchmark::State& state, GemmPrecision p) {
  run_guarded(state, [&] {
    require_precision(p);
    static GemmPrecision kept_precision{};
    static std::unique_ptr<CeilingShape> kept;
    static std::unique_ptr<DeviceBuffer<unsigned char>> kept_ws;
    Stream stream;
    LoopResult best_loop;
    std::string skipped;
    if (!kept || kept_precision != p) {
      kept.reset();
      kept_ws = std::make_unique<DeviceBuffer<unsigned char>>(lt_workspace_bytes(device_cc()));
      double best_rate = 0;
      std::optional<GemmShape> best;
      bool first = true;
      for (const GemmShape& s : sweep_shapes()) {
        // Each shape gets the whole free memory (its rotation sets): nothing of the others is kept.
        auto c = std::make_unique<CeilingShape>();
        try {
          *c = prepare_ceiling_shape(p, s, *kept_ws, stream, !first);
        } catch (const SkipCase& e) {
          skipped = e.what();
          continue;  // this shape does not fit or is too long here: the others still count
        }
        DeviceWork work = gemm_work(
            stream, c->gemm->tuned_seconds(),
            [&](int i) { c->gemm->run(c->buf->a(i), c->buf->b(i), c->buf->d(i), kept_ws->data(), stream); },
            c->buf->sets(), std::make_shared<int>(0));
        // The sweep's windows are not the case's figure: they stay out of its energy account.
        const LoopResult r = time_device(work, 0.0, first ? -1.0 : 0.0, false);
        first = false;
        const double rate = gemm_flops(c->shape.m, c->shape.n, c->shape.k) / r.seconds_per_op;
        if (rate > best_rate) {
          best_rate = rate;
          best = s;
        }
      }
      if (!best) throw SkipCase("no ceiling shape could run here" + (skipped.empty() ? "" : ": " + skipped));
      kept = std::make_unique<CeilingShape>(prepare_ceiling_shape(p, *best, *kept_ws, stream, true));
      kept_precision = p;
    }
    CeilingShape& c = *kept;
    DeviceWork work = gemm_work(
        stream, c.gemm->tuned_seconds(),
        [&](int i) { c.gemm->run(c.buf->a(i), c.buf->b(i), c.buf->d(i), kept_ws->data(), stream); }, c.buf->sets(),
        std::make_shared<int>(0));
    best_loop = measure_device(state, work);
    const GemmCheck after =
        launch_and_check(*c.buf, 0, precision_info(p).bound, ceiling_once(c, *kept_ws, stream), stream);
    if (!after.ok()) throw VerificationError("after timing: " + after.describe());
    set_counters(state, p, c.shape);
    report_check(state, after);
    state.counters["best_m"] = static_cast<double>(c.shape.m);
    state.counters["best_n"] = static_cast<double>(c.shape.n);
    state.counters["best_k"] = static_cast<double>(c.shape.k);
    // The best region beside the mean: mamf-finder reports a best, triaudit's figure is the mean.
    if (best_loop.best_seconds_per_op > 0)
      state.counters["flops_best_region"] = gemm_flops(c.shape.m, c.shape.n, c.shape.k) / best_loop.best_seconds_per_op;
    append_label(state, "burst: the best of " + std::to_string(sweep_shapes().size()) +
                            (g_opt.ceiling_shapes == "mamf" ? " mamf-finder grid" : "") +
                            " shapes (TN), m:" + std::to_string(c.shape.m) + " n:" + std::to_string(c.shape.n) +
                            " k:" + std::to_string(c.shape.k) + ", " + c.gemm->chosen_description());
    report_loop(state, best_loop, "flops_per_joule", gemm_flops(c.shape.m, c.shape.n, c.shape.k));
  });
}

// Sustained: 8192^3 back to back for --sustained-s after the warm-up, the median GEMM time over
// the window, with the clock, power and temperature seen (mamf-finder's sustained figure). The
// shape is prepared and its algorithm chosen on the case's first call only: every repetition times
// the same algorithm, and the repetitions follow each other with no selection between them.
struct SustainedShape {
  std::unique_ptr<DeviceBuffer<unsigned char>> ws;
  CeilingShape c;
};

void ceiling_sustained_case(benchmark::State& state, GemmPrecision p) {
  run_guarded(state, [&] {
    require_precision(p);
    Stream stream;
    static KeptForCase<SustainedShape> kept;
    SustainedShape& k = kept.get(precision_info(p).name, [&] {
      SustainedShape made;
      made.ws = std::make_unique<DeviceBuffer<unsigned char>>(lt_workspace_bytes(device_cc()));
      made.c = prepare_ceiling_shape(p, kSustainedShape, *made.ws, stream);
      return made;
    });
    CeilingShape& c = k.c;
    DeviceBuffer<unsigned char>& ws = *k.ws;
    DeviceWork work = gemm_work(
        stream, c.gemm->tuned_seconds(),
        [&](int i) { c.gemm->run(c.buf->a(i), c.buf->b(i), c.buf->d(i), ws.data(), stream); }, c.buf->sets(),
        std::make_shared<int>(0));
    const LoopResult r = measure_device_sustained(state, work, g_opt.sustained_s);
    const GemmCheck after = launch_and_check(*c.buf, 0, precision_info(p).bound, ceiling_once(c, ws, stream), stream);
    if (!after.ok()) throw VerificationError("after the window: " + after.describe());
    set_counters(state, p, c.shape);
    report_check(state, after);
    report_sustained(state, r);
    append_label(state, c.gemm->chosen_description() + " (chosen once, on the case's first call)");
    report_loop(state, r, "flops_per_joule", gemm_flops(c.shape.m, c.shape.n, c.shape.k));
  });
}

void ladder_case(benchmark::State& state, int level, GemmShape s) {
  run_guarded(state, [&] {
    int count = 0;
    const kernels::LadderLevel& info = kernels::ladder_levels(&count)[level];
    if (const std::string why = kernels::ladder_unsupported(level, s.m, s.n, s.k, device_cc()); !why.empty())
      throw SkipCase(why);
    if (const std::string why = kernels::ladder_launch_check(level); !why.empty()) throw Error(why);
    const GemmPrecision p = info.bf16 ? GemmPrecision::BF16 : GemmPrecision::FP32;
    const LtTypes t = lt_types(p);
    const std::size_t ws_bytes = lt_workspace_bytes(device_cc());
    Stream stream;
    // The ladder's slowest levels (0-1 on CUDA cores) are estimated from cuBLASLt's rate at a
    // hundredth of it: an estimate that errs long, so the watchdog never sees a ladder kernel.
    require_short_enough(estimate_gemm_seconds(p, s) * (level <= 1 ? 100.0 : 10.0),
                         "level " + std::to_string(level) + " at this shape");
    auto buf = make_buffers(t.ab_elem, t.cd_elem, s, stream, ws_bytes);
    const GemmBound& bound = precision_info(p).bound;
    const auto once = [&] { kernels::ladder_gemm(level, buf->a(0), buf->b(0), buf->d(0), s.m, s.n, s.k, stream); };
    // One sample in every block the level's CTA writes (level 0: 128 rows of one column), so a CTA
    // that wrote nothing or lost a k-slice is always among the samples.
    const kernels::LadderLaunch cta = kernels::ladder_launch(level, static_cast<int>(s.m), static_cast<int>(s.n));
    const SampleBlock block{std::min<std::uint64_t>(kGemmSampleBlock, cta.tile_m ? cta.tile_m : kGemmSampleBlock),
                            std::min<std::uint64_t>(kGemmSampleBlock, cta.tile_n ? cta.tile_n : kGemmSampleBlock)};
    if (const GemmCheck c = launch_and_check(*buf, 0, bound, once, stream, block); !c.ok())
      throw VerificationError(c.describe());

    // cuBLASLt on the same shape and buffers, timed the same way: the yardstick.
    DeviceBuffer<unsigned char> ws(ws_bytes);
    LtGemm ref(lt_handle(), p, s, ws_bytes);
    ref.autotune(*buf, ws.data(), stream, gemms_per_region(estimate_gemm_seconds(p, s)));

    const DeviceWork work = gemm_work(
        stream, ref.tuned_seconds(),
        [&](int i) { kernels::ladder_gemm(level, buf->a(i), buf->b(i), buf->d(i), s.m, s.n, s.k, stream); },
        buf->sets(), std::make_shared<int>(0));
    const DeviceWork ref_work = gemm_work(
        stream, ref.tuned_seconds(), [&](int i) { ref.run(buf->a(i), buf->b(i), buf->d(i), ws.data(), stream); },
        buf->sets(), std::make_shared<int>(0));
    LoopResult r, r_ref;
    for (auto _ : state) {
      r = time_device(work);
      r_ref = time_device(ref_work, 0.0, -1.0, false);  // cuBLASLt's energy is not the level's
      state.SetIterationTime(r.seconds_per_op);
    }
    TRIAUDIT_CUDA_LAUNCH();
    // The timed loop wrote D with the ladder and cuBLASLt alternately: poisoned first, so what is
    // checked is what the ladder wrote now, not cuBLASLt's correct result.
    const GemmCheck after = launch_and_check(*buf, 0, bound, once, stream, block);
    if (!after.ok()) throw VerificationError("after timing: " + after.describe());
    set_counters(state, p, s);
    report_check(state, after);
    state.counters["ratio_to_cublas"] = r_ref.seconds_per_op / r.seconds_per_op;
    state.counters["cublas_seconds_per_op"] = r_ref.seconds_per_op;
    state.counters["level"] = level;
    // Resident blocks per SM as the occupancy calculator gives them for this launch (after the
    // launcher set its shared-memory attributes): level 3 and 4 are written for 2.
    const kernels::LadderLaunch launch = kernels::ladder_launch(level, static_cast<int>(s.m), static_cast<int>(s.n));
    int resident = 0;
    TRIAUDIT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &resident, launch.kernel, static_cast<int>(launch.threads), static_cast<std::size_t>(launch.smem_bytes)));
    state.counters["occupancy_blocks_per_sm"] = resident;
    state.counters["blocks_per_sm_intended"] = launch.min_blocks_per_sm;
    append_label(state, std::string("level ") + std::to_string(level) + ": " + info.idea);
    report_loop(state, r, "flops_per_joule", gemm_flops(s.m, s.n, s.k));
  });
}

// A GEMM's m, n, k as axes of its description: an LLM layer's name gives its layer and tokens only.
std::vector<std::pair<std::string, std::string>> shape_axes(const GemmShape& s);
std::vector<std::pair<std::string, std::string>> sustained_axes() {
  auto axes = shape_axes(kSustainedShape);
  axes.insert(axes.begin(), {"mode", "sustained"});
  return axes;
}

std::vector<std::pair<std::string, std::string>> shape_axes(const GemmShape& s) {
  return {{"m", std::to_string(s.m)}, {"n", std::to_string(s.n)}, {"k", std::to_string(s.k)}};
}

void register_gemm() {
  auto wanted = [](const char* f) {
    return std::find(g_opt.families.begin(), g_opt.families.end(), f) != g_opt.families.end();
  };
  // The misaligned family's aligned neighbours (4096, 8192 nn) are square shapes too: one case each,
  // or their repetitions would share a name and the report could only call them a conflict.
  auto registered = std::make_shared<std::set<std::string>>();
  auto add_lt = [registered](GemmPrecision p, const GemmShape& s) {
    const std::string name = gemm_case_name("cublaslt", p, s);
    if (!registered->insert(name).second) return;
    register_case(name, [=](benchmark::State& st) { cublaslt_case(st, p, s); });
    describe_case(name, {"", "", shape_axes(s)});
  };
  const bool power_of_two = g_opt.max_square > 0 && (g_opt.max_square & (g_opt.max_square - 1)) == 0;
  if (!power_of_two || g_opt.max_square < 256 || g_opt.max_square > 65536)
    throw std::invalid_argument("--max-square=" + std::to_string(g_opt.max_square) +
                                ": the largest square dimension must be a power of two from 256 to 65536");
  for (const PrecisionInfo& info : gemm_precisions()) {
    if (wanted("square"))
      for (const GemmShape& s : square_shapes(static_cast<std::uint64_t>(g_opt.max_square)))
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
      const GemmPrecision p = info.precision;
      const std::string base = BenchName("gemm", "ceiling", info.name).str();
      register_case(base + "/burst", [=](benchmark::State& st) { ceiling_burst_case(st, p); });
      // The shapes the burst sweep tries (the time model reads them) and the headline it stands for.
      std::string shapes;
      for (const GemmShape& s : sweep_shapes())
        shapes +=
            (shapes.empty() ? "" : ",") + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
      describe_case(base + "/burst", {"", std::string(info.name) + "/burst", {{"mode", "burst"}, {"shapes", shapes}}});
      if (g_opt.sustained_s > 0) {
        register_case(base + "/sustained", [=](benchmark::State& st) { ceiling_sustained_case(st, p); });
        describe_case(base + "/sustained", {"", std::string(info.name) + "/sustained", sustained_axes()});
      }
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
        describe_case(name, {"", "", shape_axes(s)});
      }
  }
}

// The cuBLASLt library actually loaded (the context's cublas_version is the headers').
void record_library_version() {
  const std::size_t v = cublasLtGetVersion();
  benchmark::AddCustomContext(
      "cublaslt_runtime_version",
      std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100));
}

void add_flags(FlagSet& f) {
  f.add_int("max-square", &g_opt.max_square, 256, 65536,
            "largest square dimension M = N = K (a power of two from 256 to 65536)");
  f.add_list("families", &g_opt.families, {"square", "llm", "misaligned", "ceiling", "ladder"}, "shape families");
  f.add_double("sustained-s", &g_opt.sustained_s, 0.0, 3600.0,
               "window of the sustained ceiling cases (0: no sustained case)");
  f.add_choice(
      "ceiling-shapes", &g_opt.ceiling_shapes, {"triaudit", "mamf"},
      "the burst ceiling's sweep: triaudit's 12 shapes, or mamf-finder's grid (its M 256..20224 step 256, N = K = "
      "4096: cuBLAS's m = 4096, n = M)");
  f.add_double("max-op-seconds", &g_opt.max_op_seconds, 0.001, 60.0,
               "skip shapes whose single GEMM is estimated to run longer (0.25 s at most under a display watchdog)");
}

}  // namespace
}  // namespace triaudit

int main(int argc, char** argv) {
  using namespace triaudit;
  const SuiteSpec spec{"triaudit_gemm",
                       "GEMM throughput per precision (cuBLASLt, autotuned) and a hand-written Tensor Core ladder",
                       add_flags,
                       register_gemm,
                       record_library_version,
                       false};
  return suite_main(argc, argv, spec);
}
