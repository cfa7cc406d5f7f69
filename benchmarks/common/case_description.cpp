#include "case_description.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace triaudit {

const std::vector<std::string> kJudgedCounters = {
    "flops", "ops", "busbw", "bytes_per_second", "algbw", "hidden_fraction", "per_kernel_s", "time_s"};

namespace {

struct Registry {
  std::vector<std::string> order;
  std::map<std::string, CaseDescription> described;
  std::string scope = "gpu";
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// The registered name of a run: Google Benchmark appends /manual_time (and others) to it.
std::string registered_name(std::string name) {
  for (const char* suffix : {"/manual_time", "/real_time", "/process_time"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
      name.erase(name.size() - s.size());
  }
  return name;
}

std::string judged_of(const CaseDescription* d, const std::map<std::string, double>& counters) {
  if (d != nullptr && !d->judged.empty()) return d->judged;
  if (counters.empty()) return "";
  for (const std::string& c : kJudgedCounters) {
    const auto it = counters.find(c);
    if (it != counters.end() && !(c == "busbw" && it->second == 0.0)) return c;  // one rank has no bus
  }
  return "time_s";
}

}  // namespace

void note_case(const std::string& name) {
  Registry& r = registry();
  if (std::find(r.order.begin(), r.order.end(), name) == r.order.end()) r.order.push_back(name);
}

void describe_case(const std::string& name, CaseDescription d) { registry().described[name] = std::move(d); }

void set_case_scope(const std::string& scope) { registry().scope = scope; }

std::string case_json(const std::string& run_name, const std::map<std::string, double>& counters) {
  const std::string name = registered_name(run_name);
  const auto it = registry().described.find(name);
  const CaseDescription* d = it == registry().described.end() ? nullptr : &it->second;
  // The name's parts: <corner>/<op>/<variant>/<key>:<value>/... (names.hpp), as far as a name
  // outside the grammar (a test's, a user's) goes: a reporter must never throw over a name.
  std::vector<std::pair<std::string, std::string>> axes;
  std::size_t start = 0, index = 0;
  while (start <= name.size()) {
    const std::size_t slash = std::min(name.find('/', start), name.size());
    const std::string part = name.substr(start, slash - start);
    const std::size_t colon = part.find(':');
    if (index == 1 || index == 2)
      axes.emplace_back(index == 1 ? "op" : "variant", part);
    else if (index > 2 && colon != std::string::npos)
      axes.emplace_back(part.substr(0, colon), part.substr(colon + 1));
    ++index;
    start = slash + 1;
  }
  if (d != nullptr)
    for (const auto& [k, v] : d->axes)
      if (std::none_of(axes.begin(), axes.end(), [&](const auto& a) { return a.first == k; })) axes.emplace_back(k, v);
  std::ostringstream o;
  o << "{\"axes\": {";
  for (std::size_t i = 0; i < axes.size(); ++i)
    o << (i ? ", " : "") << json_string(axes[i].first) << ": " << json_string(axes[i].second);
  o << "}";
  const std::string judged = judged_of(d, counters);
  if (!judged.empty()) o << ", \"judged\": " << json_string(judged);
  o << ", \"scope\": " << json_string(registry().scope);
  if (d != nullptr && !d->headline.empty()) o << ", \"headline\": " << json_string(d->headline);
  o << "}";
  return o.str();
}

std::string describe_all_cases() {
  std::ostringstream o;
  o << "[";
  bool first = true;
  for (const std::string& name : registry().order) {
    o << (first ? "\n" : ",\n") << "  {\"name\": " << json_string(name) << ", \"triaudit\": " << case_json(name, {})
      << "}";
    first = false;
  }
  o << "\n]\n";
  return o.str();
}

std::string with_case_field(const std::string& run_text, const std::string& field) {
  const std::size_t open = run_text.find('{');
  if (open == std::string::npos) return run_text;
  std::size_t line_end = run_text.find('\n', open);
  if (line_end == std::string::npos) return run_text;
  // The members' indentation: that of the line after the brace (Google Benchmark's reporter
  // writes each member on its own line).
  const std::size_t next = line_end + 1;
  std::size_t indent_end = next;
  while (indent_end < run_text.size() && run_text[indent_end] == ' ') ++indent_end;
  const std::string indent = run_text.substr(next, indent_end - next);
  return run_text.substr(0, next) + indent + "\"triaudit\": " + field + ",\n" + run_text.substr(next);
}

}  // namespace triaudit
