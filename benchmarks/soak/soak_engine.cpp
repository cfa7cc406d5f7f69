#include "soak_engine.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <mutex>
#include <sstream>
#include <thread>

#include "common/fill.cuh"
#include "common/random_values.hpp"
#include "cuda_check.hpp"
#include "cuda_raii.hpp"
#include "error.hpp"
#include "gemm/ladder/ladder.cuh"
#include "gemm_catalogue.hpp"
#include "gemm_check.hpp"
#include "soak/tile_hash.cuh"
#include "soak/tile_hash_reference.hpp"
#include "stream/stream_kernels.cuh"
#include "stream/stream_ops.hpp"
#include "suite.hpp"

namespace triaudit {
namespace {

using kernels::HashVerdict;

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// The copies' patterns (pattern_word): the two H2D and P2P sources, taken in turn, and the D2H source.
constexpr std::uint64_t kPatternSeeds[3] = {0x50a4, 0x50a5, 0x50a6};
constexpr std::uint64_t kGemmSeed = 1000;  // GemmBuffers' seeds for set 0: A 1000, B 1001
constexpr int kGemmsPerCycle = 4;
constexpr unsigned kQuarantineSlots = 4;
constexpr double kD2hCheckPeriodS = 5.0;
constexpr int kComputeSlots = 256, kCopySlots = 8;

std::uint32_t float_bits(float v) {
  std::uint32_t b = 0;
  std::memcpy(&b, &v, 4);
  return b;
}

double bf16_value(std::uint16_t bits) {
  const std::uint32_t w = static_cast<std::uint32_t>(bits) << 16;
  float f = 0;
  std::memcpy(&f, &w, 4);
  return f;
}

// One stream and the operations queued on it, oldest first. Each operation owns a slot (its
// events and its verdict) until it is collected; slots are reused in turn.
struct Lane {
  struct Op {
    Workload w;
    std::uint64_t seq;
    int variant;
    int slot;
  };
  Stream stream;
  int first_slot = 0, slots = 0, next = 0;
  std::size_t max_in_flight = 2;
  std::deque<Op> queue;
  bool room() const { return queue.size() < max_in_flight && static_cast<int>(queue.size()) < slots; }
  int take_slot() {
    const int s = first_slot + next;
    next = (next + 1) % slots;
    return s;
  }
};

// Device copy of a host table of tile hashes.
DeviceBuffer<std::uint64_t> to_device(const std::vector<std::uint64_t>& v) {
  DeviceBuffer<std::uint64_t> d(v.size());
  TRIAUDIT_CUDA(cudaMemcpy(d.data(), v.data(), v.size() * 8, cudaMemcpyHostToDevice));
  return d;
}

}  // namespace

struct SoakEngine::Impl {
  SoakPlan plan;
  int ordinal = 0, peer = -1;
  EngineSetup setup;
  GemmShape shape{};
  HashLayout triad_layout, pattern_layout;
  std::uint64_t words = 0;

  // GEMM: A, B, D; the first output (the reference, kept for the diagnosis); its tile hashes.
  std::unique_ptr<GemmBuffers> gemm;
  DeviceBuffer<unsigned char> golden_d;
  DeviceBuffer<std::uint64_t> gemm_ref;
  DeviceBuffer<unsigned char> q_data;
  DeviceBuffer<kernels::QuarantineEntry> q_entries;
  DeviceBuffer<unsigned> q_used;
  kernels::QuarantineView quarantine;
  // Triad: a, b, c and the expected tile hashes of its two outputs.
  DeviceBuffer<float> ta, tb, tc;
  kernels::StreamLaunch triad_launch;
  std::vector<std::uint64_t> triad_ref_host[2];
  DeviceBuffer<std::uint64_t> triad_ref[2];
  // Copies: the patterns' tile hashes, host and device.
  std::vector<std::uint64_t> pattern_ref_host[3];
  DeviceBuffer<std::uint64_t> pattern_ref[3];
  PinnedBuffer<std::uint32_t> h2d_src[2];
  DeviceBuffer<std::uint32_t> h2d_dst, d2h_src, p2p_src[2], p2p_back;
  PinnedBuffer<std::uint32_t> d2h_dst[2];
  std::vector<std::uint32_t> d2h_expected;
  void* peer_buf = nullptr;  // on the peer, freed there
  // The operations' verdicts (device, and pinned host copies) and events, by slot.
  DeviceBuffer<HashVerdict> verdicts;
  PinnedBuffer<HashVerdict> verdicts_host;
  std::vector<Event> starts, ends, dones;
  Lane compute, h2d, d2h, p2p;
  std::uint64_t seq[kWorkloads] = {};
  int cycle_pos = 0, triads_now = 1;
  double gemm_s = 0, triad_s = 0;  // recent device seconds per operation (for the mix)
  double last_d2h_check = 0;

