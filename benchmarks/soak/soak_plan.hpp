// The soak's host logic, free of CUDA (unit-tested anywhere): what one GPU's soak runs and how
// its windows are named, sized, mixed and written down.
//
// A soak process keeps every workload running at once, without a pause, from its first window
// to its last: GEMMs and STREAM triads interleaved on one stream (each at full speed in its
// turn, the SMs never idle), host-to-device and device-to-host copies on their own streams, and
// with a peer GPU copies to it and back. Every output is hashed on the device (tile_hash.hpp)
// and compared with what it must be. The process reports in windows: each window is one call of
// each workload's case (the first call of a window waits the window out; the others report the
// same window), so a case's calls are its time series.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace triaudit {

enum class Workload { Gemm, Triad, H2D, D2H, P2P };
constexpr int kWorkloads = 5;
constexpr std::array<Workload, kWorkloads> kAllWorkloads = {Workload::Gemm, Workload::Triad, Workload::H2D,
                                                            Workload::D2H, Workload::P2P};
const char* workload_key(Workload w);  // gemm, triad, h2d, d2h, p2p (the hash log's keys)

struct SoakPlan {
  int gemm_level = 3;             // the ladder level (BF16 in, FP32 accumulate, BF16 out; no split-K)
  std::uint64_t gemm_dim = 8192;  // M = N = K
  std::uint64_t triad_elements = 0;
  std::uint64_t copy_bytes = 64ull << 20;
  bool peer = false;  // a peer GPU for the p2p copies
};

// Case names: the soak's corner is "soak", the workload's own corner comes next.
//   soak/gemm/bf16/impl:ladder_l3/m:8192/n:8192/k:8192
//   soak/stream/triad/type:fp32/array:2xL2   (each array twice the L2, at least 64 MiB)
//   soak/copy/<h2d|d2h|p2p>/bytes:<one copy>
std::string soak_case_name(Workload w, const SoakPlan& p);

// Elements of each triad array: at least twice the L2 (so the triad's three arrays are six L2s:
// no pass finds its data in the cache) and 64 MiB, in whole hash tiles of 2^18 elements.
std::uint64_t triad_elements_for(std::uint64_t l2_bytes);

// FLOPs of one GEMM, bytes one operation of each other workload moves (the STREAM convention for
// the triad: three arrays; a p2p round trip: there and back).
double workload_work(Workload w, const SoakPlan& p);

// How many triads follow each group of GEMMs on the compute stream so that the triads take
// about `triad_share` of its time, from the operations' measured seconds (0: not known yet: one).
int triads_per_cycle(int gemms_per_cycle, double gemm_seconds, double triad_seconds, double triad_share = 0.25,
                     int max_triads = 64);

// One checked operation whose output differed from what it must be.
struct TileDifference {
  std::uint64_t tile = 0;
  std::uint64_t got = 0, expected = 0;
  std::uint64_t row0 = 0, rows = 0, col0 = 0, cols = 0;  // where the tile lies
};
struct Deviation {
  std::uint64_t item = 0;        // the operation's sequence number in this process
  double time_unix = 0;          // when the host saw it complete
  unsigned differing_tiles = 0;  // all of them (only the first kVerdictTiles are named)
  std::vector<TileDifference> tiles;
  std::string diagnosis;  // the FP64 reference's verdict on the kept tiles (GEMM), "" if none
};

// What one workload did in one window.
struct WorkloadTally {
  long long items = 0;                // operations completed
  double work = 0;                    // FLOPs or bytes of those
  double op_seconds = 0;              // their summed device time (CUDA events around each operation alone)
  long long deviating = 0;            // operations whose output differed
  std::vector<Deviation> deviations;  // the first few of those, in full
  std::uint64_t last_hash = 0;        // the combined hash of the last operation checked
  long long checked = 0;              // operations whose output was checked (D2H: one every few seconds)
  double rate() const { return op_seconds > 0 ? work / op_seconds : 0.0; }
  double seconds_per_op() const { return items > 0 ? op_seconds / static_cast<double>(items) : 0.0; }
  void add(const WorkloadTally& o);
};
constexpr int kDeviationsKept = 16;  // per workload and window, in full; the rest are counted

// "sdc: 1 of 14210 GEMMs in window 183 differed, bit for bit, from the first output: GEMM 8123 at
// 2026-01-02T03:04:05.678Z, 1 tile: tile 517 (rows 640-767, cols 512-639) hash ... expected ...; <diagnosis>"
std::string describe_deviations(Workload w, long long window, const WorkloadTally& t);

// 16 lower-case hex digits.
std::string hex64(std::uint64_t v);
// ISO 8601 UTC with milliseconds, from seconds since the epoch.
std::string utc_iso(double unix_s);
// A JSON string literal.
std::string json_string(const std::string& s);

// The hash log (--hash-log): one JSON object per line, flushed as it is written.
// The reference record, once per process: the GEMM's expected tile hashes (its first output,
// checked against the FP64 reference), for `triaudit soak` to compare across GPUs and restarts.
struct ReferenceRecord {
  std::string gpu_uuid, gpu_name, gemm_case, inputs, fp64_check;
  long long first_window = 0;
  double time_unix = 0;
  std::uint64_t rows = 0, cols = 0;
  std::uint32_t tile_rows = 0, tile_cols = 0;
  int elem_bytes = 2;
  std::vector<std::uint64_t> tile_hashes;
};
std::string reference_line(const ReferenceRecord& r);

struct WindowRecord {
  long long window = 0;
  double start_unix = 0, end_unix = 0;
  std::vector<std::pair<Workload, std::string>> cases;  // the workloads this process runs, with their case names
  std::array<WorkloadTally, kWorkloads> tallies;
  double sm_clock_mean_mhz = -1, power_mean_w = -1;
  int temperature_end_c = -1;
  bool throttled = false;
  std::string clock_reasons;
  std::string error;  // the engine stopped: why
};
std::string window_line(const WindowRecord& r);

}  // namespace triaudit
