// A stand-in for libnvidia-ml.so.1 with four fixed GPUs, so gpus_test can drive Nvml's whole path
// (dlopen, dlsym, discovery, health, XID events) on a machine with no NVIDIA driver. Built as a
// module that gpus_test loads by path; it is never installed.
//
// GPU 0: A100-SXM4-80GB, busy, one pending XID 79 after each nvmlInit_v2.
// GPU 1: GeForce RTX 4090 without ECC counters or XID events (NOT_SUPPORTED for both).
// GPU 2: a name no catalog knows.
// GPU 3: fallen off the bus: its handle fails with GPU_IS_LOST.
// Topology: GPUs 0 and 2 sit below one PCIe switch; GPU 1 is across the CPUs from both.
// With SUANLI_FAKE_NVML_MIG=1 in the environment at nvmlInit_v2, GPU 0 is in MIG mode with a
// 3g.40gb slice in slot 0 and a 1g.10gb slice in slot 2 (slot 1 empty), as nvidia-smi would make.
#include <cstdlib>
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
char mig_storage[2];
bool xid_pending = false;
bool xid_registered = false;
bool mig_enabled = false;

struct FakeMig {
  unsigned int slot;
  const char* uuid;
  unsigned int slices;
  unsigned long long memory_mb;
};
constexpr FakeMig kMigs[] = {{0, "MIG-aaaaaaaa-fake-0000-0000-300000000000", 3, 40192},
                             {2, "MIG-bbbbbbbb-fake-0000-0000-100000000000", 1, 9856}};

Device MigAt(size_t index) { return reinterpret_cast<Device>(&mig_storage[index]); }
int MigIndexOf(Device device) {
  for (size_t index = 0; index < 2; ++index) {
    if (device == MigAt(index)) return static_cast<int>(index);
  }
  return -1;
}

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
  const char* mig = std::getenv("SUANLI_FAKE_NVML_MIG");
  mig_enabled = mig != nullptr && std::strcmp(mig, "1") == 0;
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
  if (const int mig = MigIndexOf(device); mig >= 0)
    return CopyString(kMigs[mig].uuid, uuid, length);
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

Return nvmlDeviceGetTopologyCommonAncestor(Device first, Device second, int* level) {
  const int a = IndexOf(first);
  const int b = IndexOf(second);
  if (a < 0 || b < 0) return 2;
  *level = (a == 1 || b == 1) ? 50 : 10;  // NVML_TOPOLOGY_SYSTEM, NVML_TOPOLOGY_SINGLE
  return nvml::kSuccess;
}

Return nvmlDeviceGetP2PStatus(Device first, Device second, int /*caps_index*/, int* status) {
  if (IndexOf(first) < 0 || IndexOf(second) < 0) return 2;
  *status = 5;  // NVML_P2P_STATUS_NOT_SUPPORTED: no NVLink here
  return nvml::kSuccess;
}

Return nvmlDeviceGetMigMode(Device device, unsigned int* current, unsigned int* pending) {
  const int index = IndexOf(device);
  if (index < 0) return 2;
  if (index != 0) return nvml::kErrorNotSupported;  // only the A100 has MIG
  *current = *pending = mig_enabled ? nvml::kMigEnabled : 0;
  return nvml::kSuccess;
}

Return nvmlDeviceGetMaxMigDeviceCount(Device device, unsigned int* count) {
  if (IndexOf(device) != 0) return nvml::kErrorNotSupported;
  *count = 7;
  return nvml::kSuccess;
}

Return nvmlDeviceGetMigDeviceHandleByIndex(Device device, unsigned int slot, Device* mig) {
  if (IndexOf(device) != 0 || !mig_enabled) return 2;
  for (size_t index = 0; index < 2; ++index) {
    if (kMigs[index].slot == slot) {
      *mig = MigAt(index);
      return nvml::kSuccess;
    }
  }
  return nvml::kErrorNotFound;
}

Return nvmlDeviceGetAttributes_v2(Device device, nvml::DeviceAttributes* attributes) {
  const int mig = MigIndexOf(device);
  if (mig < 0) return nvml::kErrorNotSupported;
  *attributes = {};
  attributes->gpu_instance_slice_count = kMigs[mig].slices;
  attributes->compute_instance_slice_count = kMigs[mig].slices;
  attributes->memory_size_mb = kMigs[mig].memory_mb;
  return nvml::kSuccess;
}

}  // extern "C"
