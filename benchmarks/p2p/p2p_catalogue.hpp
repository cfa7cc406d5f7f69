// The catalogue of the GPU-to-GPU corner as plain data: which copies exist, their names, the size
// sweeps, how many copies a timed region holds, why a pair is skipped, and how a link between two
// GPUs is named (nvidia-smi topo's words). Pure host code, unit-tested on any machine.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device_description.hpp"
#include "energy.hpp"

namespace triaudit {

// One copy the corner measures between an ordered pair of GPUs.
//   test:      ce (cudaMemcpyPeerAsync, issued on the source GPU: the source's copy engine
//              writes), ce_read (the same copy issued on the destination GPU: its copy engine
//              reads, nvbandwidth's *_memcpy_read_ce), sm_read (a kernel on the
//              destination reading the source's memory), sm_write (a kernel on the source writing
//              the destination's memory), staged (peer access off: source -> pinned host memory ->
//              destination, two copies in sequence).
//   direction: uni, or bidir (measured while the opposite direction, twice as large, runs).
//   small_copy: small copies back to back, reported per copy (seconds_per_op): the shape of the CUDA
//              samples' p2pBandwidthLatencyTest "latency". Named p2p/latency/... before schema 2;
//              nvbandwidth's latency is another thing (a pointer chase: one dependent load at a time).
struct P2pKind {
  std::string test;       // ce, ce_read, sm_read, sm_write, staged
  std::string direction;  // uni, bidir
  bool small_copy = false;
};

struct P2pCase {
  P2pKind kind;
  int src = 0, dst = 0;
  std::uint64_t bytes = 0;
  std::string name() const;
};

struct P2pOptions {
  int max_gpus = 8;
  std::uint64_t min_bytes = 8ULL << 10;
  std::uint64_t max_bytes = 512ULL << 20;  // nvbandwidth's default buffer
  // "small_copy" (the old word "latency" selects it too)
  std::vector<std::string> tests = {"ce", "ce_read", "sm_read", "sm_write", "small_copy"};
  std::vector<std::string> directions = {"uni", "bidir"};
  bool staged = false;
};

// Bandwidth sizes: max_bytes (rounded down to a power of two) divided by 4 again and again while
// at least min_bytes, smallest first. Anchored at the top so the default sweep ends at 512 MiB,
// nvbandwidth's copy size. Throws std::invalid_argument for min < 16 or min > max.
std::vector<std::uint64_t> p2p_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes);
// Small-copy sizes: 4 B (one word, p2pBandwidthLatencyTest's copy), 256 B, 4 KiB.
const std::vector<std::uint64_t>& p2p_small_copy_sizes();

// Every case, in registration order: per test and direction, per ordered pair (src, dst), sizes
// innermost (consecutive cases share a pair, so peer access and buffers change rarely). The same
// on every machine: pairs of GPU indices 0 .. max_gpus-1, whatever is visible.
std::vector<P2pCase> p2p_catalogue(const P2pOptions& o);

// Queue entries one operation adds behind the stream hold (StreamLatch::kMaxQueuedEntries):
// one copy or kernel; bidir: fork record, wait, two copies, join record; staged: per stream a
// copy, a record and a wait, both streams counted.
int p2p_queue_entries(const P2pKind& k);
// Copies queued behind the hold before the start event (the copy engine and the link are busy
// when the timed copies begin, as nvbandwidth does): 4 up to 16 MiB, 1 above.
int p2p_untimed_ops(const P2pKind& k, std::uint64_t bytes);
// Copies per timed region: small copies 100; bandwidth up to 64 MiB per region (at most 32 copies),
// one for large copies; always inside the latch's queue budget with the untimed copies.
int p2p_ops_per_region(const P2pKind& k, std::uint64_t bytes);

// Bytes each device must hold for the case (both ends of a bidirectional copy hold a source and
// a destination of twice the size, for the interfering copy).
std::uint64_t p2p_device_bytes(const P2pKind& k, std::uint64_t bytes);

// --pairs=representative (the quick profile): one ordered pair per link type is measured, the
// first in catalogue order whose link (links[i][j], nvidia-smi topo's words) has that type; every
// other pair is skipped with the reason. On an NVSwitch node that is one pair instead of 56.
// nullopt: measure this pair.
std::optional<std::string> representative_pair_skip(int src, int dst,
                                                    const std::vector<std::vector<std::string>>& links);

// Why a pair cannot run on a machine with `visible` GPUs, or nullopt when both exist.
std::optional<std::string> pair_visibility_skip(int src, int dst, int visible);

// NVML's nvmlGpuP2PStatus_t in words ("chipset not supported", ...); "ok" for 0.
std::string p2p_status_words(int nvml_status);
// nvmlGpuTopologyLevel_t in nvidia-smi topo's vocabulary: PIX (one PCIe switch; also NVML's
// INTERNAL, two GPUs on one board behind its own switch), PXB, PHB, NODE, SYS.
std::optional<std::string> topology_level_name(int nvml_level);

// NVLinks of one GPU as NVML reports them, link by link (active ones only are counted).
struct GpuNvLinks {
  bool readable = false;
  std::string why;                         // when !readable: NVML's reason
  unsigned active = 0, total = 0;          // links NVML answers for, and those up
  std::map<std::string, unsigned> to_gpu;  // active links to another GPU, by its bus id (sysfs form)
  unsigned to_switch = 0;                  // active links to an NVSwitch
};
// NVLinks between two GPUs as nvidia-smi counts them: links wired directly between them, plus,
// when both reach NVSwitches, the fewer of their switch links (every GPU behind the switches is
// reachable over all of them: nvidia-smi shows NV18 between every pair of an HGX H200, NV12
// of a DGX A100; scripts/tests/data/real has both dumps).
unsigned nvlinks_between(const GpuNvLinks& a, const std::string& a_bus, const GpuNvLinks& b, const std::string& b_bus);
// The link word of a pair: NV<k> when k NVLinks join them, else the PCIe common ancestor's word,
// else "unknown (NVML: <why>)".
std::string link_name(unsigned nvlinks, std::optional<int> nvml_level, const std::string& why);
// "<active>/<total>", or "unknown (NVML: <why>)".
std::string nvlink_links_text(const GpuNvLinks& l);

// {0,1,2,3,8,10,11} -> "0-3,8,10-11" (sysfs cpulist form; input need not be sorted).
std::string format_cpu_list(std::vector<int> cpus);
// NVML's CPU affinity bitmask (64-bit words, CPU c = bit c % 64 of word c / 64) -> CPU indices.
std::vector<int> cpus_of_mask(const std::vector<std::uint64_t>& words);

// The context a run carries about its GPUs and their pairs (p2p_report.py reads these keys).
struct GpuTopology {
  std::string name, pci_bus_id, numa_node, cpu_affinity, nvlink_links;
};
struct PairTopology {
  std::string link;    // NV<k>, PIX, PXB, PHB, NODE, SYS, unknown (...)
  std::string access;  // yes, or no (<reason>)
};
// p2p_gpu_count, gpu_<i>_{name,pci_bus_id,numa_node,cpu_affinity,nvlink_links} and, per ordered
// pair i != j, p2p_link_<i>_<j> and p2p_access_<i>_<j>. pairs[i][j] for i != j.
ContextEntries p2p_context_entries(const std::vector<GpuTopology>& gpus,
                                   const std::vector<std::vector<PairTopology>>& pairs);

// Both GPUs' energy counters as one: the sum when both are readable, else the first reason.
EnergyReading sum_energy(const EnergyReading& a, const EnergyReading& b);

}  // namespace triaudit
