// TRIAUDIT_NCCL(expr): like TRIAUDIT_CUDA for NCCL result codes, with NCCL's last error text.
#pragma once
#include <nccl.h>

#include <string>

#include "error.hpp"

namespace triaudit::detail {
inline void check_nccl(ncclResult_t status, const char* file, int line, const char* expr) {
  if (status == ncclSuccess) return;
  std::string msg = ncclGetErrorString(status);
  if (const char* last = ncclGetLastError(nullptr); last != nullptr && *last != '\0') {
    msg += ": ";
    msg += last;
  }
  throw Error(checked_call_message(file, line, expr, msg));
}
}  // namespace triaudit::detail

#define TRIAUDIT_NCCL(expr) ::triaudit::detail::check_nccl((expr), __FILE__, __LINE__, #expr)
