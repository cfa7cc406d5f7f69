// NVML read through the driver's own library (libnvidia-ml.so.1), loaded at run time: the
// build needs no NVML, and a machine without it still runs, reporting "unknown" fields.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "energy.hpp"

namespace triaudit {

class NvmlDevice {
 public:
  // Finds the device with this PCI bus id (as cudaDeviceGetPCIBusId writes it) or UUID.
  // Never throws; check ok() and status().
  NvmlDevice(const std::string& pci_bus_id, const std::string& uuid);
  bool ok() const { return handle_ != nullptr; }
  const std::string& status() const { return status_; }

  std::optional<unsigned> sm_clock_mhz() const;
  std::optional<unsigned> sm_clock_max_mhz() const;
  std::optional<std::uint64_t> clock_event_reasons() const;
  std::optional<unsigned> pcie_gen_current() const;
  std::optional<unsigned> pcie_gen_max() const;
  std::optional<unsigned> pcie_width_current() const;
  std::optional<unsigned> pcie_width_max() const;
  // NVLink links reported active (of the 18 NVML can address); nullopt without NVLink support.
  std::optional<unsigned> nvlink_active_links() const;
  // Total energy since the driver loaded (mJ), with NVML's reason when unreadable (e.g. "Not Supported").
  EnergyReading total_energy() const;
  std::optional<unsigned> power_usage_mw() const;
  std::optional<unsigned> power_limit_enforced_mw() const;
  std::optional<unsigned> power_limit_default_mw() const;
  std::optional<unsigned> temperature_c() const;
  // NVML's words for a failed read of the optional getters above ("Not Supported", ...).
  std::string why_unreadable(const char* what) const;
  static std::optional<std::string> driver_version();

  // The interconnect (triaudit_p2p). Each answers nullopt with NVML's reason in `why` when it cannot.
  struct NvLinkLink {
    unsigned index = 0;
    bool active = false;
    std::string remote_bus_id;  // the far end's PCI bus id as NVML writes it (00000000:3B:00.0); "" unread
    int remote_type = -1;       // nvmlIntNvLinkDeviceType_t: 0 GPU, 1 IBM NPU, 2 NVSwitch; -1 unknown
  };
  // Every link NVML answers for (of the 18 it can address). An empty list: the GPU has no NVLink
  // (every link NOT_SUPPORTED).
  std::optional<std::vector<NvLinkLink>> nvlinks(std::string* why) const;
  // nvmlGpuP2PStatus_t towards `peer` for a capability index (0 read, 1 write, 2 NVLink).
  std::optional<int> p2p_status(const NvmlDevice& peer, int caps_index, std::string* why) const;
  // nvmlGpuTopologyLevel_t of the closest common ancestor with `peer` (0 board, 10 one switch, ... 50 system).
  std::optional<int> common_ancestor(const NvmlDevice& peer, std::string* why) const;
  // The CPUs close to the device (nvmlDeviceGetCpuAffinity) as 64-bit mask words, CPU c = bit c % 64 of word c / 64.
  std::optional<std::vector<std::uint64_t>> cpu_affinity(std::string* why) const;

 private:
  void* handle_ = nullptr;
  std::string status_;
};

}  // namespace triaudit
