// Whether NCCL will offer NVLS (NVLink SHARP) to a case, so an `algo:nvls` case is skipped with
// the plain reason instead of failing inside NCCL ("no algorithm/protocol available ... NCCL_ALGO
// was set to NVLS"). NCCL decides at communicator creation (src/transport/nvls.cc, ncclNvlsInit)
// and says so only in its INFO log ("NVLS multicast support is [not ]available on dev N"): off
// when NCCL_NVLS_ENABLE=0; assumed on when NCCL_NVLS_ENABLE=1; otherwise (the default, 2) on when
// the driver reports CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED for the GPU (NVSwitch with multicast:
// Hopper and newer, CUDA 12.1+ driver) and the communicator has GPUs to reduce across. These are
// the same facts, asked of the same driver, before the case runs. Plain host code.
#pragma once
#include <string>

namespace triaudit {

struct NvlsFacts {
  std::string collective;             // "allgather"
  bool collective_has_nvls = false;   // NCCL has an NVLS algorithm for it
  int ranks = 1;                      // of the case's communicator
  const char* nvls_enable = nullptr;  // NCCL_NVLS_ENABLE as set, or null
  int multicast_supported = -1;       // every GPU of this process: 1 yes, 0 one lacks it, -1 unknown
  int device_without_multicast = -1;  // the first GPU that lacks it (0)
  std::string unknown_why;            // why multicast_supported is -1
};

// Empty when NCCL should offer NVLS; otherwise the reason, for a skip.
std::string nvls_unavailable_reason(const NvlsFacts& f);

}  // namespace triaudit
