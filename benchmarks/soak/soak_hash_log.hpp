// The soak's hash log: one JSON object per line (soak_plan.hpp's records), each written whole
// and flushed to disk (fsync) before the next, so a soak stopped by a reboot keeps every window
// it finished. Beside the result file: <--benchmark_out>.hashes. An existing log is refused
// unless replacing it was asked for (nothing a user had is overwritten). Host code, unit-tested.
#pragma once
#include <string>

namespace triaudit {

class HashLog {
 public:
  HashLog() = default;
  // Opens `path` for appending; "" (refused: it exists) or the reason in error().
  HashLog(const std::string& path, bool replace);
  ~HashLog();
  HashLog(const HashLog&) = delete;
  HashLog& operator=(const HashLog&) = delete;

  bool open() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }
  // One record; false (and error()) when it could not be written whole.
  bool write_line(const std::string& json);

 private:
  int fd_ = -1;
  std::string path_, error_;
};

// The log's name for a result file (its --benchmark_out).
inline std::string hash_log_path(const std::string& result_file) { return result_file + ".hashes"; }

}  // namespace triaudit
