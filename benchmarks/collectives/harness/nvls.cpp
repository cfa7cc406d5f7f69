#include "nvls.hpp"

#include <string>

namespace triaudit {

std::string nvls_unavailable_reason(const NvlsFacts& f) {
  if (!f.collective_has_nvls)
    return "NCCL has no NVLS algorithm for " + f.collective + " (NVLS serves allreduce, allgather and reduce_scatter)";
  const std::string enable = f.nvls_enable ? f.nvls_enable : "";
  if (enable == "0") return "NCCL_NVLS_ENABLE=0 turns NVLS off";
  if (f.ranks < 2) return "NVLS needs 2 or more GPUs in the communicator; this case has " + std::to_string(f.ranks);
  if (enable == "1") return "";  // NCCL then assumes support without asking the driver
  if (f.multicast_supported == 0)
    return "GPU " + std::to_string(f.device_without_multicast) +
           " has no NVLink SHARP multicast (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0: NVLS needs an NVSwitch "
           "system with multicast, Hopper or newer, and a CUDA 12.1+ driver); NCCL logs \"NVLS multicast support is "
           "not available\"";
  if (f.multicast_supported < 0)
    return "whether the GPUs support NVLink SHARP multicast is unknown (" + f.unknown_why + ")";
  return "";
}

}  // namespace triaudit
