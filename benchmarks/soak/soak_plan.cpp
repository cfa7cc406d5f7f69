#include "soak_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "names.hpp"

namespace triaudit {

const char* workload_key(Workload w) {
  switch (w) {
    case Workload::Gemm:
      return "gemm";
    case Workload::Triad:
      return "triad";
    case Workload::H2D:
      return "h2d";
    case Workload::D2H:
      return "d2h";
    case Workload::P2P:
      return "p2p";
  }
  return "?";
}

std::string soak_case_name(Workload w, const SoakPlan& p) {
  switch (w) {
    case Workload::Gemm:
      return BenchName("soak", "gemm", "bf16")
          .arg("impl", "ladder_l" + std::to_string(p.gemm_level))
          .arg("m", p.gemm_dim)
          .arg("n", p.gemm_dim)
          .arg("k", p.gemm_dim)
          .str();
    case Workload::Triad:
      // Its arrays are sized by the device's L2 (triad_elements_for): the name says so, the
      // counter working_set_bytes says how large they were.
      return BenchName("soak", "stream", "triad").arg("type", "fp32").arg("array", "2xL2").str();
    case Workload::H2D:
    case Workload::D2H:
    case Workload::P2P:
      return BenchName("soak", "copy", workload_key(w)).arg("bytes", p.copy_bytes).str();
  }
  return "";
}

std::uint64_t triad_elements_for(std::uint64_t l2_bytes) {
  constexpr std::uint64_t kTile = 1ull << 18;  // elements of one hash tile (buffer_layout)
  const std::uint64_t bytes = std::max<std::uint64_t>(2 * l2_bytes, 64ull << 20);
  const std::uint64_t elements = (bytes + 3) / 4;
  return (elements + kTile - 1) / kTile * kTile;
}

double workload_work(Workload w, const SoakPlan& p) {
  const double d = static_cast<double>(p.gemm_dim);
  switch (w) {
    case Workload::Gemm:
      return 2.0 * d * d * d;
    case Workload::Triad:
      return 3.0 * 4.0 * static_cast<double>(p.triad_elements);
    case Workload::H2D:
    case Workload::D2H:
      return static_cast<double>(p.copy_bytes);
    case Workload::P2P:
      return 2.0 * static_cast<double>(p.copy_bytes);
  }
  return 0;
}

int triads_per_cycle(int gemms_per_cycle, double gemm_seconds, double triad_seconds, double triad_share,
                     int max_triads) {
  if (!(gemm_seconds > 0) || !(triad_seconds > 0) || !(triad_share > 0) || !(triad_share < 1)) return 1;
  const double want = gemms_per_cycle * gemm_seconds * triad_share / ((1 - triad_share) * triad_seconds);
  return static_cast<int>(std::clamp(std::lround(want), 1L, static_cast<long>(max_triads)));
}

void WorkloadTally::add(const WorkloadTally& o) {
  items += o.items;
  work += o.work;
  op_seconds += o.op_seconds;
  deviating += o.deviating;
  checked += o.checked;
  for (const Deviation& d : o.deviations)
    if (static_cast<int>(deviations.size()) < kDeviationsKept) deviations.push_back(d);
  if (o.checked > 0) last_hash = o.last_hash;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string utc_iso(double unix_s) {
  const double whole = std::floor(unix_s);
  const auto t = static_cast<std::time_t>(whole);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  const int ms = std::clamp(static_cast<int>(std::lround((unix_s - whole) * 1000.0)), 0, 999);
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

namespace {

const char* operation_word(Workload w) {
  switch (w) {
    case Workload::Gemm:
      return "GEMMs";
    case Workload::Triad:
      return "triads";
    case Workload::H2D:
      return "host-to-device copies";
    case Workload::D2H:
      return "device-to-host copies (checked)";
    case Workload::P2P:
      return "peer round trips";
  }
  return "operations";
}

std::string tile_words(const TileDifference& t) {
  std::ostringstream os;
  os << "tile " << t.tile << " (rows " << t.row0 << "-" << t.row0 + t.rows - 1;
  if (t.cols > 1 || t.col0 > 0) os << ", cols " << t.col0 << "-" << t.col0 + t.cols - 1;
  os << ") hash " << hex64(t.got) << " expected " << hex64(t.expected);
  return os.str();
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  std::ostringstream os;
  os.precision(12);
  os << v;
  return os.str();
}

std::string deviation_json(const Deviation& d) {
  std::ostringstream os;
  os << "{\"item\":" << d.item << ",\"time_unix\":" << number(d.time_unix)
     << ",\"time_utc\":" << json_string(utc_iso(d.time_unix)) << ",\"differing_tiles\":" << d.differing_tiles
     << ",\"tiles\":[";
  for (std::size_t i = 0; i < d.tiles.size(); ++i) {
    const TileDifference& t = d.tiles[i];
    os << (i ? "," : "") << "{\"tile\":" << t.tile << ",\"row0\":" << t.row0 << ",\"rows\":" << t.rows
       << ",\"col0\":" << t.col0 << ",\"cols\":" << t.cols << ",\"got\":\"" << hex64(t.got) << "\",\"expected\":\""
       << hex64(t.expected) << "\"}";
  }
  os << "],\"diagnosis\":" << json_string(d.diagnosis) << "}";
  return os.str();
}

}  // namespace

std::string describe_deviations(Workload w, long long window, const WorkloadTally& t) {
  std::ostringstream os;
  os << "sdc: " << t.deviating << " of " << t.checked << " " << operation_word(w) << " in window " << window
     << " differed, bit for bit, from what they must be";
  for (std::size_t i = 0; i < t.deviations.size() && i < 3; ++i) {
    const Deviation& d = t.deviations[i];
    os << (i ? "; " : ": ") << "operation " << d.item << " at " << utc_iso(d.time_unix) << ", " << d.differing_tiles
       << " tile(s)";
    if (!d.tiles.empty()) os << ", " << tile_words(d.tiles.front());
    if (!d.diagnosis.empty()) os << "; " << d.diagnosis;
  }
  if (t.deviations.size() > 3) os << "; " << t.deviations.size() - 3 << " more in the hash log";
  return os.str();
}

std::string reference_line(const ReferenceRecord& r) {
  std::ostringstream os;
  os << "{\"record\":\"reference\",\"time_unix\":" << number(r.time_unix)
     << ",\"time_utc\":" << json_string(utc_iso(r.time_unix)) << ",\"gpu_uuid\":" << json_string(r.gpu_uuid)
     << ",\"gpu_name\":" << json_string(r.gpu_name) << ",\"case\":" << json_string(r.gemm_case)
     << ",\"first_window\":" << r.first_window << ",\"inputs\":" << json_string(r.inputs)
     << ",\"fp64_check\":" << json_string(r.fp64_check) << ",\"rows\":" << r.rows << ",\"cols\":" << r.cols
     << ",\"tile_rows\":" << r.tile_rows << ",\"tile_cols\":" << r.tile_cols << ",\"elem_bytes\":" << r.elem_bytes;
  std::uint64_t combined = 0;
  for (const std::uint64_t h : r.tile_hashes) combined ^= h;
  os << ",\"combined\":\"" << hex64(combined) << "\",\"tile_hashes\":\"";
  for (std::size_t i = 0; i < r.tile_hashes.size(); ++i) os << (i ? " " : "") << hex64(r.tile_hashes[i]);
  os << "\"}";
  return os.str();
}

std::string window_line(const WindowRecord& r) {
  std::ostringstream os;
  os << "{\"record\":\"window\",\"window\":" << r.window << ",\"start_unix\":" << number(r.start_unix)
     << ",\"end_unix\":" << number(r.end_unix) << ",\"end_utc\":" << json_string(utc_iso(r.end_unix))
     << ",\"sm_clock_mean_mhz\":" << number(r.sm_clock_mean_mhz) << ",\"power_mean_w\":" << number(r.power_mean_w)
     << ",\"temperature_end_c\":" << r.temperature_end_c << ",\"throttled\":" << (r.throttled ? "true" : "false")
     << ",\"clock_reasons\":" << json_string(r.clock_reasons) << ",\"error\":" << json_string(r.error)
     << ",\"workloads\":{";
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    const auto& [w, name] = r.cases[i];
    const WorkloadTally& t = r.tallies[static_cast<std::size_t>(w)];
    os << (i ? "," : "") << json_string(workload_key(w)) << ":{\"case\":" << json_string(name)
       << ",\"items\":" << t.items << ",\"checked\":" << t.checked << ",\"rate\":" << number(t.rate())
       << ",\"seconds_per_op\":" << number(t.seconds_per_op()) << ",\"last_hash\":\"" << hex64(t.last_hash)
       << "\",\"deviating\":" << t.deviating << ",\"deviations\":[";
    for (std::size_t j = 0; j < t.deviations.size(); ++j) os << (j ? "," : "") << deviation_json(t.deviations[j]);
    os << "]}";
  }
  os << "}}";
  return os.str();
}

}  // namespace triaudit
