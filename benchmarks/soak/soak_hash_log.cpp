#include "soak_hash_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace triaudit {

HashLog::HashLog(const std::string& path, bool replace) : path_(path) {
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (replace ? O_TRUNC : O_EXCL);
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0)
    error_ = errno == EEXIST ? path + " exists: refusing to overwrite it (--force replaces it)"
                             : path + ": " + std::strerror(errno);
}

HashLog::~HashLog() {
  if (fd_ >= 0) ::close(fd_);
}

bool HashLog::write_line(const std::string& json) {
  if (fd_ < 0) return false;
  const std::string line = json + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = path_ + ": " + std::strerror(errno);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0) {
    error_ = path_ + ": fsync: " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace triaudit
