// The result file (--benchmark_out), written by triaudit instead of Google Benchmark, so that
//  - a finished case survives its executable being killed: each case is appended and fsync'd the
//    moment it ends, to `<file>.partial`; a killed run leaves a valid prefix (whole cases) there,
//    which `triaudit run` turns into `<file>` and the readers read with a warning;
//  - the file appears under its name only when whole: `<file>.partial` is renamed at the end;
//  - nothing a user had is overwritten: an existing `<file>` (or `.partial`) is refused before
//    anything runs, unless --force;
//  - a run that matches no case writes nothing (Google Benchmark truncates the file first).
// Google Benchmark opens --benchmark_out itself and truncates it: the flag is taken out of argv,
// and the library is handed /dev/null as its file with this reporter as the file reporter, so its
// own display output (console, colours, --benchmark_format) is untouched.
#pragma once
#include <benchmark/benchmark.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace triaudit {

struct ResultFileRequest {
  std::string path;  // the --benchmark_out value
};

// Takes --benchmark_out=FILE and --benchmark_out_format=FMT out of `args` (argv, null-terminated);
// returns the request when a file was asked for. Throws FlagError (flags.hpp) for an empty name or
// a format other than json (triaudit's readers take JSON only).
std::optional<ResultFileRequest> take_result_file_flags(std::vector<char*>& args);

// "" when `path` may be written, otherwise why not (it exists, its .partial exists, its folder
// does not or cannot be written to, it is a folder). `force`: an existing file may be replaced.
std::string result_file_refusal(const std::string& path, bool force);

class DurableJsonReporter : public benchmark::JSONReporter {
 public:
  DurableJsonReporter(std::string path, bool force);
  ~DurableJsonReporter() override;
  DurableJsonReporter(const DurableJsonReporter&) = delete;
  DurableJsonReporter& operator=(const DurableJsonReporter&) = delete;

  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& reports) override;
  void Finalize() override;

  int cases_written() const { return cases_; }  // cases whose write succeeded
  // "" while everything was written; otherwise what failed (disk full, ...): the run must fail.
  const std::string& error() const { return error_; }
  bool finished() const { return finished_; }  // renamed into place, whole

 private:
  void write_through(const std::string& text);
  std::ostringstream buffer_;  // what the JSON reporter writes in one call, then to the file
  std::string path_, partial_;
  bool force_ = false, finished_ = false;
  int fd_ = -1, cases_ = 0;
  std::string error_;
};

}  // namespace triaudit
