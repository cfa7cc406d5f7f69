// Compiled only where CMake found nvml.h: the declarations triaudit calls NVML with
// (nvml_abi.hpp) must match the header's, or this file does not compile. Nothing here runs.
#include <nvml.h>

#include <cstddef>
#include <type_traits>

#include "nvml_abi.hpp"

namespace triaudit::nvml_abi {
namespace {

// Two parameter types are passed alike when both are pointers to objects of one size (an opaque
// handle is a pointer either way), or both are non-pointers of one size (an enum and an int).
template <typename A, typename B>
constexpr bool same_abi_type() {
  if constexpr (std::is_pointer_v<A> != std::is_pointer_v<B>) {
    return false;
  } else if constexpr (std::is_pointer_v<A>) {
    using PA = std::remove_cv_t<std::remove_pointer_t<A>>;
    using PB = std::remove_cv_t<std::remove_pointer_t<B>>;
    // Ours is void* only for NVML's handles (pointers to structs nvml.h never defines).
    if constexpr (std::is_void_v<PB>)
      return std::is_class_v<PA> || std::is_void_v<PA>;
    else
      return sizeof(PA) == sizeof(PB);
  } else {
    return sizeof(A) == sizeof(B);
  }
}

template <typename Header, typename Ours>
struct SameAbi : std::false_type {};
template <typename RH, typename... PH, typename RO, typename... PO>
struct SameAbi<RH (*)(PH...), RO (*)(PO...)> {
  static constexpr bool value =
      sizeof...(PH) == sizeof...(PO) && sizeof(RH) == sizeof(RO) && (same_abi_type<PH, PO>() && ...);
};

#define TRIAUDIT_SAME_ABI(fn, ours) static_assert(SameAbi<decltype(&::fn), ours>::value, #fn " differs from nvml.h")

TRIAUDIT_SAME_ABI(nvmlInit_v2, InitFn);
TRIAUDIT_SAME_ABI(nvmlErrorString, ErrorStringFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetHandleByPciBusId_v2, HandleByStringFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetHandleByUUID, HandleByStringFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetClockInfo, ClockFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetMaxClockInfo, ClockFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetCurrentClocksEventReasons, ReasonsFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetCurrPcieLinkGeneration, UnsignedFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetMaxPcieLinkGeneration, UnsignedFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetCurrPcieLinkWidth, UnsignedFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetMaxPcieLinkWidth, UnsignedFn);
TRIAUDIT_SAME_ABI(nvmlSystemGetDriverVersion, DriverVersionFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetNvLinkState, NvLinkStateFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetTotalEnergyConsumption, EnergyFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetPowerUsage, UnsignedFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetEnforcedPowerLimit, UnsignedFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetPowerManagementDefaultLimit, UnsignedFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetTemperatureV, TemperatureVFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetNvLinkRemotePciInfo_v2, NvLinkRemotePciFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetNvLinkRemoteDeviceType, NvLinkRemoteTypeFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetP2PStatus, P2PStatusFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetTopologyCommonAncestor, CommonAncestorFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetCpuAffinity, CpuAffinityFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetTotalEccErrors, TotalEccErrorsFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetRemappedRows, RemappedRowsFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetRetiredPages, RetiredPagesFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetNvLinkErrorCounter, NvLinkErrorCounterFn);
TRIAUDIT_SAME_ABI(nvmlDeviceGetPcieReplayCounter, UnsignedFn);
TRIAUDIT_SAME_ABI(nvmlEventSetCreate, EventSetCreateFn);
TRIAUDIT_SAME_ABI(nvmlDeviceRegisterEvents, RegisterEventsFn);
TRIAUDIT_SAME_ABI(nvmlEventSetWait_v2, EventSetWaitFn);
TRIAUDIT_SAME_ABI(nvmlEventSetFree, EventSetFreeFn);
#undef TRIAUDIT_SAME_ABI

// The deprecated temperature call is the fallback for drivers older than TemperatureV: declared
// DEPRECATED in nvml.h 13, so checked with the warning silenced.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static_assert(SameAbi<decltype(&::nvmlDeviceGetTemperature), TemperatureFn>::value, "nvmlDeviceGetTemperature");
#pragma GCC diagnostic pop

static_assert(sizeof(::nvmlReturn_t) == sizeof(Return));
static_assert(NVML_SUCCESS == kSuccess && NVML_ERROR_NOT_SUPPORTED == kNotSupported);
static_assert(NVML_ERROR_INSUFFICIENT_SIZE == kInsufficientSize && NVML_ERROR_TIMEOUT == kTimeout);
static_assert(NVML_ERROR_FUNCTION_NOT_FOUND == kFunctionNotFound && NVML_ERROR_UNKNOWN == kUnknown);
// The names table: its last entry is the header's last code before UNKNOWN.
static_assert(NVML_ERROR_RESET_TYPE_NOT_SUPPORTED == kReturnNames - 1);
static_assert(NVML_ERROR_INSUFFICIENT_RESOURCES == 23 && NVML_ERROR_ARGUMENT_VERSION_MISMATCH == 25 &&
              NVML_ERROR_GPU_NOT_FOUND == 28);
static_assert(NVML_CLOCK_SM == kClockSm && NVML_TEMPERATURE_GPU == kTemperatureGpu);
static_assert(NVML_MEMORY_ERROR_TYPE_CORRECTED == kMemoryErrorCorrected &&
              NVML_MEMORY_ERROR_TYPE_UNCORRECTED == kMemoryErrorUncorrected);
static_assert(NVML_VOLATILE_ECC == kVolatileEcc);
static_assert(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS == kRetiredMultipleSingleBit &&
              NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR == kRetiredDoubleBit);
static_assert(NVML_NVLINK_ERROR_DL_REPLAY == kNvLinkReplay && NVML_NVLINK_ERROR_DL_RECOVERY == kNvLinkRecovery &&
              NVML_NVLINK_ERROR_DL_CRC_FLIT == kNvLinkCrcFlit && NVML_NVLINK_ERROR_DL_CRC_DATA == kNvLinkCrcData);
static_assert(kNvLinkMax <= NVML_NVLINK_MAX_LINKS);
static_assert(nvmlEventTypeXidCriticalError == kEventXidCritical);
static_assert(nvmlTemperature_v1 == kTemperatureV1);

static_assert(sizeof(::nvmlPciInfo_t) == sizeof(PciInfo) &&
              offsetof(::nvmlPciInfo_t, busId) == offsetof(PciInfo, bus_id));
static_assert(sizeof(::nvmlTemperature_v1_t) == sizeof(TemperatureV1) &&
              offsetof(::nvmlTemperature_v1_t, temperature) == offsetof(TemperatureV1, temperature));
static_assert(sizeof(::nvmlEventData_t) == sizeof(EventData) &&
              offsetof(::nvmlEventData_t, eventData) == offsetof(EventData, event_data) &&
              offsetof(::nvmlEventData_t, computeInstanceId) == offsetof(EventData, compute_instance_id));

}  // namespace
}  // namespace triaudit::nvml_abi
