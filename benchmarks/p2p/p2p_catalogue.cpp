#include "p2p_catalogue.hpp"

#include <algorithm>
#include <stdexcept>

#include "latch_budget.hpp"
#include "names.hpp"

namespace triaudit {

std::string P2pCase::name() const {
  const BenchName n =
      kind.small_copy ? BenchName("p2p", "small_copy", kind.test) : BenchName("p2p", kind.test, kind.direction);
  return BenchName(n)
      .arg("src", static_cast<std::uint64_t>(src))
      .arg("dst", static_cast<std::uint64_t>(dst))
      .arg("bytes", bytes)
      .str();
}

std::vector<std::uint64_t> p2p_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes) {
  if (min_bytes < 16) throw std::invalid_argument("--min-bytes must be at least 16 (one 16-byte vector)");
  if (min_bytes > max_bytes) throw std::invalid_argument("--min-bytes is above --max-bytes");
  std::uint64_t top = 1;
  while (top <= max_bytes / 2) top *= 2;
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = top; s >= min_bytes && s >= 16; s /= 4) out.push_back(s);
  if (out.empty()) throw std::invalid_argument("no power-of-two size between --min-bytes and --max-bytes");
  std::reverse(out.begin(), out.end());
  return out;
}

const std::vector<std::uint64_t>& p2p_small_copy_sizes() {
  static const std::vector<std::uint64_t> sizes = {4, 256, 4096};
  return sizes;
}

std::vector<P2pCase> p2p_catalogue(const P2pOptions& o) {
  const auto sizes = p2p_sizes(o.min_bytes, o.max_bytes);
  auto wanted = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  std::vector<P2pCase> out;
  auto each_pair = [&](const P2pKind& kind, const std::vector<std::uint64_t>& byte_list) {
    for (int src = 0; src < o.max_gpus; ++src)
      for (int dst = 0; dst < o.max_gpus; ++dst)
        if (src != dst)
          for (std::uint64_t b : byte_list) out.push_back({kind, src, dst, b});
  };
  for (const char* test : {"ce", "ce_read", "sm_read", "sm_write"})
    if (wanted(o.tests, test))
      for (const char* dir : {"uni", "bidir"})
        if (wanted(o.directions, dir)) each_pair({test, dir, false}, sizes);
  if (o.staged) each_pair({"staged", "uni", false}, sizes);
  if (wanted(o.tests, "small_copy") || wanted(o.tests, "latency"))  // "latency": the word before schema 2
    for (const char* test : {"ce", "sm_write"}) each_pair({test, "uni", true}, p2p_small_copy_sizes());
  return out;
}

std::optional<std::string> representative_pair_skip(int src, int dst,
                                                    const std::vector<std::vector<std::string>>& links) {
  const auto n = static_cast<int>(links.size());
  if (src < 0 || dst < 0 || src >= n || dst >= n) return std::nullopt;
  const std::string& link = links[static_cast<std::size_t>(src)][static_cast<std::size_t>(dst)];
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j || links[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] != link) continue;
      if (i == src && j == dst) return std::nullopt;  // the first of its type
      return "not the representative pair of its link type (" + link + "): GPU " + std::to_string(i) + " -> GPU " +
             std::to_string(j) + " is measured for it (--pairs=all measures every pair)";
    }
  return std::nullopt;
}

int p2p_queue_entries(const P2pKind& k) {
  if (k.test == "staged") return 6;
  return k.direction == "bidir" ? 5 : 1;
}

int p2p_untimed_ops(const P2pKind&, std::uint64_t bytes) { return bytes <= (16ULL << 20) ? 4 : 1; }

int p2p_ops_per_region(const P2pKind& k, std::uint64_t bytes) {
  constexpr int kQueue = kLatchEntriesForOps;
  const int fit = std::max(1, kQueue / p2p_queue_entries(k) - p2p_untimed_ops(k, bytes));
  if (k.small_copy) return std::min(100, fit);
  const std::uint64_t by_size = (64ULL << 20) / std::max<std::uint64_t>(bytes, 1);
  return static_cast<int>(std::clamp<std::uint64_t>(by_size, 1, static_cast<std::uint64_t>(std::min(32, fit))));
}

std::uint64_t p2p_device_bytes(const P2pKind& k, std::uint64_t bytes) {
  return k.direction == "bidir" ? 4 * bytes : bytes;
}

