// TRIAUDIT_CUBLAS(expr): like TRIAUDIT_CUDA for cuBLAS / cuBLASLt status codes.
#pragma once
#include <cublas_api.h>

#include <string>

#include "error.hpp"

namespace triaudit::detail {
inline void check_cublas(cublasStatus_t status, const char* file, int line, const char* expr) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(checked_call_message(
      file, line, expr, std::string(cublasGetStatusName(status)) + " (" + cublasGetStatusString(status) + ")"));
}
}  // namespace triaudit::detail

#define TRIAUDIT_CUBLAS(expr) ::triaudit::detail::check_cublas((expr), __FILE__, __LINE__, #expr)
