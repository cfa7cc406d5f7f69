// Finding and describing the device the suite measures, through CUDA and NVML.
#pragma once
#include <memory>
#include <string>

#include "device_description.hpp"
#include "nvml.hpp"

namespace triaudit {

struct DeviceProbe {
  bool available = false;
  std::string reason;  // why not, when not available
  int count = 0;
};

// Asks CUDA for devices and checks `ordinal` exists. Never throws: a missing driver, no device
// or a broken installation come back as available=false with CUDA's own words.
DeviceProbe probe_device(int ordinal);

// Everything DeviceDescription holds, for device `ordinal` (CUDA first, NVML where readable).
DeviceDescription describe_device(int ordinal, const NvmlDevice& nvml);

// Power limits (enforced and default, W) and the temperature when the run starts: a card capped
// at 500 W is visible beside one at 700 W. Unreadable fields say NVML's reason.
ContextEntries power_context_entries(const NvmlDevice& nvml);

// The device being measured: chosen once by suite_main, read by every benchmark.
struct DeviceContext {
  DeviceDescription description;
  std::unique_ptr<NvmlDevice> nvml;
};

}  // namespace triaudit
