// What the machine looks like between its GPUs, read once before the cases run: CUDA's peer
// access per ordered pair (with NVML's reason when there is none), the link (NVLink count or the
// PCIe common ancestor, in nvidia-smi topo's words), and per GPU its name, NUMA node, nearby CPUs
// and NVLink states. Feeds the JSON context and the cases' skip reasons.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nvml.hpp"
#include "p2p_catalogue.hpp"

namespace triaudit {

struct P2pMachine {
  int visible = 0;                                // CUDA devices visible to the process
  int covered = 0;                                // of them, the ones the catalogue names (fewer than --max-gpus)
  std::vector<std::unique_ptr<NvmlDevice>> nvml;  // per CUDA ordinal < covered
  std::vector<GpuTopology> gpus;                  // per CUDA ordinal < covered
  std::vector<std::vector<PairTopology>> pairs;   // [i][j], i != j
  std::vector<std::vector<bool>> can_access;      // cudaDeviceCanAccessPeer(i, j)
};

// Never throws for an unreadable field: it says "unknown (...)" instead. Throws only when CUDA
// itself fails (the device count, a bus id).
P2pMachine discover_machine(int max_gpus);

}  // namespace triaudit
