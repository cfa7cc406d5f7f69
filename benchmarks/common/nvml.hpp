// NVML read through the driver's own library (libnvidia-ml.so.1), loaded at run time: the
// build needs no NVML, and a machine without it still runs, reporting "unknown" fields.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
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
  // The indices of the links reported active; nullopt without NVLink support.
  std::optional<std::vector<unsigned>> nvlink_up_links() const;
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

  // Hardware error counters (health.hpp reads them around every case). Each answers nullopt with
  // NVML's reason in `why` (NOT_SUPPORTED on most GeForce boards) when it cannot.
  // Volatile ECC error counts (since the driver loaded), corrected or uncorrected.
  std::optional<std::uint64_t> ecc_volatile(bool uncorrected, std::string* why) const;
  struct RemappedRows {
    unsigned correctable = 0, uncorrectable = 0;
    bool pending = false, failure = false;
  };
  // Row remapping (A100 and newer); older boards retire pages instead.
  std::optional<RemappedRows> remapped_rows(std::string* why) const;
  // Pages retired for multiple single-bit errors, or for a double-bit error (before A100).
  std::optional<unsigned> retired_pages(bool double_bit, std::string* why) const;
  std::optional<unsigned> pcie_replays(std::string* why) const;
  // One NVLink error counter (nvml_abi::kNvLink*) of each link that answers (link -> count).
  std::optional<std::map<unsigned, std::uint64_t>> nvlink_errors_by_link(int counter, std::string* why) const;
  // The XIDs of critical-error events since the previous call: the first call registers for
  // them (NVML queues events in the set from then on), later calls drain the queue.
  std::optional<std::vector<unsigned long long>> drain_xids(std::string* why);
  // The library loaded (libnvidia-ml.so.1, or TRIAUDIT_NVML_LIBRARY's: the tests' double).
  static std::string library();

 private:
  void* handle_ = nullptr;
  std::string status_;
  std::shared_ptr<void> xid_events_;  // the event set, freed with the last copy
  std::string xid_why_;               // why the set could not be made (once: not retried per case)
};

}  // namespace triaudit