  mutable std::mutex mutex;  // guards pending and error
  std::array<WorkloadTally, kWorkloads> pending;
  std::string error;
  std::atomic<bool> stopping{false};
  std::thread thread;

  ~Impl() {
    if (peer_buf != nullptr) {
      DeviceGuard g(peer);
      (void)cudaFree(peer_buf);
    }
  }

  int elem_slot_bytes() const {
    return static_cast<int>(setup.gemm_layout.tile_rows * setup.gemm_layout.tile_cols * 2);
  }

  // Zero the verdict, hash `data` against `expected`, copy the verdict to the host, mark done.
  void check_output(const void* data, const HashLayout& l, const std::uint64_t* expected, int slot, std::uint64_t item,
                    bool keep_tiles, cudaStream_t s) {
    TRIAUDIT_CUDA(cudaMemsetAsync(verdicts.data() + slot, 0, sizeof(HashVerdict), s));
    kernels::hash_tiles(data, l, expected, nullptr, verdicts.data() + slot,
                        keep_tiles ? quarantine : kernels::QuarantineView{}, item, s);
    TRIAUDIT_CUDA_LAUNCH();
    TRIAUDIT_CUDA(cudaMemcpyAsync(verdicts_host.data() + slot, verdicts.data() + slot, sizeof(HashVerdict),
                                  cudaMemcpyDeviceToHost, s));
    dones[static_cast<std::size_t>(slot)].record(s);
  }

  // One checked operation, synchronously, for the setup: how many tiles differ.
  unsigned check_now(const void* data, const HashLayout& l, const std::uint64_t* expected, cudaStream_t s) {
    check_output(data, l, expected, 0, 0, false, s);
    TRIAUDIT_CUDA(cudaStreamSynchronize(s));
    return verdicts_host[0].differing;
  }

  void run_gemm(cudaStream_t s) const {
    kernels::ladder_gemm(plan.gemm_level, gemm->a(0), gemm->b(0), gemm->d(0), shape.m, shape.n, shape.k, s);
    TRIAUDIT_CUDA_LAUNCH();
  }

  kernels::StreamArrays triad_arrays(int variant) const {
    // variant 0: a = b + s*c; variant 1: a = c + s*b (the kernel reads arrays.b and arrays.c).
    return variant == 0 ? kernels::StreamArrays{ta.data(), tb.data(), tc.data(), nullptr, nullptr}
                        : kernels::StreamArrays{ta.data(), tc.data(), tb.data(), nullptr, nullptr};
  }

  void p2p_round_trip(int variant, cudaStream_t s) const {
    TRIAUDIT_CUDA(cudaMemcpyPeerAsync(peer_buf, peer, p2p_src[variant].data(), ordinal, plan.copy_bytes, s));
    TRIAUDIT_CUDA(cudaMemcpyPeerAsync(p2p_back.data(), ordinal, peer_buf, peer, plan.copy_bytes, s));
  }

  void prepare();
  void prepare_gemm(Stream& s);
  void prepare_triad(Stream& s);
  void prepare_copies(Stream& s);
  void prepare_p2p(Stream& s);