std::optional<std::string> pair_visibility_skip(int src, int dst, int visible) {
  if (visible < 2) return "needs 2 GPUs, " + std::to_string(visible) + " visible";
  const std::string range = std::to_string(visible) + " visible: 0-" + std::to_string(visible - 1);
  for (int g : {src, dst})
    if (g >= visible) return "GPU " + std::to_string(g) + " not visible (" + range + ")";
  return std::nullopt;
}

std::string p2p_status_words(int s) {
  switch (s) {
    case 0:
      return "ok";
    case 1:
      return "chipset not supported";
    case 2:
      return "GPU not supported";
    case 3:
      return "topology not supported";
    case 4:
      return "disabled by regkey";
    case 5:
      return "not supported";
    case 6:
      return "unknown";
    default:
      return "status " + std::to_string(s);
  }
}

std::optional<std::string> topology_level_name(int level) {
  switch (level) {
    case 0:  // NVML_TOPOLOGY_INTERNAL: two GPUs of one board, behind the board's own PCIe switch
    case 10:
      return "PIX";
    case 20:
      return "PXB";
    case 30:
      return "PHB";
    case 40:
      return "NODE";
    case 50:
      return "SYS";
    default:
      return std::nullopt;
  }
}

unsigned nvlinks_between(const GpuNvLinks& a, const std::string& a_bus, const GpuNvLinks& b, const std::string& b_bus) {
  auto direct = [](const GpuNvLinks& from, const std::string& to) {
    const auto it = from.to_gpu.find(to);
    return it == from.to_gpu.end() ? 0u : it->second;
  };
  // Both ends see the same wires; a side NVML could not read contributes nothing.
  const unsigned wired = std::max(direct(a, b_bus), direct(b, a_bus));
  const unsigned switched = a.to_switch > 0 && b.to_switch > 0 ? std::min(a.to_switch, b.to_switch) : 0u;
  return wired + switched;
}

std::string link_name(unsigned nvlinks, std::optional<int> level, const std::string& why) {
  if (nvlinks > 0) return "NV" + std::to_string(nvlinks);
  if (level) {
    if (const auto n = topology_level_name(*level)) return *n;
    return "unknown (NVML: topology level " + std::to_string(*level) + ")";
  }
  return "unknown (NVML: " + (why.empty() ? std::string("no answer") : why) + ")";
}

std::string nvlink_links_text(const GpuNvLinks& l) {
  if (!l.readable) return "unknown (NVML: " + l.why + ")";
  return std::to_string(l.active) + "/" + std::to_string(l.total);
}

std::string format_cpu_list(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return out;
}

std::vector<int> cpus_of_mask(const std::vector<std::uint64_t>& words) {
  std::vector<int> out;
  for (std::size_t w = 0; w < words.size(); ++w)
    for (int bit = 0; bit < 64; ++bit)
      if ((words[w] >> bit) & 1ULL) out.push_back(static_cast<int>(w * 64) + bit);
  return out;
}

ContextEntries p2p_context_entries(const std::vector<GpuTopology>& gpus,
                                   const std::vector<std::vector<PairTopology>>& pairs) {
  ContextEntries e = {{"p2p_gpu_count", std::to_string(gpus.size())}};
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string p = "gpu_" + std::to_string(i) + "_";
    e.push_back({p + "name", gpus[i].name});
    e.push_back({p + "pci_bus_id", gpus[i].pci_bus_id});
    e.push_back({p + "numa_node", gpus[i].numa_node});
    e.push_back({p + "cpu_affinity", gpus[i].cpu_affinity});
    e.push_back({p + "nvlink_links", gpus[i].nvlink_links});
  }
  for (std::size_t i = 0; i < gpus.size(); ++i)
    for (std::size_t j = 0; j < gpus.size(); ++j)
      if (i != j) {
        const std::string ij = std::to_string(i) + "_" + std::to_string(j);
        e.push_back({"p2p_link_" + ij, pairs.at(i).at(j).link});
        e.push_back({"p2p_access_" + ij, pairs.at(i).at(j).access});
      }
  return e;
}

EnergyReading sum_energy(const EnergyReading& a, const EnergyReading& b) {
  if (!a.millijoules) return {std::nullopt, a.error};
  if (!b.millijoules) return {std::nullopt, b.error};
  return {*a.millijoules + *b.millijoules, ""};
}

}  // namespace triaudit
