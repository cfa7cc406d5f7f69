#include "result_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>

#include "case_description.hpp"
#include "flags.hpp"

namespace triaudit {
namespace {

bool exists(const std::string& p) {
  struct stat st{};
  return ::lstat(p.c_str(), &st) == 0;
}

bool is_dir(const std::string& p) {
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string folder_of(const std::string& p) {
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
}

std::string flag_value(const char* arg, const char* name) {
  const std::size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0) return {};
  return arg[n] == '=' ? std::string(arg + n + 1) : std::string();
}

}  // namespace

std::optional<ResultFileRequest> take_result_file_flags(std::vector<char*>& args) {
  std::optional<ResultFileRequest> request;
  std::string format = "json";
  std::vector<char*> kept;
  for (char* a : args) {
    if (a == nullptr) continue;
    if (std::strncmp(a, "--benchmark_out_format", 22) == 0) {
      format = flag_value(a, "--benchmark_out_format");
      continue;
    }
    if (std::strncmp(a, "--benchmark_out", 15) == 0 && (a[15] == '=' || a[15] == '\0')) {
      request = ResultFileRequest{flag_value(a, "--benchmark_out")};
      if (request->path.empty()) throw FlagError("--benchmark_out needs a file name: --benchmark_out=FILE");
      continue;
    }
    kept.push_back(a);
  }
  if (format != "json")
    throw FlagError("--benchmark_out_format=" + format + ": triaudit writes its result file as JSON only");
  kept.push_back(nullptr);
  args = kept;
  return request;
}

std::string result_file_refusal(const std::string& path, bool force) {
  if (is_dir(path)) return path + " is a folder; --benchmark_out needs a file name";
  if (!is_dir(folder_of(path))) return "the folder of " + path + " does not exist";
  if (exists(path + ".partial"))
    return path + ".partial exists: the cases of an interrupted run are there (triaudit run turns it into " + path +
           "); move it away first" + (force ? "" : ", or pass --force to replace it");
  if (exists(path) && !force)
    return path + " exists (an earlier result?): refusing to overwrite it; --force replaces it";
  // The folder must take a new file now, before any case runs (permission, read-only filesystem):
  // a file is made there and removed again, so that a run that matches no case leaves nothing.
  const std::string probe = path + ".partial";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot create " + probe + " in " + folder_of(path) + ": " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

DurableJsonReporter::DurableJsonReporter(std::string path, bool force)
    : path_(std::move(path)), partial_(path_ + ".partial"), force_(force) {}

DurableJsonReporter::~DurableJsonReporter() {
  if (fd_ >= 0) ::close(fd_);
}

void DurableJsonReporter::write_through(const std::string& text) {
  if (!error_.empty()) return;
  if (fd_ < 0) {  // opened at the first write: a run that reports nothing leaves nothing behind
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force_ ? O_TRUNC : O_EXCL);
    fd_ = ::open(partial_.c_str(), flags, 0644);
    if (fd_ < 0) {
      error_ = "cannot create " + partial_ + ": " + std::strerror(errno);
      return;
    }
  }
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = "writing " + partial_ + " failed: " + std::strerror(errno);
      return;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0) error_ = "fsync of " + partial_ + " failed: " + std::strerror(errno);
}

bool DurableJsonReporter::ReportContext(const Context& context) {
  SetOutputStream(&buffer_);  // Google Benchmark flushes this stream after the call: a member
  const bool ok = JSONReporter::ReportContext(context);
  write_through(buffer_.str());
  buffer_.str("");
  return ok;
}

void DurableJsonReporter::ReportRuns(const std::vector<Run>& reports) {
  SetOutputStream(&buffer_);  // Google Benchmark flushes this stream after the call: a member
  // A run at a time, each with what its case says of itself (case_description.hpp, schema 2).
  for (const Run& run : reports) {
    JSONReporter::ReportRuns({run});
    std::map<std::string, double> counters;
    for (const auto& [k, c] : run.counters) counters[k] = c.value;
    write_through(with_case_field(buffer_.str(), case_json(run.run_name.str(), counters)));
    buffer_.str("");
  }
  if (!reports.empty() && error_.empty()) ++cases_;  // on disk: a case whose write failed is not counted
}

void DurableJsonReporter::Finalize() {
  SetOutputStream(&buffer_);  // Google Benchmark flushes this stream after the call: a member
  JSONReporter::Finalize();
  write_through(buffer_.str());
  buffer_.str("");
  if (!error_.empty() || fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  // Into place only when whole. Without --force, link() refuses a file that appeared meanwhile.
  if (force_) {
    if (::rename(partial_.c_str(), path_.c_str()) != 0)
      error_ = "renaming " + partial_ + " to " + path_ + " failed: " + std::strerror(errno);
  } else if (::link(partial_.c_str(), path_.c_str()) != 0) {
    error_ = "cannot put the result in place as " + path_ + " (" + std::strerror(errno) + "); it is in " + partial_;
  } else {
    ::unlink(partial_.c_str());
  }
  finished_ = error_.empty();
}

}  // namespace triaudit
