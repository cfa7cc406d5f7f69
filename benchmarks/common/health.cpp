#include "health.hpp"

#include <algorithm>

#include "nvml.hpp"
#include "nvml_abi.hpp"

namespace triaudit {
namespace {

// The cumulative counters, in the order the label and the context list them.
const char* const kCounters[] = {
    "ecc_corrected",          "ecc_uncorrected",   "remapped_rows_correctable", "remapped_rows_uncorrectable",
    "retired_pages_sbe",      "retired_pages_dbe", "nvlink_crc_errors",         "nvlink_replay_errors",
    "nvlink_recovery_errors", "pcie_replays"};

// How a label says a counter moved: "3 corrected ECC errors".
std::string in_words(const std::string& counter, std::uint64_t n) {
  static const std::map<std::string, std::string> words = {
      {"ecc_corrected", "corrected ECC errors"},
      {"ecc_uncorrected", "uncorrected ECC errors"},
      {"remapped_rows_correctable", "rows remapped (correctable)"},
      {"remapped_rows_uncorrectable", "rows remapped (uncorrectable)"},
      {"retired_pages_sbe", "pages retired (single-bit)"},
      {"retired_pages_dbe", "pages retired (double-bit)"},
      {"nvlink_crc_errors", "NVLink CRC errors"},
      {"nvlink_replay_errors", "NVLink replays"},
      {"nvlink_recovery_errors", "NVLink recoveries"},
      {"pcie_replays", "PCIe replays"}};
  return std::to_string(n) + " " + words.at(counter);
}

template <typename T>
void put(HealthReading& r, const char* name, const std::optional<T>& v, const std::string& why) {
  if (v)
    r.counts[name] = static_cast<std::uint64_t>(*v);
  else
    r.unsupported[name] = why;
}

// A counter read link by link: its total in `counts`, the links in `by_link`.
void put_links(HealthReading& r, const char* name, const std::optional<std::map<unsigned, std::uint64_t>>& links,
               const std::string& why) {
  if (!links) {
    r.unsupported[name] = why;
    return;
  }
  std::uint64_t total = 0;
  for (const auto& [link, v] : *links) total += v;
  r.counts[name] = total;
  r.by_link[name] = *links;
}

// "(link 7: 12000)": the links whose counter moved between two readings, the four largest.
std::string moved_links(const HealthReading& before, const HealthReading& after, const std::string& name) {
  const auto b = before.by_link.find(name), a = after.by_link.find(name);
  if (b == before.by_link.end() || a == after.by_link.end()) return "";
  std::vector<std::pair<std::uint64_t, unsigned>> moved;
  for (const auto& [link, v] : a->second) {
    const auto was = b->second.find(link);
    if (was != b->second.end() && v > was->second) moved.push_back({v - was->second, link});
  }
  std::sort(moved.begin(), moved.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string out;
  for (std::size_t i = 0; i < moved.size() && i < 4; ++i)
    out += (out.empty() ? " (" : ", ") + std::string("link ") + std::to_string(moved[i].second) + ": " +
           std::to_string(moved[i].first);
  if (moved.size() > 4) out += ", " + std::to_string(moved.size() - 4) + " more";
  return out.empty() ? out : out + ")";
}

}  // namespace

HealthReading read_health(NvmlDevice& nvml) {
  HealthReading r;
  std::string why;
  put(r, "ecc_corrected", nvml.ecc_volatile(false, &why), why);
  put(r, "ecc_uncorrected", nvml.ecc_volatile(true, &why), why);
  if (const auto rows = nvml.remapped_rows(&why)) {
    r.counts["remapped_rows_correctable"] = rows->correctable;
    r.counts["remapped_rows_uncorrectable"] = rows->uncorrectable;
    r.remap_pending = rows->pending;
    r.remap_failure = rows->failure;
  } else {
    r.unsupported["remapped_rows_correctable"] = r.unsupported["remapped_rows_uncorrectable"] = why;
  }
  put(r, "retired_pages_sbe", nvml.retired_pages(false, &why), why);
  put(r, "retired_pages_dbe", nvml.retired_pages(true, &why), why);
  // CRC errors: flit and data counters together, link by link.
  std::map<unsigned, std::uint64_t> crc;
  bool crc_read = false;
  std::string crc_why;
  for (const int counter : {nvml_abi::kNvLinkCrcFlit, nvml_abi::kNvLinkCrcData}) {
    std::string w;
    if (const auto links = nvml.nvlink_errors_by_link(counter, &w)) {
      crc_read = true;
      for (const auto& [link, v] : *links) crc[link] += v;
    } else if (crc_why.empty()) {
      crc_why = w;
    }
  }
  put_links(r, "nvlink_crc_errors", crc_read ? std::optional(crc) : std::nullopt, crc_why);
  put_links(r, "nvlink_replay_errors", nvml.nvlink_errors_by_link(nvml_abi::kNvLinkReplay, &why), why);
  put_links(r, "nvlink_recovery_errors", nvml.nvlink_errors_by_link(nvml_abi::kNvLinkRecovery, &why), why);
  r.links_up = nvml.nvlink_up_links();
  put(r, "pcie_replays", nvml.pcie_replays(&why), why);
  if (auto xids = nvml.drain_xids(&why))
    r.xids = std::move(*xids);
  else
    r.xid_unsupported = why;
  return r;
}

HealthChange health_change(const std::vector<GpuReadings>& gpus) {
  HealthChange c;
  std::vector<std::string> failures;
  bool any_remap = false, any_xid = false, any_links = false;
  double pending = 0, failed = 0, xid_count = 0, links_down = 0;
  for (const GpuReadings& g : gpus) {
    for (const char* name : kCounters) {
      const auto b = g.before.counts.find(name), a = g.after.counts.find(name);
      if (b == g.before.counts.end() || a == g.after.counts.end()) continue;  // not readable here
      // A counter that went down was reset (a driver reload): no change can be said for it.
      const std::uint64_t delta = a->second >= b->second ? a->second - b->second : 0;
      c.counters[std::string("health_") + name] += static_cast<double>(delta);
      if (delta > 0) c.moved.push_back(g.gpu + ": " + in_words(name, delta) + moved_links(g.before, g.after, name));
      const bool fatal =
          (std::string(name) == "ecc_uncorrected" || std::string(name) == "remapped_rows_uncorrectable" ||
           std::string(name) == "retired_pages_dbe");
      if (fatal && delta > 0) failures.push_back(g.gpu + ": " + in_words(name, delta));
    }
    if (g.after.remap_pending && g.after.remap_failure) {
      any_remap = true;
      pending = std::max(pending, *g.after.remap_pending ? 1.0 : 0.0);
      failed = std::max(failed, *g.after.remap_failure ? 1.0 : 0.0);
      if (*g.after.remap_pending && !g.before.remap_pending.value_or(false))
        failures.push_back(g.gpu + ": a row remap became pending (the GPU needs a reset)");
      if (*g.after.remap_failure && !g.before.remap_failure.value_or(false))
        failures.push_back(g.gpu + ": a row remap failed");
    }
    if (g.before.links_up && g.after.links_up) {
      any_links = true;
      std::string down;
      int n = 0;
      for (unsigned link : *g.before.links_up)
        if (std::find(g.after.links_up->begin(), g.after.links_up->end(), link) == g.after.links_up->end()) {
          down += (down.empty() ? "" : ", ") + std::to_string(link);
          ++n;
        }
      links_down += n;
      if (n > 0) c.moved.push_back(g.gpu + ": NVLink link" + (n > 1 ? "s " : " ") + down + " went down");
    }
    if (g.after.xid_unsupported.empty()) {
      any_xid = true;
      xid_count += static_cast<double>(g.after.xids.size());
      if (!g.after.xids.empty()) {
        std::string list;
        for (unsigned long long x : g.after.xids) list += (list.empty() ? "" : ", ") + std::to_string(x);
        failures.push_back(g.gpu + ": critical XID " + list);
        c.moved.push_back(g.gpu + ": XID " + list);
      }
    }
  }
  if (any_remap) {
    c.counters["health_remap_pending"] = pending;
    c.counters["health_remap_failure"] = failed;
  }
  if (any_xid) c.counters["health_xid_events"] = xid_count;
  if (any_links) c.counters["health_nvlink_links_down"] = links_down;
  for (const std::string& f : failures) c.failure += (c.failure.empty() ? "" : "; ") + f;
  if (!c.failure.empty()) c.failure = "health: " + c.failure + " during the case: its figure is not trusted";
  return c;
}

std::string health_support(const HealthReading& r) {
  std::string out;
  auto add = [&out](const std::string& name, const std::string& state) {
    out += (out.empty() ? "" : "; ") + name + ": " + state;
  };
  for (const char* name : kCounters) {
    const auto u = r.unsupported.find(name);
    add(name, u == r.unsupported.end() ? "ok" : u->second);
  }
  add("xid_events", r.xid_unsupported.empty() ? "ok" : r.xid_unsupported);
  return out;
}

}  // namespace triaudit
