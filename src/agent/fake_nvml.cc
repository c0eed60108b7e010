// A stand-in for libnvidia-ml.so.1 with four fixed GPUs, so gpus_test can drive Nvml's whole path
// (dlopen, dlsym, discovery, health, XID events) on a machine with no NVIDIA driver. Built as a
// module that gpus_test loads by path; it is never installed.
//
// GPU 0: A100-SXM4-80GB, busy, one pending XID 79 after each nvmlInit_v2.
// GPU 1: GeForce RTX 4090 without ECC counters or XID events (NOT_SUPPORTED for both).
// GPU 2: a name no catalog knows.
// GPU 3: fallen off the bus: its handle fails with GPU_IS_LOST.
#include <cstring>
#include <string>

#include "agent/nvml_abi.h"

namespace {

using suanli::agent::nvml::Device;
using suanli::agent::nvml::EventData;
using suanli::agent::nvml::EventSet;
using suanli::agent::nvml::Memory;
using suanli::agent::nvml::Return;
using suanli::agent::nvml::Utilization;
namespace nvml = suanli::agent::nvml;

struct FakeGpu {
  const char* name;
  const char* uuid;
  unsigned long long memory_mib;
};

constexpr FakeGpu kGpus[] = {
    {"NVIDIA A100-SXM4-80GB", "GPU-00000000-fake-0000-0000-a10080000000", 81920},
    {"NVIDIA GeForce RTX 4090", "GPU-11111111-fake-1111-1111-409000000000", 24564},
    {"NVIDIA Quantum X1", "GPU-22222222-fake-2222-2222-000000000000", 49152},
};
constexpr unsigned int kLostGpu = 3;

// Devices are handed out as pointers into this array; NVML's handles are opaque all the same.
char device_storage[3];
char event_set_storage;
bool xid_pending = false;
bool xid_registered = false;

Device DeviceAt(unsigned int index) { return reinterpret_cast<Device>(&device_storage[index]); }

// The index of a handle this library gave out, or -1.
int IndexOf(Device device) {
  for (unsigned int index = 0; index < 3; ++index) {
    if (device == DeviceAt(index)) return static_cast<int>(index);
  }
  return -1;
}

Return CopyString(const char* text, char* buffer, unsigned int length) {
  if (std::strlen(text) + 1 > length) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::strcpy(buffer, text);
  return nvml::kSuccess;
}

}  // namespace

extern "C" {

Return nvmlInit_v2() {
  xid_pending = true;
  return nvml::kSuccess;
}

Return nvmlShutdown() { return nvml::kSuccess; }

const char* nvmlErrorString(Return code) {
  switch (code) {
    case nvml::kSuccess:
      return "Success";
    case nvml::kErrorNotSupported:
      return "Not Supported";
    case nvml::kErrorTimeout:
      return "Timeout";
    case nvml::kErrorGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

Return nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return CopyString("550.54.15", version, length);
}

Return nvmlSystemGetCudaDriverVersion_v2(int* version) {
  *version = 12040;
  return nvml::kSuccess;
}

Return nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = 4;
  return nvml::kSuccess;
}

Return nvmlDeviceGetHandleByIndex_v2(unsigned int index, Device* device) {
  if (index == kLostGpu) return nvml::kErrorGpuIsLost;
  if (index > kLostGpu) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = DeviceAt(index);
  return nvml::kSuccess;
}

Return nvmlDeviceGetName(Device device, char* name, unsigned int length) {
  const int index = IndexOf(device);
  return index < 0 ? 2 : CopyString(kGpus[index].name, name, length);
}

Return nvmlDeviceGetUUID(Device device, char* uuid, unsigned int length) {
  const int index = IndexOf(device);
  return index < 0 ? 2 : CopyString(kGpus[index].uuid, uuid, length);
}

Return nvmlDeviceGetMemoryInfo(Device device, Memory* memory) {
  const int index = IndexOf(device);
  if (index < 0) return 2;
  memory->total = kGpus[index].memory_mib << 20;
  memory->used = index == 0 ? 10240ULL << 20 : 0;
  memory->free = memory->total - memory->used;
  return nvml::kSuccess;
}

Return nvmlDeviceGetUtilizationRates(Device device, Utilization* utilization) {
  const int index = IndexOf(device);
  if (index < 0) return 2;
  utilization->gpu = index == 0 ? 87 : 0;
  utilization->memory = index == 0 ? 40 : 0;
  return nvml::kSuccess;
}

Return nvmlDeviceGetTemperature(Device device, int sensor, unsigned int* celsius) {
  if (IndexOf(device) < 0 || sensor != nvml::kTemperatureGpu) return 2;
  *celsius = IndexOf(device) == 0 ? 64 : 35;
  return nvml::kSuccess;
}

Return nvmlDeviceGetPowerUsage(Device device, unsigned int* milliwatts) {
  if (IndexOf(device) < 0) return 2;
  *milliwatts = IndexOf(device) == 0 ? 312500 : 21000;
  return nvml::kSuccess;
}

Return nvmlDeviceGetTotalEccErrors(Device device, int error_type, int counter_type,
                                   unsigned long long* count) {
  const int index = IndexOf(device);
  if (index < 0 || error_type != nvml::kMemoryErrorTypeUncorrected ||
      counter_type != nvml::kVolatileEcc) {
    return 2;
  }
  if (index == 1) return nvml::kErrorNotSupported;
  *count = index == 0 ? 2 : 0;
  return nvml::kSuccess;
}

Return nvmlEventSetCreate(EventSet* set) {
  *set = reinterpret_cast<EventSet>(&event_set_storage);
  return nvml::kSuccess;
}

Return nvmlDeviceRegisterEvents(Device device, unsigned long long types, EventSet set) {
  if (set != reinterpret_cast<EventSet>(&event_set_storage) || IndexOf(device) < 0) return 2;
  if (IndexOf(device) == 1) return nvml::kErrorNotSupported;
  if (IndexOf(device) == 0 && (types & nvml::kEventTypeXidCriticalError) != 0) {
    xid_registered = true;
  }
  return nvml::kSuccess;
}

Return nvmlEventSetWait_v2(EventSet set, EventData* data, unsigned int /*timeout_ms*/) {
  if (set != reinterpret_cast<EventSet>(&event_set_storage)) return 2;
  if (!xid_pending || !xid_registered) return nvml::kErrorTimeout;
  xid_pending = false;
  data->device = DeviceAt(0);
  data->event_type = nvml::kEventTypeXidCriticalError;
  data->event_data = 79;
  return nvml::kSuccess;
}

Return nvmlEventSetFree(EventSet /*set*/) {
  xid_registered = false;
  return nvml::kSuccess;
}

}  // extern "C"
