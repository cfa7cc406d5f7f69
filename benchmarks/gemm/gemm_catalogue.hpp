// The compute corner's catalogue as plain data: precisions with their storage types, support
// rules per compute capability and verification bounds; the shape lists; FLOP and byte
// counts. Pure host code, unit-tested.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gemm_bound.hpp"

namespace triaudit {

enum class GemmPrecision { FP64, FP32, TF32, FP16, FP16Acc16, BF16, FP8, FP8FastAccum, INT8 };

struct PrecisionInfo {
  GemmPrecision precision;
  const char* name;      // name part: fp64, fp32, tf32, fp16, fp16acc16, bf16, fp8e4m3, fp8e4m3fast, int8
  int a_bytes, c_bytes;  // bytes per element of A/B and of C/D
  int min_cc;            // compute capability x10 required (e.g. 89)
  bool tn_only;          // cuBLASLt requires A transposed (FP8, INT8)
  GemmBound bound;       // the acceptance rule of each element (gemm_bound.hpp); exact for INT8
  const char* counter;   // "flops" or "ops" (INT8)
};

const std::vector<PrecisionInfo>& gemm_precisions();
const PrecisionInfo& precision_info(GemmPrecision p);
const PrecisionInfo& precision_by_name(const std::string& name);  // throws std::invalid_argument

// Can a device of compute capability `cc` (x10) run `p`? When not, `why` says so.
bool precision_supported(GemmPrecision p, int cc, std::string* why);
// FP64 runs on Tensor Cores (DMMA) on A100, H100/H200 and B200 only; elsewhere on CUDA cores.
bool fp64_has_tensor_cores(int cc);

struct GemmShape {
  std::uint64_t m, n, k;
  std::string family;        // square, misaligned, ceiling, or an LLM layer: llama2-7b-qkv, llama2-70b-mlp_down, ...
  bool transa;               // the layout: false = NN, true = TN (column-major, as cuBLAS)
  std::uint64_t tokens = 0;  // LLM layers: the tokens in flight (= n); 0 for the other families
};

std::vector<GemmShape> square_shapes(std::uint64_t max_dim);
// The linear layers of Llama-2-7B and -70B at 1, 16 (decode) and 4096 (prefill) tokens, as
// PyTorch's F.linear(x, W) reaches cuBLAS: TN with m = out_features, n = tokens, k = in_features, A = W.
std::vector<GemmShape> llm_shapes();
std::vector<GemmShape> misaligned_shapes();
std::vector<GemmShape> ceiling_shapes();  // the sweep for the measured compute roof

inline double gemm_flops(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}
// Minimum bytes: read A and B once, write D once (beta = 0: C is not read).
inline double gemm_min_bytes(std::uint64_t m, std::uint64_t n, std::uint64_t k, int a_bytes, int c_bytes) {
  return static_cast<double>(m * k + k * n) * a_bytes + static_cast<double>(m * n) * c_bytes;
}
inline double gemm_intensity(std::uint64_t m, std::uint64_t n, std::uint64_t k, int a_bytes, int c_bytes) {
  return gemm_flops(m, n, k) / gemm_min_bytes(m, n, k, a_bytes, c_bytes);
}

// Operand sets: A (M x K), B (K x N) and D (M x N), each matrix a 256-byte aligned slice of one
// allocation per matrix kind.
std::uint64_t aligned_matrix_bytes(std::uint64_t rows, std::uint64_t cols, int elem_bytes);
std::uint64_t operand_set_bytes(const GemmShape& s, int a_bytes, int c_bytes);
// How many operand sets rotate so their footprint is at least three L2s: a GEMM then never finds
// its operands in L2 from an earlier call (L2 replacement is not strict LRU: one L2's worth
// would leave lines behind). No cap: small shapes need hundreds of sets, which cost little memory.
int rotation_sets(std::uint64_t bytes_per_set, std::uint64_t l2_bytes);

// How many GEMMs one timed region holds: enough for >= 0.5 ms of device time (per-region costs
// then stay under ~1 %), at most 31 (a cuBLASLt call may queue up to 4 entries and a held region
// takes 128): a GEMM under 16 us gets a region shorter than 0.5 ms (docs/gemm.md says so).
// `seconds_per_gemm`: an estimate (0 or less: one).
int gemms_per_region(double seconds_per_gemm);
constexpr double kMinRegionSeconds = 5e-4;

// Choosing among cuBLASLt's candidates (LtGemm::autotune): after a warm-up, regions alternate
// between the candidates round by round (none is timed on a GPU that another one warmed or
// cooled), until each has `min_seconds` of timed regions and at least `min_regions`; the fastest
// by mean time per GEMM (the statistic the cases report) wins.
struct CandidateTiming {
  bool runs = false;  // the candidate launched; the others are left out
  double seconds = 0.0;
  long long gemms = 0;
  int regions = 0;
  double mean() const { return gemms > 0 ? seconds / static_cast<double>(gemms) : 0.0; }
};
bool selection_done(const std::vector<CandidateTiming>& c, double min_seconds, int min_regions);
int fastest_candidate(const std::vector<CandidateTiming>& c);  // -1 when none ran

// The selection's schedule, apart from CUDA so a test can drive it: regions of candidate `first`
// until `warmup_s` of now() has passed, then one region per launching candidate per round, in
// turn, until selection_done. region(i) times one region of candidate i (seconds, `gemms` GEMMs).
template <class Region, class Now>
void run_selection(std::vector<CandidateTiming>& timing, int first, int gemms, double warmup_s, double min_seconds,
                   int min_regions, const Region& region, const Now& now) {
  if (first < 0 || first >= static_cast<int>(timing.size()) || !timing[static_cast<std::size_t>(first)].runs) return;
  const double warm_from = now();
  while (now() - warm_from < warmup_s) (void)region(first);
  while (!selection_done(timing, min_seconds, min_regions))
    for (std::size_t i = 0; i < timing.size(); ++i) {
      CandidateTiming& t = timing[i];
      if (!t.runs) continue;
      t.seconds += region(static_cast<int>(i));
      t.gemms += gemms;
      ++t.regions;
    }
}

// The burst ceiling's sweep: triaudit's own 12 shapes, or mamf-finder's documented grid
// (--m_range 0 20480 256 --n 4096 --k 4096: its M = 256 .. 20224 in steps of 256, 79 shapes) so the
// two can be put side by side. Every shape TN with cuBLAS's n = mamf-finder's M and m = N = 4096,
// as its torch.mm reaches cuBLAS.
std::vector<GemmShape> mamf_ceiling_shapes();

// What a case keeps across Google Benchmark's calls of it (one per repetition): its operands and
// its tuned algorithm, made on the case's first call and reused while the same case is called
// again, so every repetition times the same algorithm (a sustained case that tuned again on every
// call could time a different one in each) and the repetitions follow each other without a new
// selection between them. Another case's things are freed before the next case's are made.
template <class T>
class KeptForCase {
 public:
  template <class Make>
  T& get(const std::string& key, const Make& make) {
    if (!value_ || key_ != key) {
      value_.reset();  // free the previous case's memory before asking for more
      key_.clear();
      value_ = std::make_unique<T>(make());
      key_ = key;
    }
    return *value_;
  }
  void clear() {
    value_.reset();
    key_.clear();
  }

 private:
  std::unique_ptr<T> value_;
  std::string key_;
};

// gemm/cublaslt/<precision>/layout:<nn|tn>/m:M/n:N/k:K, or for an LLM layer
// gemm/cublaslt/<precision>/llm:<model>-<layer>/tokens:T
std::string gemm_case_name(const std::string& impl, GemmPrecision p, const GemmShape& s);

}  // namespace triaudit
