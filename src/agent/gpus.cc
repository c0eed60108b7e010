#include "agent/gpus.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

#include "core/check.h"

namespace suanli::agent {
namespace {

constexpr int kMaxSimulatedGpus = 64;
constexpr std::string_view kSpecExample = "write e.g. '4xRTX 4090' or '2xA100 80GB,1xRTX 3090'";
constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

// NVML names the catalog's own names and aliases do not cover, mapped by hand. AWS's A10G has the
// A10's GA102 die and 24 GB of GDDR6 at somewhat higher clocks and power; until the catalog has an
// entry of its own it is priced and advised as an A10.
constexpr std::pair<std::string_view, std::string_view> kNvmlNameOverrides[] = {{"A10G", "A10"}};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return text;
}

// "A100 80GB SXM" -> "a100-80gb-sxm".
std::string Slug(std::string_view name) {
  std::string slug;
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || IsDigit(c)) {
      slug += c;
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug;
}

// The compute slices a MIG-capable GPU splits into (NVIDIA's MIG user guide: seven on the A100,
// H100, H200 and B200, four on the A30); 0 for a GPU without MIG.
int MigSlicesOf(std::string_view type_name) {
  const std::string_view model = type_name.substr(0, type_name.find(' '));
  if (model == "A30") return 4;
  for (std::string_view capable : {"A100", "H100", "H200", "B200"}) {
    if (model == capable) return 7;
  }
  return 0;
}

// A MIG slice's share of its GPU's compute, in milli-GPUs, rounded down: 3 of 7 is 428.
int MigCapacityMilli(int slices, int gpu_slices) { return slices * core::kMilliGpu / gpu_slices; }

struct MigProfile {
  int slices = 0;     // compute slices: the "3g" of "3g.40gb"
  int memory_gb = 0;  // the "40gb"
};

// "3g.40gb" as NVIDIA writes MIG profiles; nullopt for anything else.
std::optional<MigProfile> ParseMigProfile(std::string_view text) {
  MigProfile profile;
  size_t at = 0;
  auto number = [&](int& out) {
    const size_t start = at;
    while (at < text.size() && IsDigit(text[at]) && at - start < 4) {
      out = out * 10 + (text[at] - '0');
      ++at;
    }
    return at > start;
  };
  if (!number(profile.slices) || text.substr(at, 2) != "g.") return std::nullopt;
  at += 2;
  if (!number(profile.memory_gb) || text.substr(at) != "gb") return std::nullopt;
  if (profile.slices < 1 || profile.memory_gb < 1) return std::nullopt;
  return profile;
}

// The link groups of simulated GPUs (see ParseSimulatedGpus): an SXM entry's GPUs are one NVLink
// group, others are grouped by fours as PCIe switches; a group is named by its first GPU.
int SimulatedLinkGroup(std::string_view type_name, int first_of_entry, int position_in_entry) {
  if (type_name.find("SXM") != std::string_view::npos) return first_of_entry;
  return first_of_entry + position_in_entry / 4 * 4;
}

core::Status CountError(std::string_view entry, std::string_view what) {
  return core::InvalidArgumentError("--simulate-gpus entry '" + std::string(entry) + "' " +
                                    std::string(what) + "; " + std::string(kSpecExample));
}

// Appends the GPUs of one entry ("2xA100 80GB", "RTX 4090") to `gpus`.
core::Status AddSimulatedEntry(std::string_view entry, const catalog::Catalog& catalog,
                               std::vector<Gpu>& gpus, int& physical_gpus) {
  std::vector<MigProfile> slices;
  if (const size_t mig = entry.find(" mig="); mig != std::string_view::npos) {
    const std::string_view profiles = entry.substr(mig + 5);
    entry = Trim(entry.substr(0, mig));
    size_t start = 0;
    while (start <= profiles.size()) {
      const size_t plus = profiles.find('+', start);
      const std::string_view text = profiles.substr(start, plus - start);
      const std::optional<MigProfile> profile = ParseMigProfile(text);
      if (!profile) {
        return core::InvalidArgumentError(
            "--simulate-gpus entry '" + std::string(entry) + "': '" + std::string(text) +
            "' is not a MIG profile; write them as NVIDIA names them, joined by '+', e.g. "
            "'1xA100 80GB mig=3g.40gb+2g.20gb+2g.20gb'");
      }
      slices.push_back(*profile);
      if (plus == std::string_view::npos) break;
      start = plus + 1;
    }
  }
  if (entry.empty()) return CountError(entry, "names no GPU");
  if (entry.front() == '-' || entry.front() == '+') {
    return CountError(entry, "needs a whole count from 1 to 64 before the 'x'");
  }
  if (entry.front() == 'x' || entry.front() == 'X') {
    return CountError(entry, "has no count before the 'x'");
  }
  size_t digits = 0;
  while (digits < entry.size() && IsDigit(entry[digits])) ++digits;
  int count = 1;
  std::string_view name = entry;
  if (digits > 0) {
    std::string_view rest = Trim(entry.substr(digits));
    if (!rest.empty() && rest.front() == '.') {
      return CountError(entry, "needs a whole count from 1 to 64 before the 'x'");
    }
    if (!rest.empty() && (rest.front() == 'x' || rest.front() == 'X')) {
      // Three digits at most: anything longer is out of range, and cannot overflow an int.
      count = digits > 3 ? kMaxSimulatedGpus + 1 : std::stoi(std::string(entry.substr(0, digits)));
      if (count < 1 || count > kMaxSimulatedGpus) {
        return CountError(entry, "asks for " + std::string(entry.substr(0, digits)) +
                                     " GPUs; the count must be from 1 to 64");
      }
      name = Trim(rest.substr(1));
      if (name.empty()) return CountError(entry, "names no GPU after the count");
    }
  }
  core::Result<catalog::GpuMatch> match = catalog.Find(name);
  if (!match.ok()) {
    return core::InvalidArgumentError("--simulate-gpus: " + match.status().message());
  }
  const catalog::GpuType& type = *match->gpu;
  const int gpu_slices = MigSlicesOf(type.name);
  if (!slices.empty()) {
    if (gpu_slices == 0) {
      return core::InvalidArgumentError("--simulate-gpus: the " + type.name +
                                        " has no MIG; only the A100, A30, H100, H200 and B200 do");
    }
    int used = 0;
    double memory = 0;
    for (const MigProfile& slice : slices) {
      used += slice.slices;
      memory += slice.memory_gb;
    }
    if (used > gpu_slices || memory > type.memory_gb * 1.01) {
      return core::InvalidArgumentError(
          "--simulate-gpus: the slices of an " + type.name + " add up to " + std::to_string(used) +
          " compute slices and " + std::to_string(static_cast<int>(memory)) +
          " GB, more than its " + std::to_string(gpu_slices) + " and " +
          std::to_string(static_cast<int>(type.memory_gb)) + " GB");
    }
  }
  const size_t devices_each = slices.empty() ? 1 : slices.size();
  if (gpus.size() + static_cast<size_t>(count) * devices_each > kMaxSimulatedGpus) {
    return core::InvalidArgumentError(std::string("--simulate-gpus asks for more than 64 ") +
                                      (slices.empty() ? "GPUs" : "GPUs and MIG slices") +
                                      " in all; " + std::string(kSpecExample));
  }
  const int first_of_entry = physical_gpus;
  for (int i = 0; i < count; ++i, ++physical_gpus) {
    Gpu gpu;
    gpu.name = type.name;
    gpu.type = type.name;
    gpu.memory_gb = type.memory_gb;
    gpu.simulated = true;
    gpu.link_group = SimulatedLinkGroup(type.name, first_of_entry, i);
    gpu.nvml_index = physical_gpus;
    if (slices.empty()) {
      gpu.index = static_cast<int>(gpus.size());
      gpu.uuid = "SIM-GPU-" + std::to_string(gpu.index) + "-" + Slug(type.name);
      gpu.cdi_name = std::to_string(physical_gpus);
      gpus.push_back(std::move(gpu));
      continue;
    }
    for (size_t slice = 0; slice < slices.size(); ++slice) {
      Gpu part = gpu;
      part.index = static_cast<int>(gpus.size());
      part.uuid = "SIM-MIG-" + std::to_string(physical_gpus) + "-" + std::to_string(slice) + "-" +
                  Slug(type.name);
      part.mig_profile = std::to_string(slices[slice].slices) + "g." +
                         std::to_string(slices[slice].memory_gb) + "gb";
      part.name = type.name + " MIG " + part.mig_profile;
      part.memory_gb = slices[slice].memory_gb;
      part.capacity_milli = MigCapacityMilli(slices[slice].slices, gpu_slices);
      part.cdi_name = std::to_string(physical_gpus) + ":" + std::to_string(slice);
      gpus.push_back(std::move(part));
    }
  }
  return core::Status::Ok();
}

std::vector<std::string> SortedTokens(std::string_view name) {
  std::vector<std::string> tokens = catalog::GpuNameTokens(name);
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  return tokens;
}

// "16g", as GpuNameTokens writes a size.
bool IsSizeToken(std::string_view token) {
  return token.size() > 1 && token.back() == 'g' &&
         std::all_of(token.begin(), token.end() - 1, IsDigit);
}

// Whether `type_name` is `nvml_tokens` with at most sizes added: "RTX 4060 Ti 16GB" fits NVML's
// "NVIDIA GeForce RTX 4060 Ti" (memory then decides), "RTX 4070 Ti" does not fit "RTX 4070".
bool NameFits(const std::vector<std::string>& nvml_tokens, std::string_view type_name) {
  const std::vector<std::string> type_tokens = SortedTokens(type_name);
  if (!std::includes(type_tokens.begin(), type_tokens.end(), nvml_tokens.begin(),
                     nvml_tokens.end())) {
    return false;
  }
  return std::all_of(type_tokens.begin(), type_tokens.end(), [&](const std::string& token) {
    return IsSizeToken(token) || std::binary_search(nvml_tokens.begin(), nvml_tokens.end(), token);
  });
}

// NVML reports total memory in bytes, a little under the nominal size: the driver reserves some,
// and ECC on GDDR cards takes 1/16 (a T4 with ECC shows 14.8 of 16 GiB).
bool MemoryFits(double reported_gib, double nominal_gb) {
  return reported_gib >= 0.9 * nominal_gb && reported_gib <= 1.05 * nominal_gb;
}

// A fixed-size C string buffer NVML fills, as a string.
template <size_t N>
std::string FromBuffer(const char (&buffer)[N]) {
  return std::string(buffer, strnlen(buffer, N));
}

template <typename Fn>
Fn Symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

core::Result<std::vector<Gpu>> ParseSimulatedGpus(std::string_view spec,
                                                  const catalog::Catalog& catalog) {
  if (Trim(spec).empty()) {
    return core::InvalidArgumentError("--simulate-gpus is empty; " + std::string(kSpecExample));
  }
  std::vector<Gpu> gpus;
  int physical_gpus = 0;
  size_t start = 0;
  while (true) {
    const size_t comma = spec.find(',', start);
    const std::string_view entry =
        Trim(spec.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (entry.empty()) {
      return core::InvalidArgumentError("--simulate-gpus '" + std::string(spec) +
                                        "' has an empty entry; " + std::string(kSpecExample));
    }
    SUANLI_RETURN_IF_ERROR(AddSimulatedEntry(entry, catalog, gpus, physical_gpus));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return gpus;
}

std::string CatalogTypeForNvmlName(std::string_view nvml_name, double memory_gb,
                                   const catalog::Catalog& catalog) {
  std::vector<std::string> nvml_tokens = SortedTokens(nvml_name);
  for (const auto& [nvml, ours] : kNvmlNameOverrides) {
    if (nvml_tokens == SortedTokens(nvml)) nvml_tokens = SortedTokens(ours);
  }
  if (nvml_tokens.empty()) return "";

  std::vector<const catalog::GpuType*> candidates;
  for (const catalog::GpuType& type : catalog.gpus()) {
    bool fits = NameFits(nvml_tokens, type.name);
    for (const std::string& alias : type.aliases) fits = fits || NameFits(nvml_tokens, alias);
    if (fits && (memory_gb <= 0 || MemoryFits(memory_gb, type.memory_gb))) {
      candidates.push_back(&type);
    }
  }
  return candidates.size() == 1 ? candidates.front()->name : "";
}

// The NVML functions suanli calls. Those marked optional may be missing from old drivers; the
// figures they give are then reported as unknown.
struct Nvml::Api {
  nvml::InitFn init = nullptr;
  nvml::ShutdownFn shutdown = nullptr;
  nvml::ErrorStringFn error_string = nullptr;
  nvml::SystemGetDriverVersionFn driver_version = nullptr;
  nvml::DeviceGetCountFn device_count = nullptr;
  nvml::DeviceGetHandleByIndexFn device_handle = nullptr;
  nvml::DeviceGetStringFn device_name = nullptr;
  nvml::DeviceGetStringFn device_uuid = nullptr;
  nvml::DeviceGetMemoryInfoFn memory_info = nullptr;
  // Optional.
  nvml::SystemGetCudaDriverVersionFn cuda_version = nullptr;
  nvml::DeviceGetUtilizationRatesFn utilization = nullptr;
  nvml::DeviceGetTemperatureFn temperature = nullptr;
  nvml::DeviceGetPowerUsageFn power = nullptr;
  nvml::DeviceGetTotalEccErrorsFn ecc_errors = nullptr;
  nvml::EventSetCreateFn event_set_create = nullptr;
  nvml::DeviceRegisterEventsFn register_events = nullptr;
  nvml::EventSetWaitFn event_set_wait = nullptr;
  nvml::EventSetFreeFn event_set_free = nullptr;
  nvml::DeviceGetMigModeFn mig_mode = nullptr;
  nvml::DeviceGetMaxMigDeviceCountFn max_mig_devices = nullptr;
  nvml::DeviceGetMigDeviceHandleByIndexFn mig_device = nullptr;
  nvml::DeviceGetAttributesFn attributes = nullptr;
  nvml::DeviceGetTopologyCommonAncestorFn common_ancestor = nullptr;
  nvml::DeviceGetP2PStatusFn p2p_status = nullptr;
};

core::Result<std::unique_ptr<Nvml>> Nvml::Load(const std::string& library_name) {
  dlerror();
  void* library = dlopen(library_name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    const std::string detail = error == nullptr ? "" : error;
    if (detail.find("No such file") != std::string::npos) {
      return core::UnavailableError(library_name + " not found: no NVIDIA driver on this host");
    }
    return core::UnavailableError("cannot load " + library_name + ": " + detail);
  }

  auto api = std::make_unique<Api>();
  std::string missing;
  auto require = [&]<typename Fn>(Fn& fn, const char* name) {
    fn = Symbol<Fn>(library, name);
    if (fn == nullptr && missing.empty()) missing = name;
  };
  require(api->init, "nvmlInit_v2");
  require(api->shutdown, "nvmlShutdown");
  require(api->error_string, "nvmlErrorString");
  require(api->driver_version, "nvmlSystemGetDriverVersion");
  require(api->device_count, "nvmlDeviceGetCount_v2");
  require(api->device_handle, "nvmlDeviceGetHandleByIndex_v2");
  require(api->device_name, "nvmlDeviceGetName");
  require(api->device_uuid, "nvmlDeviceGetUUID");
  require(api->memory_info, "nvmlDeviceGetMemoryInfo");
  if (!missing.empty()) {
    dlclose(library);
    return core::UnavailableError(library_name + " has no " + missing +
                                  ": this NVIDIA driver is too old for suanli; update it");
  }
  api->cuda_version =
      Symbol<nvml::SystemGetCudaDriverVersionFn>(library, "nvmlSystemGetCudaDriverVersion_v2");
  if (api->cuda_version == nullptr) {
    api->cuda_version =
        Symbol<nvml::SystemGetCudaDriverVersionFn>(library, "nvmlSystemGetCudaDriverVersion");
  }
  api->utilization =
      Symbol<nvml::DeviceGetUtilizationRatesFn>(library, "nvmlDeviceGetUtilizationRates");
  api->temperature = Symbol<nvml::DeviceGetTemperatureFn>(library, "nvmlDeviceGetTemperature");
  api->power = Symbol<nvml::DeviceGetPowerUsageFn>(library, "nvmlDeviceGetPowerUsage");
  api->ecc_errors = Symbol<nvml::DeviceGetTotalEccErrorsFn>(library, "nvmlDeviceGetTotalEccErrors");
  api->event_set_create = Symbol<nvml::EventSetCreateFn>(library, "nvmlEventSetCreate");
  api->register_events = Symbol<nvml::DeviceRegisterEventsFn>(library, "nvmlDeviceRegisterEvents");
  api->event_set_wait = Symbol<nvml::EventSetWaitFn>(library, "nvmlEventSetWait_v2");
  api->event_set_free = Symbol<nvml::EventSetFreeFn>(library, "nvmlEventSetFree");
  api->mig_mode = Symbol<nvml::DeviceGetMigModeFn>(library, "nvmlDeviceGetMigMode");
  api->max_mig_devices =
      Symbol<nvml::DeviceGetMaxMigDeviceCountFn>(library, "nvmlDeviceGetMaxMigDeviceCount");
  api->mig_device = Symbol<nvml::DeviceGetMigDeviceHandleByIndexFn>(
      library, "nvmlDeviceGetMigDeviceHandleByIndex");
  api->attributes = Symbol<nvml::DeviceGetAttributesFn>(library, "nvmlDeviceGetAttributes_v2");
  api->common_ancestor = Symbol<nvml::DeviceGetTopologyCommonAncestorFn>(
      library, "nvmlDeviceGetTopologyCommonAncestor");
  api->p2p_status = Symbol<nvml::DeviceGetP2PStatusFn>(library, "nvmlDeviceGetP2PStatus");

  if (const nvml::Return code = api->init(); code != nvml::kSuccess) {
    const char* text = api->error_string(code);
    dlclose(library);
    return core::UnavailableError(
        "NVML would not start: " + std::string(text == nullptr ? "unknown error" : text) +
        " (is the NVIDIA kernel module loaded? nvidia-smi shows the same problem)");
  }
  // From here the destructor shuts NVML down and closes the library.
  std::unique_ptr<Nvml> loaded(new Nvml(library, std::move(api)));
  const Api& fns = *loaded->api_;

  unsigned int count = 0;
  if (const nvml::Return code = fns.device_count(&count); code != nvml::kSuccess) {
    return core::UnavailableError("NVML cannot count this host's GPUs: " + loaded->ErrorText(code));
  }
  core::MutexLock lock(loaded->mutex_);
  if (fns.event_set_create != nullptr && fns.register_events != nullptr &&
      fns.event_set_wait != nullptr && fns.event_set_free != nullptr &&
      fns.event_set_create(&loaded->xid_events_) != nvml::kSuccess) {
    loaded->xid_events_ = nullptr;
  }
  for (unsigned int index = 0; index < count; ++index) {
    Device device;
    device.index = static_cast<int>(index);
    if (const nvml::Return code = fns.device_handle(index, &device.handle);
        code != nvml::kSuccess) {
      device.handle = nullptr;
      device.problem = loaded->ErrorText(code);
    } else if (loaded->xid_events_ != nullptr) {
      // NOT_SUPPORTED on GPUs without XID events; the count then stays unknown.
      device.xid_registered = fns.register_events(device.handle, nvml::kEventTypeXidCriticalError,
                                                  loaded->xid_events_) == nvml::kSuccess;
    }
    loaded->devices_.push_back(std::move(device));
  }
  return loaded;
}

Nvml::Nvml(void* library, std::unique_ptr<Api> api) : library_(library), api_(std::move(api)) {}

Nvml::~Nvml() {
  if (xid_events_ != nullptr) api_->event_set_free(xid_events_);
  api_->shutdown();
  dlclose(library_);
}

std::string Nvml::ErrorText(nvml::Return code) const {
  const char* text = api_->error_string(code);
  return text == nullptr ? "NVML error " + std::to_string(code) : std::string(text);
}

GpuInventory Nvml::Discover(const catalog::Catalog& catalog) {
  core::MutexLock lock(mutex_);
  GpuInventory inventory;
  inventory.source = "nvml";
  char version[nvml::kDriverVersionBufferSize] = {};
  if (api_->driver_version(version, sizeof version) == nvml::kSuccess) {
    inventory.driver_version = FromBuffer(version);
  }
  int cuda = 0;
  if (api_->cuda_version != nullptr && api_->cuda_version(&cuda) == nvml::kSuccess && cuda > 0) {
    // 12040 means CUDA 12.4.
    inventory.cuda_version = std::to_string(cuda / 1000) + "." + std::to_string(cuda % 1000 / 10);
  }

  std::vector<std::string> problems;
  const std::vector<int> link_groups = LinkGroups();
  bool any_mig = false;
  for (size_t position = 0; position < devices_.size(); ++position) {
    const Device& device = devices_[position];
    const std::string label = "GPU " + std::to_string(device.index) + ": ";
    if (device.handle == nullptr) {
      problems.push_back(label + device.problem);
      continue;
    }
    char name[nvml::kDeviceNameBufferSize] = {};
    char uuid[nvml::kDeviceUuidBufferSize] = {};
    nvml::Memory memory = {};
    nvml::Return code = api_->device_name(device.handle, name, sizeof name);
    if (code == nvml::kSuccess) code = api_->device_uuid(device.handle, uuid, sizeof uuid);
    if (code == nvml::kSuccess) code = api_->memory_info(device.handle, &memory);
    if (code != nvml::kSuccess) {
      problems.push_back(label + ErrorText(code));
      continue;
    }
    Gpu gpu;
    gpu.index = device.index;
    gpu.uuid = FromBuffer(uuid);
    gpu.name = FromBuffer(name);
    gpu.memory_gb = static_cast<double>(memory.total) / kBytesPerGib;
    gpu.type = CatalogTypeForNvmlName(gpu.name, gpu.memory_gb, catalog);
    gpu.link_group = link_groups[position];
    gpu.cdi_name = std::to_string(device.index);
    gpu.nvml_index = device.index;
    unsigned int mig_current = 0;
    unsigned int mig_pending = 0;
    if (api_->mig_mode != nullptr &&
        api_->mig_mode(device.handle, &mig_current, &mig_pending) == nvml::kSuccess &&
        mig_current == nvml::kMigEnabled) {
      any_mig = true;
      const double nominal_gb = [&] {
        core::Result<const catalog::GpuType*> type = catalog.FindExact(gpu.type);
        return type.ok() ? (*type)->memory_gb : gpu.memory_gb;
      }();
      const size_t before = inventory.gpus.size();
      AddMigDevices(device, gpu, static_cast<double>(memory.total), nominal_gb, inventory.gpus,
                    problems);
      if (inventory.gpus.size() == before) {
        problems.push_back(label +
                           "MIG is on but it has no MIG devices to offer (create them: nvidia-smi "
                           "mig -cgi PROFILES -C), so none of it is offered");
      }
      continue;
    }
    inventory.gpus.push_back(std::move(gpu));
  }
  // With MIG slices a GPU is several devices: they are numbered in order, as the server counts
  // them; cdi_name and uuid still say which is which.
  if (any_mig) {
    for (size_t position = 0; position < inventory.gpus.size(); ++position)
      inventory.gpus[position].index = static_cast<int>(position);
  }
  if (devices_.empty()) {
    inventory.note =
        "the NVIDIA driver is loaded but lists no GPUs (check nvidia-smi; in a container, "
        "NVIDIA_VISIBLE_DEVICES)";
  }
  for (const std::string& problem : problems) {
    inventory.note += (inventory.note.empty() ? "" : "; ") + problem;
  }
  return inventory;
}

std::vector<int> Nvml::LinkGroups() {
  // Union-find over the GPUs NVML listed; a group is named by its first GPU's index.
  std::vector<size_t> parent(devices_.size());
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto root = [&parent](size_t at) {
    while (parent[at] != at) at = parent[at] = parent[parent[at]];
    return at;
  };
  for (size_t a = 0; a < devices_.size(); ++a) {
    for (size_t b = a + 1; b < devices_.size(); ++b) {
      const nvml::Device first = devices_[a].handle;
      const nvml::Device second = devices_[b].handle;
      if (first == nullptr || second == nullptr) continue;
      int status = -1;
      int level = -1;
      const bool nvlink =
          api_->p2p_status != nullptr &&
          api_->p2p_status(first, second, nvml::kP2pCapsIndexNvlink, &status) == nvml::kSuccess &&
          status == nvml::kP2pStatusOk;
      const bool one_switch = api_->common_ancestor != nullptr &&
                              api_->common_ancestor(first, second, &level) == nvml::kSuccess &&
                              level >= 0 && level <= nvml::kTopologyMultiple;
      if (nvlink || one_switch) parent[std::max(root(a), root(b))] = std::min(root(a), root(b));
    }
  }
  std::vector<int> groups;
  for (size_t at = 0; at < devices_.size(); ++at) groups.push_back(devices_[root(at)].index);
  return groups;
}

void Nvml::AddMigDevices(const Device& device, const Gpu& whole, double total_bytes,
                         double nominal_gb, std::vector<Gpu>& out,
                         std::vector<std::string>& problems) {
  unsigned int count = 0;
  if (api_->max_mig_devices == nullptr || api_->mig_device == nullptr ||
      api_->attributes == nullptr ||
      api_->max_mig_devices(device.handle, &count) != nvml::kSuccess || count == 0) {
    problems.push_back("GPU " + std::to_string(device.index) +
                       ": MIG is on but this driver cannot list its MIG devices");
    return;
  }
  for (unsigned int slot = 0; slot < count; ++slot) {
    nvml::Device handle = nullptr;
    const nvml::Return found = api_->mig_device(device.handle, slot, &handle);
    if (found == nvml::kErrorNotFound) continue;  // no instance in this slot
    const std::string label =
        "MIG device " + std::to_string(device.index) + ":" + std::to_string(slot) + ": ";
    char uuid[nvml::kDeviceUuidBufferSize] = {};
    nvml::DeviceAttributes attributes = {};
    nvml::Return code = found;
    if (code == nvml::kSuccess) code = api_->device_uuid(handle, uuid, sizeof uuid);
    if (code == nvml::kSuccess) code = api_->attributes(handle, &attributes);
    if (code != nvml::kSuccess) {
      problems.push_back(label + ErrorText(code));
      continue;
    }
    Gpu slice = whole;
    slice.uuid = FromBuffer(uuid);
    slice.cdi_name = std::to_string(device.index) + ":" + std::to_string(slot);
    slice.memory_gb = static_cast<double>(attributes.memory_size_mb) / 1024.0;
    const int compute_slices = static_cast<int>(attributes.gpu_instance_slice_count);
    slice.capacity_milli =
        std::clamp(compute_slices * core::kMilliGpu / static_cast<int>(count), 1, core::kMilliGpu);
    // NVIDIA names a profile by its compute slices and its memory in GB, the memory counted in
    // eighths of the GPU's nominal size ("3g.40gb" on an 80 GB A100: 4 of 8 eighths).
    const double eighths =
        std::round(static_cast<double>(attributes.memory_size_mb) * 1048576.0 / total_bytes * 8);
    slice.mig_profile = std::to_string(compute_slices) + "g." +
                        std::to_string(static_cast<int>(std::round(eighths * nominal_gb / 8))) +
                        "gb";
    slice.name = whole.name + " MIG " + slice.mig_profile;
    out.push_back(std::move(slice));
  }
}

std::vector<GpuHealth> Nvml::Health() {
  core::MutexLock lock(mutex_);
  CollectXidEvents();
  std::vector<GpuHealth> readings;
  for (const Device& device : devices_) {
    GpuHealth health;
    health.index = device.index;
    if (device.handle == nullptr) {
      health.problem = device.problem;
      readings.push_back(std::move(health));
      continue;
    }
    // Unsupported figures stay unknown; any other failure (a GPU fallen off the bus) is a problem.
    auto read = [&](nvml::Return code) {
      if (code == nvml::kSuccess) return true;
      if (code != nvml::kErrorNotSupported && code != nvml::kErrorNoPermission &&
          health.problem.empty()) {
        health.problem = ErrorText(code);
      }
      return false;
    };
    nvml::Memory memory = {};
    if (read(api_->memory_info(device.handle, &memory))) {
      health.memory_used_gb = static_cast<double>(memory.used) / kBytesPerGib;
    }
    nvml::Utilization utilization = {};
    if (api_->utilization != nullptr && read(api_->utilization(device.handle, &utilization))) {
      health.utilization_percent = static_cast<int>(utilization.gpu);
    }
    unsigned int celsius = 0;
    if (api_->temperature != nullptr &&
        read(api_->temperature(device.handle, nvml::kTemperatureGpu, &celsius))) {
      health.temperature_c = static_cast<int>(celsius);
    }
    unsigned int milliwatts = 0;
    if (api_->power != nullptr && read(api_->power(device.handle, &milliwatts))) {
      health.power_w = milliwatts / 1000.0;
    }
    unsigned long long ecc = 0;
    if (api_->ecc_errors != nullptr &&
        read(api_->ecc_errors(device.handle, nvml::kMemoryErrorTypeUncorrected, nvml::kVolatileEcc,
                              &ecc))) {
      health.ecc_uncorrected_errors = static_cast<int64_t>(ecc);
    }
    if (device.xid_registered) {
      health.xid_errors = device.xid_errors;
      health.last_xid = device.last_xid;
    }
    readings.push_back(std::move(health));
  }
  return readings;
}

void Nvml::CollectXidEvents() {
  if (xid_events_ == nullptr) return;
  // A timeout of 0 returns at once: TIMEOUT when no event is pending. The bound keeps a GPU that
  // floods XIDs from holding the lock; the rest wait for the next call.
  for (int i = 0; i < 1024; ++i) {
    nvml::EventData event = {};
    if (api_->event_set_wait(xid_events_, &event, 0) != nvml::kSuccess) return;
    if ((event.event_type & nvml::kEventTypeXidCriticalError) == 0) continue;
    for (Device& device : devices_) {
      if (device.handle != nullptr && device.handle == event.device) {
        ++device.xid_errors;
        device.last_xid = static_cast<int>(event.event_data);
      }
    }
  }
}

core::Result<GpuInventory> DiscoverGpus(const catalog::Catalog& catalog,
                                        std::string_view simulate_spec,
                                        std::unique_ptr<Nvml>* keep_nvml) {
  GpuInventory inventory;
  if (!simulate_spec.empty()) {
    core::Result<std::vector<Gpu>> gpus = ParseSimulatedGpus(simulate_spec, catalog);
    if (!gpus.ok()) return gpus.status();
    inventory.gpus = std::move(gpus).value();
    inventory.source = "simulated";
    return inventory;
  }
  core::Result<std::unique_ptr<Nvml>> nvml = Nvml::Load();
  if (!nvml.ok()) {
    inventory.source = "none";
    inventory.note = nvml.status().message();
    return inventory;
  }
  GpuInventory found = (*nvml)->Discover(catalog);
  if (keep_nvml != nullptr) *keep_nvml = std::move(*nvml);
  return found;
}

}  // namespace suanli::agent