  void enqueue(Lane& lane, Workload w);
  void top_up();
  bool collect(Lane& lane);
  void loop();
  Deviation deviation_of(Workload w, const HashVerdict& v, std::uint64_t item, int variant) const;
};

void SoakEngine::Impl::prepare() {
  const DeviceDescription& d = device().description;
  const int cc = d.cc_major * 10 + d.cc_minor;
  shape = GemmShape{plan.gemm_dim, plan.gemm_dim, plan.gemm_dim, "soak", true};
  if (const std::string why = kernels::ladder_unsupported(plan.gemm_level, shape.m, shape.n, shape.k, cc); !why.empty())
    throw SkipCase(why);
  int levels = 0;
  if (!kernels::ladder_levels(&levels)[plan.gemm_level].bf16)
    throw SkipCase("the soak's GEMM is a BF16 ladder level (2-5)");
  if (const std::string why = kernels::ladder_launch_check(plan.gemm_level); !why.empty()) throw Error(why);
  words = plan.copy_bytes / 4;
  triad_layout = buffer_layout(plan.triad_elements);
  pattern_layout = buffer_layout(words);
  setup.gemm_layout = matrix_layout(shape.m, shape.n, 2);
  const std::uint64_t mn = shape.m * shape.n, mk = shape.m * shape.k, kn = shape.k * shape.n;
  const std::uint64_t need = (mk + kn + 2 * mn) * 2 + 3 * plan.triad_elements * 4 +
                             (peer >= 0 ? 5 : 2) * plan.copy_bytes + (setup.gemm_layout.tiles() + 64) * 8 * 8;
  require_free_memory(need);

  const int total_slots = kComputeSlots + 3 * kCopySlots;
  verdicts = DeviceBuffer<HashVerdict>(static_cast<std::size_t>(total_slots));
  verdicts_host = PinnedBuffer<HashVerdict>(static_cast<std::size_t>(total_slots));
  starts.resize(static_cast<std::size_t>(total_slots));
  ends.resize(static_cast<std::size_t>(total_slots));
  dones.resize(static_cast<std::size_t>(total_slots));
  compute.first_slot = 0;
  compute.slots = kComputeSlots;
  h2d.first_slot = kComputeSlots;
  d2h.first_slot = kComputeSlots + kCopySlots;
  p2p.first_slot = kComputeSlots + 2 * kCopySlots;
  h2d.slots = d2h.slots = p2p.slots = kCopySlots;

  Stream s;
  prepare_gemm(s);
  prepare_triad(s);
  prepare_copies(s);
  if (peer >= 0) prepare_p2p(s);
}

void SoakEngine::Impl::prepare_gemm(Stream& s) {
  gemm = std::make_unique<GemmBuffers>(kernels::ElemType::BF16, kernels::ElemType::BF16, shape, 1, s);
  setup.inputs = "A and B random in [-1, 1) rounded to BF16 (fill_operand seeds " + std::to_string(kGemmSeed) + ", " +
                 std::to_string(kGemmSeed + 1) + "): the same on every GPU";
  const GemmBound& bound = precision_info(GemmPrecision::BF16).bound;
  const GemmCheck c = launch_and_check(*gemm, 0, bound, [&] { run_gemm(s); }, s);
  if (!c.ok()) throw VerificationError("before the soak, the GEMM against the FP64 reference: " + c.describe());
  std::ostringstream os;
  os.precision(3);
  os << c.samples << " sampled elements within the BF16 bound (worst " << c.worst_error << " of what it allows)";
  setup.fp64_check = os.str();
  // Its tile hashes are the reference every later GEMM must equal, bit for bit.
  const HashLayout& l = setup.gemm_layout;
  gemm_ref = DeviceBuffer<std::uint64_t>(l.tiles());
  TRIAUDIT_CUDA(cudaMemsetAsync(verdicts.data(), 0, sizeof(HashVerdict), s));
  kernels::hash_tiles(gemm->d(0), l, nullptr, gemm_ref.data(), verdicts.data(), {}, 0, s);
  TRIAUDIT_CUDA_LAUNCH();
  setup.gemm_tiles.resize(l.tiles());
  TRIAUDIT_CUDA(cudaMemcpyAsync(setup.gemm_tiles.data(), gemm_ref.data(), l.tiles() * 8, cudaMemcpyDeviceToHost, s));
  golden_d = DeviceBuffer<unsigned char>(shape.m * shape.n * 2);
  TRIAUDIT_CUDA(cudaMemcpyAsync(golden_d.data(), gemm->d(0), golden_d.bytes(), cudaMemcpyDeviceToDevice, s));
  TRIAUDIT_CUDA(cudaStreamSynchronize(s));
  // A GEMM whose output changes from run to run cannot be checked bit for bit: refused before
  // the soak instead of reported as corruption on every window.
  for (int again = 0; again < 2; ++again) {
    poison_d(*gemm, 0, s);
    run_gemm(s);
    if (const unsigned n = check_now(gemm->d(0), l, gemm_ref.data(), s); n > 0)
      throw Error("the GEMM is not reproducible on this GPU: run again, " + std::to_string(n) + " of " +
                  std::to_string(l.tiles()) +
                  " tiles differed from its first output (a non-deterministic kernel "
                  "cannot be checked bit for bit)");
  }
  setup.determinism = "run 3 times before the soak: one output, bit for bit";
  q_data = DeviceBuffer<unsigned char>(kQuarantineSlots * static_cast<std::size_t>(elem_slot_bytes()));
  q_entries = DeviceBuffer<kernels::QuarantineEntry>(kQuarantineSlots);
  q_used = DeviceBuffer<unsigned>(1);
  TRIAUDIT_CUDA(cudaMemset(q_used.data(), 0, sizeof(unsigned)));
  quarantine = {q_data.data(), q_entries.data(), q_used.data(), kQuarantineSlots,
                static_cast<std::uint64_t>(elem_slot_bytes())};
}

void SoakEngine::Impl::prepare_triad(Stream& s) {
  const std::uint64_t n = plan.triad_elements;
  ta = DeviceBuffer<float>(n);
  tb = DeviceBuffer<float>(n);
  tc = DeviceBuffer<float>(n);
  kernels::fill_random(tb.data(), n, kSeedB, s);
  TRIAUDIT_CUDA_LAUNCH();
  kernels::fill_random(tc.data(), n, kSeedC, s);
  TRIAUDIT_CUDA_LAUNCH();
  triad_launch = kernels::stream_launch<float>(StreamOp::Triad);
  const auto scalar = static_cast<float>(kStreamScalar);
  // The host reference of both outputs: one FMA each, exact on both sides (stream_reference.hpp).
  triad_ref_host[0] = generated_tile_hashes(triad_layout, [scalar](std::uint64_t i) {
    return float_bits(std::fma(scalar, random_pm1<float>(kSeedC, i), random_pm1<float>(kSeedB, i)));
  });
  triad_ref_host[1] = generated_tile_hashes(triad_layout, [scalar](std::uint64_t i) {
    return float_bits(std::fma(scalar, random_pm1<float>(kSeedB, i), random_pm1<float>(kSeedC, i)));
  });
  for (int v = 0; v < 2; ++v) {
    triad_ref[v] = to_device(triad_ref_host[v]);
    kernels::fill_value(ta.data(), n, std::nanf(""), s);
    TRIAUDIT_CUDA_LAUNCH();
    kernels::stream_run<float>(StreamOp::Triad, triad_arrays(v), n, triad_launch, s);
    TRIAUDIT_CUDA_LAUNCH();
    if (const unsigned bad = check_now(ta.data(), triad_layout, triad_ref[v].data(), s); bad > 0)
      throw VerificationError("before the soak, the triad (" + std::string(v == 0 ? "a = b + s*c" : "a = c + s*b") +
                              ") differs from its host reference in " + std::to_string(bad) + " of " +
                              std::to_string(triad_layout.tiles()) + " tiles");
  }
}

void SoakEngine::Impl::prepare_copies(Stream& s) {
  for (int p = 0; p < 3; ++p) {
    const std::uint64_t seed = kPatternSeeds[p];
    pattern_ref_host[p] =
        generated_tile_hashes(pattern_layout, [seed](std::uint64_t i) { return pattern_word(seed, i); });
    pattern_ref[p] = to_device(pattern_ref_host[p]);
  }
  h2d_dst = DeviceBuffer<std::uint32_t>(words);
  for (int v = 0; v < 2; ++v) {
    h2d_src[v] = PinnedBuffer<std::uint32_t>(words);
    for (std::uint64_t i = 0; i < words; ++i) h2d_src[v][i] = pattern_word(kPatternSeeds[v], i);
    TRIAUDIT_CUDA(cudaMemcpyAsync(h2d_dst.data(), h2d_src[v].data(), plan.copy_bytes, cudaMemcpyHostToDevice, s));
    if (const unsigned bad = check_now(h2d_dst.data(), pattern_layout, pattern_ref[v].data(), s); bad > 0)
      throw VerificationError("before the soak, a host-to-device copy differs from its source in " +
                              std::to_string(bad) + " of " + std::to_string(pattern_layout.tiles()) + " MiB");
  }
  d2h_src = DeviceBuffer<std::uint32_t>(words);
  kernels::fill_pattern(d2h_src.data(), words, kPatternSeeds[2], s);
  TRIAUDIT_CUDA_LAUNCH();
  if (const unsigned bad = check_now(d2h_src.data(), pattern_layout, pattern_ref[2].data(), s); bad > 0)
    throw VerificationError("before the soak, the device pattern differs from its host reference in " +
                            std::to_string(bad) + " MiB");
  d2h_expected.resize(words);
  for (std::uint64_t i = 0; i < words; ++i) d2h_expected[i] = pattern_word(kPatternSeeds[2], i);
  for (int v = 0; v < 2; ++v) {
    d2h_dst[v] = PinnedBuffer<std::uint32_t>(words);
    TRIAUDIT_CUDA(cudaMemcpyAsync(d2h_dst[v].data(), d2h_src.data(), plan.copy_bytes, cudaMemcpyDeviceToHost, s));
    TRIAUDIT_CUDA(cudaStreamSynchronize(s));
    if (std::memcmp(d2h_dst[v].data(), d2h_expected.data(), plan.copy_bytes) != 0)
      throw VerificationError("before the soak, a device-to-host copy differs from its source");
  }
}

void SoakEngine::Impl::prepare_p2p(Stream& s) {
  int there = 0, back = 0;
  TRIAUDIT_CUDA(cudaDeviceCanAccessPeer(&there, ordinal, peer));
  TRIAUDIT_CUDA(cudaDeviceCanAccessPeer(&back, peer, ordinal));
  if (!there || !back) {
    setup.p2p_unavailable = "CUDA devices " + std::to_string(ordinal) + " and " + std::to_string(peer) +
                            " cannot access each other's memory (cudaDeviceCanAccessPeer): no peer copies";
    return;
  }
  auto enable = [](int from, int to) {
    DeviceGuard g(from);
    const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();  // cleared: not an error of the next call
      return;
    }
    TRIAUDIT_CUDA(e);
  };
  enable(ordinal, peer);
  enable(peer, ordinal);
  {
    DeviceGuard g(peer);
    TRIAUDIT_CUDA(cudaMalloc(&peer_buf, plan.copy_bytes));
  }
  p2p_back = DeviceBuffer<std::uint32_t>(words);
  for (int v = 0; v < 2; ++v) {
    p2p_src[v] = DeviceBuffer<std::uint32_t>(words);
    kernels::fill_pattern(p2p_src[v].data(), words, kPatternSeeds[v], s);
    TRIAUDIT_CUDA_LAUNCH();
    p2p_round_trip(v, s);
    if (const unsigned bad = check_now(p2p_back.data(), pattern_layout, pattern_ref[v].data(), s); bad > 0)
      throw VerificationError("before the soak, a copy to the peer GPU and back differs from its source in " +
                              std::to_string(bad) + " MiB");
  }
}

