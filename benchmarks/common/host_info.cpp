#include "host_info.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace triaudit {

std::string read_first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (f) std::getline(f, line);
  return line;
}

namespace {

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "unknown";
}

int node_of_cpu(int cpu) {
  for (int node = 0; node < 64; ++node) {
    std::ifstream f("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist");
    if (!f) continue;
    std::string list;
    std::getline(f, list);
    try {
      for (int c : parse_cpu_list(list))
        if (c == cpu) return node;
    } catch (const std::invalid_argument&) {
    }
  }
  return -1;
}
}  // namespace

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
    if (item.empty()) continue;
    const auto dash = item.find('-');
    try {
      std::size_t used = 0;
      if (dash == std::string::npos) {
        cpus.push_back(std::stoi(item, &used));
        if (used != item.size()) throw std::invalid_argument(item);
      } else {
        const int lo = std::stoi(item.substr(0, dash)), hi = std::stoi(item.substr(dash + 1));
        if (hi < lo) throw std::invalid_argument(item);
        for (int c = lo; c <= hi; ++c) cpus.push_back(c);
      }
    } catch (const std::exception&) {
      throw std::invalid_argument("not a CPU list: '" + text + "'");
    }
  }
  return cpus;
}

std::string sysfs_pci_name(const std::string& cuda_bus_id) {
  std::string s = cuda_bus_id;
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto colon = s.find(':');
  if (colon != std::string::npos && colon > 4) s = s.substr(colon - 4);  // 8-digit domain -> 4
  return s;
}

int gpu_numa_node(const std::string& cuda_bus_id) {
  const std::string v = read_first_line("/sys/bus/pci/devices/" + sysfs_pci_name(cuda_bus_id) + "/numa_node");
  try {
    return v.empty() ? -1 : std::stoi(v);
  } catch (const std::exception&) {
    return -1;
  }
}

std::string bind_to_numa_node(int node) {
  if (node < 0) return "not bound: the GPU's NUMA node is unknown";
  const std::string list = read_first_line("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist");
  cpu_set_t set;
  CPU_ZERO(&set);
  try {
    for (int c : parse_cpu_list(list)) CPU_SET(c, &set);
  } catch (const std::invalid_argument& e) {
    return std::string("not bound: ") + e.what();
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0) return "not bound: sched_setaffinity failed";
  // Memory too (nvbandwidth binds both): pages first touched from now on, pageable and pinned
  // host buffers included, come from the GPU's node. set_mempolicy(MPOL_BIND) through the system
  // call, so no libnuma is needed.
  constexpr int kMpolBind = 2;
  unsigned long mask[16] = {};
  if (node >= static_cast<int>(sizeof mask * 8))
    return "CPUs bound to NUMA node " + std::to_string(node) + "; memory not bound (node number too high)";
  mask[node / (8 * sizeof(unsigned long))] |= 1UL << (node % (8 * sizeof(unsigned long)));
  if (syscall(SYS_set_mempolicy, kMpolBind, mask, sizeof mask * 8 + 1) != 0)
    return "CPUs bound to NUMA node " + std::to_string(node) + " (" + list +
           "); memory not bound (set_mempolicy refused)";
  return "bound to the CPUs and memory of NUMA node " + std::to_string(node) + " (" + list + ")";
}

ContextEntries host_context_entries(const std::string& cuda_bus_id) {
  const int cpu = sched_getcpu();
  const int gpu_node = gpu_numa_node(cuda_bus_id);
  return {{"host_cpu_model", cpu_model()},
          {"host_cpu_at_start", cpu < 0 ? "unknown" : std::to_string(cpu)},
          {"host_numa_node_at_start", cpu < 0 ? "unknown" : std::to_string(node_of_cpu(cpu))},
          {"gpu_numa_node", gpu_node < 0 ? "unknown" : std::to_string(gpu_node)}};
}

}  // namespace triaudit
