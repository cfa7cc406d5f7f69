// The part of NVML's C interface triaudit calls, spelled out so the build needs no nvml.h: NVML is
// loaded at run time (nvml.cpp), and a machine without it still runs. Where the NVML headers are
// found at configure time (the CUDA toolkit's, or PyPI's nvidia-nvml-dev), nvml_abi_check.cpp
// compiles these declarations against them: every constant, struct layout and function signature
// below must match nvml.h, or the build fails.
#pragma once

#include <cstdint>

namespace triaudit::nvml_abi {

using Return = int;      // nvmlReturn_t (an enum: int-sized)
using Device = void*;    // nvmlDevice_t (an opaque pointer)
using EventSet = void*;  // nvmlEventSet_t

constexpr Return kSuccess = 0;
constexpr Return kNotSupported = 3;
constexpr Return kInsufficientSize = 7;
constexpr Return kTimeout = 10;
constexpr Return kFunctionNotFound = 13;
constexpr Return kUnknown = 999;
// NVML_ERROR_<name> for 0 .. 30 (nvml.h's nvmlReturn_t, CUDA 13), then 999 UNKNOWN.
constexpr int kReturnNames = 31;
extern const char* const kReturnName[kReturnNames];

constexpr int kClockSm = 1;               // NVML_CLOCK_SM
constexpr int kTemperatureGpu = 0;        // NVML_TEMPERATURE_GPU
constexpr int kMemoryErrorCorrected = 0;  // NVML_MEMORY_ERROR_TYPE_CORRECTED
constexpr int kMemoryErrorUncorrected = 1;
constexpr int kVolatileEcc = 0;                           // NVML_VOLATILE_ECC
constexpr int kRetiredMultipleSingleBit = 0;              // NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
constexpr int kRetiredDoubleBit = 1;                      // NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
constexpr int kNvLinkReplay = 0;                          // NVML_NVLINK_ERROR_DL_REPLAY
constexpr int kNvLinkRecovery = 1;                        // NVML_NVLINK_ERROR_DL_RECOVERY
constexpr int kNvLinkCrcFlit = 2;                         // NVML_NVLINK_ERROR_DL_CRC_FLIT
constexpr int kNvLinkCrcData = 3;                         // NVML_NVLINK_ERROR_DL_CRC_DATA
constexpr unsigned kNvLinkMax = 18;                       // NVML_NVLINK_MAX_LINKS
constexpr unsigned long long kEventXidCritical = 0x8ULL;  // nvmlEventTypeXidCriticalError

// nvmlPciInfo_t (the _v2/_v3 functions' layout).
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

// nvmlTemperature_v1_t, for nvmlDeviceGetTemperatureV (nvmlDeviceGetTemperature is deprecated in
// NVML 13); `version` is nvml.h's NVML_STRUCT_VERSION(Temperature, 1).
struct TemperatureV1 {
  unsigned version;
  int sensor_type;  // nvmlTemperatureSensors_t
  int temperature;
};
constexpr unsigned kTemperatureV1 = static_cast<unsigned>(sizeof(TemperatureV1)) | (1u << 24);

// nvmlEventData_t.
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;  // the XID for nvmlEventTypeXidCriticalError (999: unknown)
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

// The functions, as nvml.h declares them (with the types above for its enums and handles).
using InitFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using HandleByStringFn = Return (*)(const char*, Device*);
using ClockFn = Return (*)(Device, int, unsigned*);
using UnsignedFn = Return (*)(Device, unsigned*);
using ReasonsFn = Return (*)(Device, unsigned long long*);
using DriverVersionFn = Return (*)(char*, unsigned);
using NvLinkStateFn = Return (*)(Device, unsigned, int*);
using EnergyFn = Return (*)(Device, unsigned long long*);
using TemperatureFn = Return (*)(Device, int, unsigned*);
using TemperatureVFn = Return (*)(Device, TemperatureV1*);
using NvLinkRemotePciFn = Return (*)(Device, unsigned, PciInfo*);
using NvLinkRemoteTypeFn = Return (*)(Device, unsigned, int*);
using P2PStatusFn = Return (*)(Device, Device, int, int*);
using CommonAncestorFn = Return (*)(Device, Device, int*);
using CpuAffinityFn = Return (*)(Device, unsigned, unsigned long*);
using TotalEccErrorsFn = Return (*)(Device, int, int, unsigned long long*);
using RemappedRowsFn = Return (*)(Device, unsigned*, unsigned*, unsigned*, unsigned*);
using RetiredPagesFn = Return (*)(Device, int, unsigned*, unsigned long long*);
using NvLinkErrorCounterFn = Return (*)(Device, unsigned, int, unsigned long long*);
using EventSetCreateFn = Return (*)(EventSet*);
using RegisterEventsFn = Return (*)(Device, unsigned long long, EventSet);
using EventSetWaitFn = Return (*)(EventSet, EventData*, unsigned);
using EventSetFreeFn = Return (*)(EventSet);

}  // namespace triaudit::nvml_abi