void SoakEngine::Impl::enqueue(Lane& lane, Workload w) {
  const int slot = lane.take_slot();
  const auto u = static_cast<std::size_t>(slot);
  const std::uint64_t item = seq[static_cast<int>(w)]++;
  const int variant = static_cast<int>(item % 2);
  cudaStream_t s = lane.stream;
  switch (w) {
    case Workload::Gemm:
      poison_d(*gemm, 0, s);
      starts[u].record(s);
      run_gemm(s);
      ends[u].record(s);
      check_output(gemm->d(0), setup.gemm_layout, gemm_ref.data(), slot, item, true, s);
      break;
    case Workload::Triad:
      starts[u].record(s);
      kernels::stream_run<float>(StreamOp::Triad, triad_arrays(variant), plan.triad_elements, triad_launch, s);
      TRIAUDIT_CUDA_LAUNCH();
      ends[u].record(s);
      check_output(ta.data(), triad_layout, triad_ref[variant].data(), slot, item, false, s);
      break;
    case Workload::H2D:
      starts[u].record(s);
      TRIAUDIT_CUDA(
          cudaMemcpyAsync(h2d_dst.data(), h2d_src[variant].data(), plan.copy_bytes, cudaMemcpyHostToDevice, s));
      ends[u].record(s);
      check_output(h2d_dst.data(), pattern_layout, pattern_ref[variant].data(), slot, item, false, s);
      break;
    case Workload::D2H:
      starts[u].record(s);
      TRIAUDIT_CUDA(
          cudaMemcpyAsync(d2h_dst[variant].data(), d2h_src.data(), plan.copy_bytes, cudaMemcpyDeviceToHost, s));
      ends[u].record(s);
      dones[u].record(s);
      break;
    case Workload::P2P:
      starts[u].record(s);
      p2p_round_trip(variant, s);
      ends[u].record(s);
      check_output(p2p_back.data(), pattern_layout, pattern_ref[variant].data(), slot, item, false, s);
      break;
  }
  lane.queue.push_back({w, item, variant, slot});
}

