// Build facts baked in at configure time (version.cpp.in).
#pragma once
#include <string>

namespace triaudit {
std::string suite_version();
std::string suite_git_commit();
std::string toolkit_version();
std::string cublas_build_version();
std::string nccl_build_version();  // "not built" when configured without NCCL
std::string cuda_architectures_built();
}  // namespace triaudit
