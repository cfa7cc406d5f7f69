// Where the process runs: CPU model, current CPU and NUMA node, the GPU's NUMA node (from
// sysfs), and binding the process to the GPU's node. Linux; "unknown" elsewhere.
#pragma once
#include <string>
#include <vector>

#include "device_description.hpp"

namespace triaudit {

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}. Throws std::invalid_argument on malformed text.
std::vector<int> parse_cpu_list(const std::string& text);

// sysfs path of a PCI device from CUDA's bus id ("0000:3B:00.0" -> "0000:3b:00.0").
std::string sysfs_pci_name(const std::string& cuda_bus_id);

// NUMA node of the GPU, -1 when unknown (no NUMA, or not Linux).
int gpu_numa_node(const std::string& cuda_bus_id);

// Restricts the process to the CPUs of `node`; returns a sentence saying what happened.
std::string bind_to_numa_node(int node);

// The first line of a (sysfs) file, "" when it cannot be read.
std::string read_first_line(const std::string& path);

ContextEntries host_context_entries(const std::string& cuda_bus_id);

}  // namespace triaudit