void SoakEngine::Impl::top_up() {
  // The compute stream: cycles of kGemmsPerCycle GEMMs, then the triads; about two cycles queued.
  compute.max_in_flight = static_cast<std::size_t>(2 * (kGemmsPerCycle + triads_now));
  while (compute.room()) {
    enqueue(compute, cycle_pos < kGemmsPerCycle ? Workload::Gemm : Workload::Triad);
    if (++cycle_pos >= kGemmsPerCycle + triads_now) {
      cycle_pos = 0;
      triads_now = triads_per_cycle(kGemmsPerCycle, gemm_s, triad_s);
    }
  }
  while (h2d.room()) enqueue(h2d, Workload::H2D);
  while (d2h.room()) enqueue(d2h, Workload::D2H);
  if (peer_buf != nullptr)
    while (p2p.room()) enqueue(p2p, Workload::P2P);
}

Deviation SoakEngine::Impl::deviation_of(Workload w, const HashVerdict& v, std::uint64_t item, int variant) const {
  Deviation d;
  d.item = item;
  d.time_unix = unix_now();
  d.differing_tiles = v.differing;
  const bool gemm_w = w == Workload::Gemm;
  const HashLayout& l = gemm_w ? setup.gemm_layout : w == Workload::Triad ? triad_layout : pattern_layout;
  const std::vector<std::uint64_t>& expected = gemm_w                 ? setup.gemm_tiles
                                               : w == Workload::Triad ? triad_ref_host[variant]
                                                                      : pattern_ref_host[variant];
  for (unsigned i = 0; i < std::min<unsigned>(v.differing, kernels::kVerdictTiles); ++i) {
    const std::uint64_t t = v.tile[i];
    d.tiles.push_back(
        {t, v.got[i], t < expected.size() ? expected[t] : 0, l.first_row(t), l.height(t), l.first_col(t), l.width(t)});
  }
  return d;
}

