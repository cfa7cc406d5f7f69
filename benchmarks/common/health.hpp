// Hardware error counters read before and after every case, per GPU the case uses: ECC, row
// remapping or page retirement, NVLink and PCIe errors, critical XID events. A figure measured
// while the memory corrupted data, or while the GPU reported a critical error, is not trusted:
// the case becomes an error with the reason. Corrected counts and replays are reported as
// counters (deltas over the case), for `gate` and the report to judge.
//
// Counters (JSON, per case; absent where NVML cannot read them, never 0 for "unknown"):
//   health_ecc_corrected, health_ecc_uncorrected           volatile ECC counts (nvmlDeviceGetTotalEccErrors)
//   health_remapped_rows_correctable, _uncorrectable       rows remapped (nvmlDeviceGetRemappedRows)
//   health_remap_pending, health_remap_failure             0/1 at the case's end, any GPU
//   health_retired_pages_sbe, health_retired_pages_dbe     pages retired (nvmlDeviceGetRetiredPages, pre-A100)
//   health_nvlink_crc_errors                               CRC flit + data errors, all links
//   (nvmlDeviceGetNvLinkErrorCounter) health_nvlink_replay_errors, health_nvlink_recovery_errors health_pcie_replays
//   nvmlDeviceGetPcieReplayCounter health_xid_events                                      critical XID events
//   (nvmlDeviceRegisterEvents)
// The case fails ("health: ...") on an uncorrected ECC error, a new uncorrectable remapped row, a
// remap that became pending, a remap failure that appeared, a double-bit retired page, or a
// critical XID during the case.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace triaudit {

class NvmlDevice;

// One GPU's counters at one moment.
struct HealthReading {
  std::map<std::string, std::uint64_t> counts;     // cumulative counters by their JSON name (no "health_")
  std::map<std::string, std::string> unsupported;  // counter -> NVML's reason
  std::optional<bool> remap_pending, remap_failure;
  std::vector<unsigned long long> xids;  // critical XID events since the previous reading
  std::string xid_unsupported;           // why XID events cannot be read ("" when they can)
  // The NVLink counters link by link (the same names as `counts`), so a label names the link.
  std::map<std::string, std::map<unsigned, std::uint64_t>> by_link;
  std::optional<std::vector<unsigned>> links_up;  // the links reported active; nullopt: no NVLink
};

// Reads every counter of `nvml` (and drains its XID queue).
HealthReading read_health(NvmlDevice& nvml);

// What a case did to the counters of the GPUs it used: `gpus` are (name, before, after).
struct HealthChange {
  std::map<std::string, double> counters;  // health_* as above, summed over the GPUs
  std::vector<std::string> moved;          // "GPU 1: 12 PCIe replays", for the label
  std::string failure;                     // why the case's figure is not trusted; "" when it is
};
struct GpuReadings {
  std::string gpu;  // "GPU 0"
  HealthReading before, after;
};
HealthChange health_change(const std::vector<GpuReadings>& gpus);

// "ecc_corrected: ok; remapped_rows: NOT_SUPPORTED; ..." for the context: which counters this
// GPU has, so a missing counter in a case is never read as zero.
std::string health_support(const HealthReading& r);

}  // namespace triaudit
