// The few NVML declarations suanli uses, written out by hand.
//
// NVIDIA's nvml.h ships with the CUDA toolkit and the driver packages, neither of which is in
// Debian main, and suanli must build and run on hosts with no NVIDIA software at all. So the agent
// loads libnvidia-ml.so.1 with dlopen at run time (see gpus.cc) and declares here only what it
// calls, with the layouts and values of NVIDIA's public header (NVML API version 12, checked
// against nvml.h of CUDA 12). Memory and Utilization have kept their layout since NVML first
// shipped them and EventData has only grown at its end, which lets one binary talk to old and new
// drivers.
//
// Used by gpus.cc and by the fake NVML library of the tests (fake_nvml.cc).
#pragma once

namespace suanli::agent::nvml {

// nvmlReturn_t is a C enum; its values travel as int.
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorGpuIsLost = 15;

using Device = struct nvmlDevice_st*;      // nvmlDevice_t: opaque, owned by NVML
using EventSet = struct nvmlEventSet_st*;  // nvmlEventSet_t: ours to free (nvmlEventSetFree)

// nvmlMemory_t (v1), in bytes.
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// nvmlUtilization_t: percent of the last sample period (1/6 s to 1 s).
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

// nvmlEventData_t as of R450+. Older drivers write only the first three fields; a larger buffer is
// safe for them, a smaller one would not be for new drivers.
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;  // the XID for kEventTypeXidCriticalError; 999: unknown XID
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

// nvmlDeviceAttributes_t (v2, CUDA 11.1 on): what a MIG device is made of.
struct DeviceAttributes {
  unsigned int multiprocessor_count;
  unsigned int shared_copy_engine_count;
  unsigned int shared_decoder_count;
  unsigned int shared_encoder_count;
  unsigned int shared_jpeg_count;
  unsigned int shared_ofa_count;
  unsigned int gpu_instance_slice_count;
  unsigned int compute_instance_slice_count;
  unsigned long long memory_size_mb;
};

inline constexpr unsigned int kDeviceNameBufferSize = 96;     // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned int kDeviceUuidBufferSize = 96;     // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned int kDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_...
inline constexpr int kTemperatureGpu = 0;                     // NVML_TEMPERATURE_GPU
inline constexpr int kMemoryErrorTypeUncorrected = 1;         // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
inline constexpr int kVolatileEcc = 0;  // NVML_VOLATILE_ECC: since driver load
inline constexpr unsigned long long kEventTypeXidCriticalError =
    0x8;                                        // nvmlEventTypeXidCriticalError
inline constexpr unsigned int kMigEnabled = 1;  // NVML_DEVICE_MIG_ENABLE
// nvmlGpuTopologyLevel_t: NVML_TOPOLOGY_MULTIPLE, GPUs below one tree of PCIe switches (levels
// above it go through a host bridge or the CPUs).
inline constexpr int kTopologyMultiple = 20;
inline constexpr int kP2pCapsIndexNvlink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
inline constexpr int kP2pStatusOk = 0;         // NVML_P2P_STATUS_OK

// The signatures of the functions gpus.cc looks up, by their exported names. Enum parameters
// (nvmlTemperatureSensors_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t) are C enums: int.
using InitFn = Return (*)();                                       // nvmlInit_v2
using ShutdownFn = Return (*)();                                   // nvmlShutdown
using ErrorStringFn = const char* (*)(Return);                     // nvmlErrorString
using SystemGetDriverVersionFn = Return (*)(char*, unsigned int);  // nvmlSystemGetDriverVersion
using SystemGetCudaDriverVersionFn = Return (*)(int*);  // nvmlSystemGetCudaDriverVersion(_v2)
using DeviceGetCountFn = Return (*)(unsigned int*);     // nvmlDeviceGetCount_v2
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);  // ..._v2
using DeviceGetStringFn = Return (*)(Device, char*, unsigned int);   // nvmlDeviceGetName, GetUUID
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);
using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);
using DeviceGetTemperatureFn = Return (*)(Device, int, unsigned int*);  // degrees C
using DeviceGetPowerUsageFn = Return (*)(Device, unsigned int*);        // milliwatts
using DeviceGetTotalEccErrorsFn = Return (*)(Device, int, int, unsigned long long*);
using EventSetCreateFn = Return (*)(EventSet*);
using DeviceRegisterEventsFn = Return (*)(Device, unsigned long long, EventSet);
using EventSetWaitFn = Return (*)(EventSet, EventData*, unsigned int);  // nvmlEventSetWait_v2, ms
using EventSetFreeFn = Return (*)(EventSet);
using DeviceGetMigModeFn = Return (*)(Device, unsigned int*, unsigned int*);  // current, pending
using DeviceGetMaxMigDeviceCountFn = Return (*)(Device, unsigned int*);
using DeviceGetMigDeviceHandleByIndexFn = Return (*)(Device, unsigned int, Device*);
using DeviceGetAttributesFn = Return (*)(Device, DeviceAttributes*);  // nvmlDeviceGetAttributes_v2
using DeviceGetTopologyCommonAncestorFn = Return (*)(Device, Device, int*);  // a topology level
using DeviceGetP2PStatusFn = Return (*)(Device, Device, int, int*);          // caps index -> status

}  // namespace suanli::agent::nvml