bool SoakEngine::Impl::collect(Lane& lane) {
  const Lane::Op op = lane.queue.front();
  const auto u = static_cast<std::size_t>(op.slot);
  const cudaError_t q = cudaEventQuery(dones[u]);
  if (q == cudaErrorNotReady) return false;
  TRIAUDIT_CUDA(q);
  lane.queue.pop_front();
  WorkloadTally t;
  t.items = 1;
  t.work = workload_work(op.w, plan);
  t.op_seconds = Event::seconds_between(starts[u], ends[u]);
  if (op.w == Workload::Gemm) gemm_s = gemm_s > 0 ? 0.9 * gemm_s + 0.1 * t.op_seconds : t.op_seconds;
  if (op.w == Workload::Triad) triad_s = triad_s > 0 ? 0.9 * triad_s + 0.1 * t.op_seconds : t.op_seconds;
  if (op.w != Workload::D2H) {
    HashVerdict v;
    std::memcpy(&v, &verdicts_host[u], sizeof v);
    t.checked = 1;
    t.last_hash = v.combined;
    if (v.differing > 0) {
      t.deviating = 1;
      t.deviations.push_back(deviation_of(op.w, v, op.seq, op.variant));
    }
  } else if (unix_now() - last_d2h_check >= kD2hCheckPeriodS) {
    // The host's word-by-word check of this copy (its buffer is not written again until it is
    // queued again, after this).
    last_d2h_check = unix_now();
    const std::uint32_t* got = d2h_dst[op.variant].data();
    t.checked = 1;
    std::uint64_t first = words, wrong = 0;
    for (std::uint64_t i = 0; i < words; ++i)
      if (got[i] != d2h_expected[i]) {
        first = std::min(first, i);
        ++wrong;
      }
    t.last_hash = combine_tile_hashes(tile_hashes_host(got, pattern_layout));
    if (wrong > 0) {
      t.deviating = 1;
      HashVerdict v{};
      v.differing = 0;
      for (std::uint64_t tile = 0; tile < pattern_layout.tiles(); ++tile) {
        const std::uint64_t h = tile_hash_host(got, pattern_layout, tile);
        if (h == pattern_ref_host[2][tile]) continue;
        if (v.differing < kernels::kVerdictTiles) {
          v.tile[v.differing] = tile;
          v.got[v.differing] = h;
        }
        ++v.differing;
      }
      Deviation d = deviation_of(Workload::D2H, v, op.seq, 2);
      d.diagnosis = std::to_string(wrong) + " of " + std::to_string(words) + " words differ, the first at byte " +
                    std::to_string(first * 4);
      t.deviations.push_back(d);
    }
  }
  const std::lock_guard<std::mutex> hold(mutex);
  pending[static_cast<std::size_t>(op.w)].add(t);
  return true;
}

