// GPU discovery: which GPUs this host has, what catalog type each is, and how healthy each is.
//
// Real GPUs come from NVML (libnvidia-ml.so.1, installed with the NVIDIA driver), which the agent
// loads at run time with dlopen: the binary has no link-time dependency on NVIDIA software, builds
// without it, and on a host without the driver simply finds no GPUs and says why. Simulated GPUs
// (`--simulate-gpus "4xRTX 4090"`) stand in for real ones on development machines and in tests;
// NVML is then never touched.
//
// Each GPU found by NVML is given the catalog type its NVML name means ("NVIDIA A100-SXM4-80GB" is
// "A100 80GB SXM"), with its memory deciding between sizes that share a name. A GPU the catalog
// does not know, or cannot tell apart (an "NVIDIA H100" could be the PCIe or the SXM card), keeps
// NVML's name with an empty type; nothing can price it or place a pod asking for a catalog type
// on it, so the agent leaves it out of the GPUs it offers until the catalog learns the name.
//
// XID errors (the driver's reports of GPU faults, e.g. 79 "fallen off the bus", 48 "double-bit
// ECC") reach the agent through NVML events: Nvml registers every GPU for critical-XID events when
// it loads, and each Health() call collects the events that arrived since the previous one, so
// `xid_errors` counts the XIDs of each GPU since the agent started and `last_xid` names the
// latest. The kernel log (`dmesg | grep NVRM: Xid`) holds the same events with more detail.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/nvml_abi.h"
#include "catalog/catalog.h"
#include "core/domain.h"
#include "core/mutex.h"
#include "core/status.h"

namespace suanli::agent {

struct Gpu {
  int index = 0;     // NVML's index (PCI bus order, as nvidia-smi shows), or 0.. when simulated
  std::string uuid;  // NVML's "GPU-8c1e...", or "SIM-GPU-0-rtx-4090": give this to the engine
  std::string name;  // as NVML says ("NVIDIA GeForce RTX 4090"), or the catalog name if simulated
  std::string type;  // the catalog's canonical type name, "" when unknown (see above)
  double memory_gb = 0;  // GiB NVML reports (a little under the nominal size), or the catalog's
  bool simulated = false;
  // GPUs with the same link group talk over NVLink or through one PCIe switch (core::GpuDevice).
  int link_group = 0;
  // A MIG slice: its part of the GPU (3 of 7 compute slices: 428) and NVIDIA's profile name.
  int capacity_milli = core::kMilliGpu;
  std::string mig_profile;
  // What the engine's CDI spec calls it after "nvidia.com/gpu=": NVML's index ("0"), or for a MIG
  // slice the GPU's index and the slice's ("0:1"), as nvidia-ctk names them.
  std::string cdi_name;
  // NVML's index of the GPU this is or is part of (health readings go by it); `index` differs from
  // it only on a host with MIG slices, whose devices are numbered in order.
  int nvml_index = 0;
};

// One reading of a GPU, as the heartbeat carries it (some boards report no power: -1).
using GpuHealth = core::GpuHealth;

struct GpuInventory {
  std::vector<Gpu> gpus;
  std::string source;          // "nvml", "simulated" or "none"
  std::string driver_version;  // "550.54.15"; "" unless source is "nvml"
  std::string cuda_version;    // the newest CUDA the driver supports, "12.4"; may be ""
  // Why there are no GPUs ("libnvidia-ml.so.1 not found: no NVIDIA driver on this host"), or which
  // GPUs NVML listed but could not be read; "" otherwise.
  std::string note;
};

// Parses "4xRTX 4090", "2xA100 80GB,1xRTX 3090" or "RTX 4090" (one GPU): comma-separated entries
// of an optional count from 1 to 64 followed by 'x', then a GPU name the catalog knows, matched as
// `suanli gpus` matches it (a name several types fit, like "A100 80GB", takes the catalog's
// preferred one). At most 64 GPUs in all. GPUs are numbered from 0 in the order written, each with
// uuid "SIM-GPU-<index>-<type slug>", so an agent restarted with the same flag reports the same
// devices. INVALID_ARGUMENT, saying which entry is wrong and how to write it, for an empty spec or
// entry, a missing, zero, negative or too large count, or an unknown GPU (with "did you mean").
//
// An entry of a MIG-capable type (A100, A30, H100, H200, B200) may end with " mig=" and the
// slices each of its GPUs is split into, as NVIDIA names their profiles: "1xA100 80GB
// mig=3g.40gb+2g.20gb+2g.20gb". Each slice is then a device of its own (uuid
// "SIM-MIG-<gpu>-<slice>-<type slug>") with its part of the GPU's compute as capacity.
//
// Simulated GPUs have a fixed topology: the GPUs of an SXM entry share one NVLink group (an
// NVSwitch board), other GPUs are linked by PCIe switches of four (0-3, 4-7, ...).
core::Result<std::vector<Gpu>> ParseSimulatedGpus(std::string_view spec,
                                                  const catalog::Catalog& catalog);

// The catalog type an NVML device name means, given the memory NVML reports (GiB; 0 when unknown,
// which skips the memory check); "" when the catalog has no such type, when several fit and the
// memory does not settle it, or when the memory contradicts the name (an 8 GB "RTX 3060" is not
// the 12 GB type).
std::string CatalogTypeForNvmlName(std::string_view nvml_name, double memory_gb,
                                   const catalog::Catalog& catalog);

// NVML, loaded from the driver's library. Thread-safe: one mutex serializes every call, guarding
// the device handles and XID counters (NVML itself is thread-safe). Not copyable.
class Nvml {
 public:
  // Loads `library` (the default is found on the driver's standard path; tests pass a fake's path),
  // starts NVML and registers every GPU for XID events. UNAVAILABLE, with a message fit for
  // GpuInventory::note, when the library is missing (no NVIDIA driver), lacks a function suanli
  // needs (driver too old), or NVML will not start or count its GPUs (kernel module not loaded,
  // driver and library versions differ).
  static core::Result<std::unique_ptr<Nvml>> Load(const std::string& library = "libnvidia-ml.so.1");

  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  ~Nvml();  // frees the event set, shuts NVML down and unloads the library

