#include "agent/gpus.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
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

core::Status CountError(std::string_view entry, std::string_view what) {
  return core::InvalidArgumentError("--simulate-gpus entry '" + std::string(entry) + "' " +
                                    std::string(what) + "; " + std::string(kSpecExample));
}

// Appends the GPUs of one entry ("2xA100 80GB", "RTX 4090") to `gpus`.
core::Status AddSimulatedEntry(std::string_view entry, const catalog::Catalog& catalog,
                               std::vector<Gpu>& gpus) {
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
  if (gpus.size() + static_cast<size_t>(count) > kMaxSimulatedGpus) {
    return core::InvalidArgumentError("--simulate-gpus asks for more than 64 GPUs in all; " +
                                      std::string(kSpecExample));
  }
  for (int i = 0; i < count; ++i) {
    Gpu gpu;
    gpu.index = static_cast<int>(gpus.size());
    gpu.uuid = "SIM-GPU-" + std::to_string(gpu.index) + "-" + Slug(type.name);
    gpu.name = type.name;
    gpu.type = type.name;
    gpu.memory_gb = type.memory_gb;
    gpu.simulated = true;
    gpus.push_back(std::move(gpu));
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
  size_t start = 0;
  while (true) {
    const size_t comma = spec.find(',', start);
    const std::string_view entry =
        Trim(spec.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (entry.empty()) {
      return core::InvalidArgumentError("--simulate-gpus '" + std::string(spec) +
                                        "' has an empty entry; " + std::string(kSpecExample));
    }
    SUANLI_RETURN_IF_ERROR(AddSimulatedEntry(entry, catalog, gpus));
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
  for (const Device& device : devices_) {
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
    inventory.gpus.push_back(std::move(gpu));
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