void SoakEngine::Impl::loop() {
  try {
    TRIAUDIT_CUDA(cudaSetDevice(ordinal));
    while (!stopping.load()) {
      top_up();
      bool collected = false;
      for (Lane* lane : {&compute, &h2d, &d2h, &p2p})
        while (!lane->queue.empty() && collect(*lane)) collected = true;
      if (!collected) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  } catch (const std::exception& e) {
    const std::lock_guard<std::mutex> hold(mutex);
    error = e.what();
  }
}

SoakEngine::SoakEngine(const SoakPlan& plan, int ordinal, int peer) : impl_(std::make_unique<Impl>()) {
  impl_->plan = plan;
  impl_->ordinal = ordinal;
  impl_->peer = peer;
  impl_->prepare();
}

SoakEngine::~SoakEngine() { stop(); }

void SoakEngine::start() {
  if (impl_->thread.joinable()) return;
  impl_->stopping = false;
  impl_->thread = std::thread([this] { impl_->loop(); });
}

void SoakEngine::stop() {
  impl_->stopping = true;
  if (impl_->thread.joinable()) {
    impl_->thread.join();
    (void)cudaDeviceSynchronize();  // nothing queued may outlive the buffers
  }
}

std::array<WorkloadTally, kWorkloads> SoakEngine::take() {
  const std::lock_guard<std::mutex> hold(impl_->mutex);
  std::array<WorkloadTally, kWorkloads> out{};
  std::swap(out, impl_->pending);
  return out;
}

std::string SoakEngine::error() const {
  const std::lock_guard<std::mutex> hold(impl_->mutex);
  return impl_->error;
}

const EngineSetup& SoakEngine::setup() const { return impl_->setup; }

std::string SoakEngine::diagnose_gemm(std::uint64_t item) {
  Impl& m = *impl_;
  Stream s;
  unsigned used = 0;
  TRIAUDIT_CUDA(cudaMemcpyAsync(&used, m.q_used.data(), sizeof used, cudaMemcpyDeviceToHost, s));
  TRIAUDIT_CUDA(cudaStreamSynchronize(s));
  const unsigned kept = std::min(used, kQuarantineSlots);
  std::vector<kernels::QuarantineEntry> entries(kept);
  if (kept > 0)
    TRIAUDIT_CUDA(cudaMemcpyAsync(entries.data(), m.q_entries.data(), kept * sizeof(kernels::QuarantineEntry),
                                  cudaMemcpyDeviceToHost, s));
  TRIAUDIT_CUDA(cudaStreamSynchronize(s));
  const HashLayout& l = m.setup.gemm_layout;
  const GemmBound& bound = precision_info(GemmPrecision::BF16).bound;
  std::ostringstream out;
  for (unsigned e = 0; e < kept; ++e) {
    if (entries[e].item != item) continue;
    const std::uint64_t tile = entries[e].tile, r0 = l.first_row(tile), c0 = l.first_col(tile);
    const std::uint64_t h = l.height(tile), w = l.width(tile);
    std::vector<std::uint16_t> bad(h * w), ref(h * w);
    TRIAUDIT_CUDA(cudaMemcpyAsync(bad.data(), m.q_data.data() + e * static_cast<std::size_t>(m.elem_slot_bytes()),
                                  h * w * 2, cudaMemcpyDeviceToHost, s));
    TRIAUDIT_CUDA(cudaMemcpy2DAsync(ref.data(), h * 2, m.golden_d.data() + (r0 + c0 * l.ld) * 2, l.ld * 2, h * 2, w,
                                    cudaMemcpyDeviceToHost, s));
    TRIAUDIT_CUDA(cudaStreamSynchronize(s));
    std::vector<std::uint32_t> rows, cols;
    std::vector<std::size_t> at;
    std::uint16_t flipped = 0;
    std::uint64_t differing = 0;
    for (std::size_t i = 0; i < bad.size(); ++i) {
      if (bad[i] == ref[i]) continue;
      ++differing;
      flipped = static_cast<std::uint16_t>(flipped | (bad[i] ^ ref[i]));
      if (rows.size() < 32) {
        rows.push_back(static_cast<std::uint32_t>(r0 + i % h));
        cols.push_back(static_cast<std::uint32_t>(c0 + i / h));
        at.push_back(i);
      }
    }
    int top_bit = 15;
    while (top_bit > 0 && !(flipped >> top_bit & 1)) --top_bit;
    out << (out.tellp() > 0 ? "; " : "") << "tile " << tile << ": " << differing << " of " << h * w
        << " elements differ from the first output (highest bit changed: " << top_bit
        << (top_bit == 15  ? ", the sign"
            : top_bit >= 7 ? ", in the exponent"
                           : ", in the mantissa")
        << ")";
    if (rows.empty()) {
      out << " (the kept copy equals the first output: the difference was in the hash, not the data)";
      continue;
    }
    const auto n = rows.size();
    DeviceBuffer<std::uint32_t> drows(n), dcols(n);
    DeviceBuffer<double> dref(n), dabs(n), dgot(n);
    TRIAUDIT_CUDA(cudaMemcpyAsync(drows.data(), rows.data(), n * 4, cudaMemcpyHostToDevice, s));
    TRIAUDIT_CUDA(cudaMemcpyAsync(dcols.data(), cols.data(), n * 4, cudaMemcpyHostToDevice, s));
    if (!kernels::gemm_reference_samples(m.gemm->a(0), m.gemm->b(0), m.golden_d.data(), kernels::ElemType::BF16,
                                         kernels::ElemType::BF16, m.shape.m, m.shape.n, m.shape.k, true,
                                         {drows.data(), dcols.data(), static_cast<int>(n)}, dref.data(), dabs.data(),
                                         dgot.data(), s))
      throw Error("no FP64 reference for BF16");
    TRIAUDIT_CUDA_LAUNCH();
    std::vector<double> r(n), a(n);
    TRIAUDIT_CUDA(cudaMemcpyAsync(r.data(), dref.data(), n * 8, cudaMemcpyDeviceToHost, s));
    TRIAUDIT_CUDA(cudaMemcpyAsync(a.data(), dabs.data(), n * 8, cudaMemcpyDeviceToHost, s));
    TRIAUDIT_CUDA(cudaStreamSynchronize(s));
    int bad_out = 0, ref_out = 0;
    for (std::size_t x = 0; x < n; ++x) {
      bad_out += gemm_element_ok(bf16_value(bad[at[x]]), r[x], a[x], bound) ? 0 : 1;
      ref_out += gemm_element_ok(bf16_value(ref[at[x]]), r[x], a[x], bound) ? 0 : 1;
    }
    out.precision(8);
    out << "; against the FP64 reference at " << n << " of them: this output is outside the BF16 bound at " << bad_out
        << ", the first output at " << ref_out << " (e.g. D(" << rows[0] << "," << cols[0]
        << ") = " << bf16_value(bad[at[0]]) << ", first " << bf16_value(ref[at[0]]) << ", FP64 " << r[0] << ")";
    if (ref_out > 0 && bad_out == 0) out << ": the first output was the wrong one";
  }
  return out.str();
}

}  // namespace triaudit