  // Every GPU NVML listed at Load, with driver and CUDA versions. A GPU that cannot be read (fallen
  // off the bus) is left out and named in `note`, with its index.
  GpuInventory Discover(const catalog::Catalog& catalog);

  // One reading of every GPU NVML listed at Load, in index order; also collects pending XID events.
  // A GPU that fails a reading reports it in GpuHealth::problem; the call itself does not fail.
  std::vector<GpuHealth> Health();

 private:
  struct Api;  // the function pointers, looked up once by Load
  struct Device {
    int index = 0;
    nvml::Device handle = nullptr;  // null when NVML could not give one (see `problem`)
    std::string problem;
    bool xid_registered = false;
    int64_t xid_errors = 0;
    int last_xid = 0;
  };

  Nvml(void* library, std::unique_ptr<Api> api);
  std::string ErrorText(nvml::Return code) const;
  // Per device, in devices_' order: its link group, the index of the first GPU it shares NVLink or
  // a PCIe switch with (itself when none; all apart when the driver cannot tell).
  std::vector<int> LinkGroups() REQUIRES(mutex_);
  // The MIG devices of a GPU in MIG mode, each a Gpu like `whole` with its own UUID, memory,
  // capacity (its compute slices of the GPU's maximum) and profile.
  void AddMigDevices(const Device& device, const Gpu& whole, double total_bytes, double nominal_gb,
                     std::vector<Gpu>& out, std::vector<std::string>& problems) REQUIRES(mutex_);
  void CollectXidEvents() REQUIRES(mutex_);

  void* library_;  // dlopen handle, closed by the destructor
  std::unique_ptr<Api> api_;
  core::Mutex mutex_;
  std::vector<Device> devices_ GUARDED_BY(mutex_);
  nvml::EventSet xid_events_ GUARDED_BY(mutex_) = nullptr;  // null when XID events are unsupported
};

// The GPUs of this host: the simulated ones when `simulate_spec` is non-empty (NVML is not
// touched; errors as ParseSimulatedGpus), else NVML's, else none with `note` saying why. Only a bad
// `simulate_spec` fails. With `keep_nvml`, the NVML that found the GPUs (if any) is handed over
// there, for Health().
core::Result<GpuInventory> DiscoverGpus(const catalog::Catalog& catalog,
                                        std::string_view simulate_spec,
                                        std::unique_ptr<Nvml>* keep_nvml = nullptr);

}  // namespace suanli::agent
