// TRIAUDIT_CUDA(expr): runs a CUDA runtime call and throws triaudit::Error with file, line,
// the call's text and CUDA's own name and description of the error.
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "error.hpp"

namespace triaudit::detail {
inline void check_cuda(cudaError_t status, const char* file, int line, const char* expr) {
  if (status == cudaSuccess) return;
  throw Error(checked_call_message(file, line, expr,
                                   std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")"));
}
}  // namespace triaudit::detail

#define TRIAUDIT_CUDA(expr) ::triaudit::detail::check_cuda((expr), __FILE__, __LINE__, #expr)

// After a kernel launch: launch-configuration errors surface here, not at the next sync.
#define TRIAUDIT_CUDA_LAUNCH() TRIAUDIT_CUDA(cudaGetLastError())
