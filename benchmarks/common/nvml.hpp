// NVML read through the driver's own library (libnvidia-ml.so.1), loaded at run time: the
// build needs no NVML, and a machine without it still runs, reporting "unknown" fields.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

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
  static std::optional<std::string> driver_version();

 private:
  void* handle_ = nullptr;
  std::string status_;
};

}  // namespace triaudit
