// What each case says of itself in the result file (JSON schema 2): the entry field "triaudit"
// holds its axes (the name's parts, and any a case adds, e.g. an LLM layer's m, n, k), the counter
// it is judged on, its scope (one GPU or a node) and the headline figure it may stand for, so a
// reader needs no name grammar. nvbench's axis and summary tags are the model.
//
//   "triaudit": {"axes": {"op": "triad", "variant": "fp32", "cache": "cold", "bytes": "1073741824"},
//                "judged": "bytes_per_second", "scope": "gpu", "headline": "triad"}
//
// `--describe-cases` prints the same description of every registered case as a JSON array
// (no device needed), which `triaudit run --dry-run` reads for the shapes it models.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace triaudit {

struct CaseDescription {
  std::string judged;    // the counter it is judged on; "" = the first of kJudgedCounters it reports
  std::string headline;  // the headline figure it may stand for (the Python corners' key), "" none
  std::vector<std::pair<std::string, std::string>> axes;  // beyond the name's own
};

// The counters a case may be judged on, in order of preference: the same list as the Python
// package's results/counters.py JUDGED (a test holds them together). time_s: every case has it.
extern const std::vector<std::string> kJudgedCounters;

// Called by register_case for every case, in registration order; `describe_case` adds to it.
void note_case(const std::string& name);
void describe_case(const std::string& name, CaseDescription d);
// "gpu" (default) or "node": set once by the suite from its SuiteSpec.
void set_case_scope(const std::string& scope);

// The JSON object (text) of the case `name` (a registered name; Google Benchmark's suffixes such
// as /manual_time are ignored) reporting `counters` (name, value); an errored case passes none.
std::string case_json(const std::string& name, const std::map<std::string, double>& counters);
// Every registered case's description, as a JSON array with its name (`--describe-cases`).
std::string describe_all_cases();
// Inserts `"triaudit": <field>,` as the first member of the first JSON object in `run_text` (one
// run as Google Benchmark's JSON reporter writes it); the text unchanged when it holds no object.
std::string with_case_field(const std::string& run_text, const std::string& field);

}  // namespace triaudit
