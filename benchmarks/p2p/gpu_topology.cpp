#include "gpu_topology.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <fstream>

#include "cuda_check.hpp"
#include "host_info.hpp"

namespace triaudit {
namespace {

std::string cuda_bus_id(int ordinal) {
  char bus[32] = {};
  TRIAUDIT_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal));
  return bus;
}

GpuNvLinks links_of(const NvmlDevice& d) {
  GpuNvLinks out;
  std::string why;
  const auto links = d.nvlinks(&why);
  if (!links) {
    out.why = why;
    return out;
  }
  out.readable = true;
  for (const auto& l : *links) {
    ++out.total;
    if (!l.active) continue;
    ++out.active;
    if (l.remote_type == 2)
      ++out.to_switch;
    else if (l.remote_type == 0 && !l.remote_bus_id.empty())
      ++out.to_gpu[sysfs_pci_name(l.remote_bus_id)];
  }
  return out;
}

// The CPUs near the GPU: the kernel's own list for the PCI device, else NVML's mask.
std::string cpu_affinity_of(const std::string& bus, const NvmlDevice& d) {
  const std::string sysfs = read_first_line("/sys/bus/pci/devices/" + sysfs_pci_name(bus) + "/local_cpulist");
  if (!sysfs.empty()) return sysfs;
  std::string why;
  if (const auto mask = d.cpu_affinity(&why)) {
    const std::string list = format_cpu_list(cpus_of_mask(*mask));
    if (!list.empty()) return list;
    why = "empty CPU mask";
  }
  return "unknown (no local_cpulist in sysfs; NVML: " + why + ")";
}

// Why GPU i cannot reach GPU j's memory, in NVML's words (read, then write capability).
std::string no_access_reason(const NvmlDevice& a, const NvmlDevice& b) {
  for (int caps : {0, 1}) {  // NVML_P2P_CAPS_INDEX_READ, _WRITE
    std::string why;
    const auto s = a.p2p_status(b, caps, &why);
    if (!s) return "no (CUDA: cudaDeviceCanAccessPeer is 0; NVML unreadable: " + why + ")";
    if (*s != 0) return "no (NVML: " + p2p_status_words(*s) + ")";
  }
  return "no (CUDA: cudaDeviceCanAccessPeer is 0; NVML reports peer read and write ok)";
}

}  // namespace

P2pMachine discover_machine(int max_gpus) {
  P2pMachine m;
  TRIAUDIT_CUDA(cudaGetDeviceCount(&m.visible));
  m.covered = std::min(m.visible, max_gpus);
  const auto n = static_cast<std::size_t>(m.covered);
  std::vector<std::string> bus(n);
  std::vector<GpuNvLinks> links(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int ordinal = static_cast<int>(i);
    bus[i] = cuda_bus_id(ordinal);
    m.nvml.push_back(std::make_unique<NvmlDevice>(bus[i], std::string()));
    links[i] = links_of(*m.nvml[i]);
    cudaDeviceProp p{};
    TRIAUDIT_CUDA(cudaGetDeviceProperties(&p, ordinal));
    const int node = gpu_numa_node(bus[i]);
    m.gpus.push_back({p.name, sysfs_pci_name(bus[i]), node < 0 ? "unknown" : std::to_string(node),
                      cpu_affinity_of(bus[i], *m.nvml[i]), nvlink_links_text(links[i])});
  }
  m.pairs.assign(n, std::vector<PairTopology>(n));
  m.can_access.assign(n, std::vector<bool>(n, false));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      int can = 0;
      TRIAUDIT_CUDA(cudaDeviceCanAccessPeer(&can, static_cast<int>(i), static_cast<int>(j)));
      m.can_access[i][j] = can != 0;
      std::string why;
      const auto level = m.nvml[i]->common_ancestor(*m.nvml[j], &why);
      const unsigned nv = nvlinks_between(links[i], sysfs_pci_name(bus[i]), links[j], sysfs_pci_name(bus[j]));
      m.pairs[i][j] = {link_name(nv, level, why), can ? "yes" : no_access_reason(*m.nvml[i], *m.nvml[j])};
    }
  return m;
}

}  // namespace triaudit
