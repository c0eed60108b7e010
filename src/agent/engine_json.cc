#include "agent/engine_json.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "core/mount_path.h"

namespace suanli::agent::engine_json {
namespace {

namespace json = boost::json;

// A pod's capabilities, the same on Docker and Podman (whose default sets differ): all are dropped
// and these added back, on top of no-new-privileges. They are what root in a GPU pod's usual work
// needs: installing packages and writing files as other users (CHOWN, DAC_OVERRIDE, FOWNER,
// FSETID), signalling its own processes (KILL), dropping to another user as sshd and su do
// (SETUID, SETGID), binding ports below 1024 (NET_BIND_SERVICE), sshd's privilege separation
// (SYS_CHROOT), and sshd in RHEL-family images, which exits on a failed audit write (AUDIT_WRITE).
// Left out of Docker's default set:
// - NET_RAW: raw sockets let a pod spoof ARP and DNS to its neighbours on the bridge network
//   (ping still works through ICMP datagram sockets).
// - MKNOD: a pod gets its devices (GPUs included) from the engine, never by creating nodes.
// - SETFCAP, SETPCAP: with no-new-privileges file capabilities never take effect on exec, so
//   writing them or passing capabilities on only adds attack surface.
// The GPU needs none: the engine hands the devices in (CDI or the NVIDIA runtime).
constexpr std::array<std::string_view, 10> kPodCapabilities = {
    "CHOWN",  "DAC_OVERRIDE", "FOWNER",           "FSETID",     "KILL",
    "SETGID", "SETUID",       "NET_BIND_SERVICE", "SYS_CHROOT", "AUDIT_WRITE"};

std::string CdiName(const std::string& gpu_id) {
  // An id that is already a CDI name ("nvidia.com/gpu=all") is taken as it is.
  if (gpu_id.find('=') != std::string::npos) return gpu_id;
  return "nvidia.com/gpu=" + gpu_id;
}

std::string PortKey(const PublishedPort& port) {
  return std::to_string(port.container_port) + "/" + port.protocol;
}

json::array Strings(const std::vector<std::string>& values) {
  json::array array;
  for (const std::string& value : values) array.emplace_back(value);
  return array;
}

json::array PodCapabilities() {
  json::array array;
  for (std::string_view cap : kPodCapabilities) array.emplace_back(cap);
  return array;
}

json::object Labels(const std::map<std::string, std::string>& labels) {
  json::object object;
  for (const auto& [key, value] : labels) object[key] = value;
  return object;
}
}  // namespace

const json::object* ObjectAt(const json::object* object, std::string_view key) {
  if (object == nullptr) return nullptr;
  const json::value* value = object->if_contains(key);
  return value != nullptr ? value->if_object() : nullptr;
}

std::string StringAt(const json::object* object, std::string_view key) {
  if (object == nullptr) return {};
  const json::value* value = object->if_contains(key);
  if (value == nullptr || !value->is_string()) return {};
  return std::string(value->get_string());
}

int64_t IntAt(const json::object* object, std::string_view key) {
  if (object == nullptr) return 0;
  const json::value* value = object->if_contains(key);
  if (value == nullptr) return 0;
  if (value->is_int64()) return value->get_int64();
  if (value->is_uint64()) return static_cast<int64_t>(value->get_uint64());
  if (value->is_double()) return static_cast<int64_t>(value->get_double());
  return 0;
}

bool BoolAt(const json::object* object, std::string_view key) {
  if (object == nullptr) return false;
  const json::value* value = object->if_contains(key);
  return value != nullptr && value->is_bool() && value->get_bool();
}

std::optional<json::value> ParseJson(std::string_view text) {
  boost::system::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec) return std::nullopt;
  return value;
}

core::Status CheckReference(std::string_view text, std::string_view what, bool image) {
  auto allowed = [image](char c) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') {
      return true;
    }
    return image && (c == '/' || c == ':' || c == '@');
  };
  if (text.empty() || text.size() > 512 || !std::all_of(text.begin(), text.end(), allowed)) {
    return core::InvalidArgumentError("'" + std::string(text) + "' is not a valid " +
                                      std::string(what));
  }
  return core::Status::Ok();
}

core::Status CheckSpec(const ContainerSpec& spec) {
  SUANLI_RETURN_IF_ERROR(CheckReference(spec.name, "container name", /*image=*/false));
  SUANLI_RETURN_IF_ERROR(CheckReference(spec.image, "image reference", /*image=*/true));
  for (const auto& [key, value] : spec.env) {
    if (key.empty() || key.find('=') != std::string::npos) {
      return core::InvalidArgumentError("'" + key + "' is not a valid environment variable name");
    }
  }
  for (const PublishedPort& port : spec.ports) {
    if (port.container_port < 1 || port.container_port > 65535 || port.host_port < 0 ||
        port.host_port > 65535 || (port.protocol != "tcp" && port.protocol != "udp")) {
      return core::InvalidArgumentError("port " + std::to_string(port.container_port) + " -> " +
                                        std::to_string(port.host_port) + "/" + port.protocol +
                                        " is not a valid port mapping (1-65535, tcp or udp)");
    }
  }
  if (!spec.network.empty()) {
    SUANLI_RETURN_IF_ERROR(CheckReference(spec.network, "network name", /*image=*/false));
  }
  if (!spec.volume_name.empty()) {
    SUANLI_RETURN_IF_ERROR(CheckReference(spec.volume_name, "volume name", /*image=*/false));
    // Checked again here: the path becomes part of a bind ("name:path"), and a server of an older
    // version, or a stored pod from before the server checked, may send one that is not clean.
    SUANLI_RETURN_IF_ERROR(core::CheckMountPath(spec.volume_mount_path,
                                                "volume '" + spec.volume_name + "' mount path"));
  }
  for (const ContainerSpec::Volume& volume : spec.more_volumes) {
    SUANLI_RETURN_IF_ERROR(CheckReference(volume.name, "volume name", /*image=*/false));
    SUANLI_RETURN_IF_ERROR(
        core::CheckMountPath(volume.mount_path, "volume '" + volume.name + "' mount path"));
    // A bind's source is a clean absolute path as well (no ':' either, which would end it).
    if (!volume.host_path.empty()) {
      SUANLI_RETURN_IF_ERROR(
          core::CheckMountPath(volume.host_path, "volume '" + volume.name + "' host path"));
    }
  }
  if (spec.nano_cpus < 0 || spec.memory_bytes < 0 || spec.pids_limit < 0) {
    return core::InvalidArgumentError("CPU, memory and pids limits cannot be negative");
  }
  // A GPU pod that starts without its GPUs would bill for nothing, so no combination may drop
  // them silently.
  if (spec.gpu_access == GpuAccess::kNone && !spec.gpu_ids.empty()) {
    return core::InvalidArgumentError("container '" + spec.name +
                                      "' lists GPUs but no way to attach them (GpuAccess::kNone)");
  }
  if (spec.gpu_access != GpuAccess::kNone && spec.gpu_ids.empty()) {
    return core::InvalidArgumentError("container '" + spec.name +
                                      "' asks for GPU access with no GPU");
  }
  return core::Status::Ok();
}

// The Docker Engine API's create body (Docker, and Podman without GPUs).
std::string CompatCreateBody(const ContainerSpec& spec) {
  json::object body;
  body["Image"] = spec.image;
  if (!spec.command.empty()) body["Cmd"] = Strings(spec.command);
  json::array env;
  for (const auto& [key, value] : spec.env) env.emplace_back(key + "=" + value);
  body["Env"] = std::move(env);
  body["Labels"] = Labels(spec.labels);
  json::object exposed;
  json::object bindings;
  for (const PublishedPort& port : spec.ports) {
    exposed[PortKey(port)] = json::object();
    json::object binding{{"HostIp", spec.publish_address},
                         {"HostPort", port.host_port == 0 ? "" : std::to_string(port.host_port)}};
    json::value& list = bindings[PortKey(port)];
    if (!list.is_array()) list = json::array();
    list.get_array().emplace_back(std::move(binding));
  }
  body["ExposedPorts"] = std::move(exposed);

  json::object host;
  host["PortBindings"] = std::move(bindings);
  if (!spec.network.empty()) host["NetworkMode"] = spec.network;
  if (spec.nano_cpus > 0) host["NanoCpus"] = spec.nano_cpus;
  if (spec.memory_bytes > 0) host["Memory"] = spec.memory_bytes;
  if (spec.pids_limit > 0) host["PidsLimit"] = spec.pids_limit;
  json::array binds;
  if (!spec.volume_name.empty()) {
    // A name (not a path) before the colon: the engine creates the named volume on first use.
    binds.emplace_back(spec.volume_name + ":" + spec.volume_mount_path);
  }
  for (const ContainerSpec::Volume& volume : spec.more_volumes) {
    // A path before the colon binds that directory; a name, the named volume.
    binds.emplace_back((volume.host_path.empty() ? volume.name : volume.host_path) + ":" +
                       volume.mount_path + (volume.read_only ? ":ro" : ""));
  }
  if (!binds.empty()) host["Binds"] = std::move(binds);
  // An init process as PID 1 forwards SIGTERM and reaps zombies: most images' main process does
  // neither, so without it every stop waits out the whole grace period and ends in SIGKILL.
  host["Init"] = true;
  host["Privileged"] = false;
  host["SecurityOpt"] = json::array{"no-new-privileges"};
  host["CapDrop"] = json::array{"ALL"};
  host["CapAdd"] = PodCapabilities();
  if (spec.gpu_access == GpuAccess::kDeviceRequests) {
    host["DeviceRequests"] = json::array{json::object{{"Driver", "nvidia"},
                                                      {"DeviceIDs", Strings(spec.gpu_ids)},
                                                      {"Capabilities", json::array{{"gpu"}}}}};
  } else if (spec.gpu_access == GpuAccess::kCdi) {
    // Docker 25+ takes CDI names as a device request of the "cdi" driver (what `docker run
    // --device nvidia.com/gpu=0` sends); an older Docker refuses the driver, it never ignores it.
    std::vector<std::string> names;
    for (const std::string& id : spec.gpu_ids) names.push_back(CdiName(id));
    host["DeviceRequests"] =
        json::array{json::object{{"Driver", "cdi"}, {"DeviceIDs", Strings(names)}}};
  }
  body["HostConfig"] = std::move(host);
  return json::serialize(body);
}

// Podman's own create body, for CDI devices: its Docker-compatible API (4.3 here, 5.1 per
// containers/podman#23560) ignores DeviceRequests, and turns HostConfig.Devices into
// "NAME:PATH:PERMS", which it then looks up as one CDI name ("nvidia.com/gpu=0::rwm") or stats as
// a path. Only the libpod API's {"devices": [{"path": "nvidia.com/gpu=0"}]} attaches them. Nor
// does that API take a user namespace's id mappings. Same hardening and limits as
// CompatCreateBody.
std::string LibpodCreateBody(const ContainerSpec& spec) {
  json::object body;
  body["name"] = spec.name;
  body["image"] = spec.image;
  if (!spec.command.empty()) body["command"] = Strings(spec.command);
  json::object env;
  for (const auto& [key, value] : spec.env) env[key] = value;
  body["env"] = std::move(env);
  body["labels"] = Labels(spec.labels);
  json::array mappings;
  for (const PublishedPort& port : spec.ports) {
    mappings.emplace_back(json::object{{"container_port", port.container_port},
                                       {"host_port", port.host_port},
                                       {"host_ip", spec.publish_address},
                                       {"protocol", port.protocol}});
  }
  body["portmappings"] = std::move(mappings);
  if (!spec.network.empty()) {
    body["netns"] = json::object{{"nsmode", "bridge"}};
    body["Networks"] = json::object{{spec.network, json::object()}};
  }
  json::object limits;
  if (spec.nano_cpus > 0) {
    // NanoCpus as the CFS quota per 100 ms period, which is how the engines apply it.
    constexpr int64_t kPeriodMicros = 100'000;
    limits["cpu"] = json::object{{"quota", spec.nano_cpus / 10'000}, {"period", kPeriodMicros}};
  }
  if (spec.memory_bytes > 0) limits["memory"] = json::object{{"limit", spec.memory_bytes}};
  if (spec.pids_limit > 0) limits["pids"] = json::object{{"limit", spec.pids_limit}};
  body["resource_limits"] = std::move(limits);
  json::array volumes;
  if (!spec.volume_name.empty()) {
    volumes.push_back(json::object{{"Name", spec.volume_name}, {"Dest", spec.volume_mount_path}});
  }
  json::array binds;  // libpod takes a host directory as an OCI mount, not as a named volume
  for (const ContainerSpec::Volume& volume : spec.more_volumes) {
    if (!volume.host_path.empty()) {
      json::array options{"rbind"};
      if (volume.read_only) options.emplace_back("ro");
      binds.push_back(json::object{{"type", "bind"},
                                   {"source", volume.host_path},
                                   {"destination", volume.mount_path},
                                   {"options", std::move(options)}});
      continue;
    }
    json::object named{{"Name", volume.name}, {"Dest", volume.mount_path}};
    if (volume.read_only) named["Options"] = json::array{"ro"};
    volumes.push_back(std::move(named));
  }
  if (!volumes.empty()) body["volumes"] = std::move(volumes);
  if (!binds.empty()) body["mounts"] = std::move(binds);
  // Podman's own default is 10 s, which a forced Remove would wait out before killing; the
  // compatible API's containers get 0, and Stop passes its grace explicitly anyway.
  body["stop_timeout"] = 0;
  body["init"] = true;  // as HostConfig.Init in the compatible body
  body["privileged"] = false;
  body["no_new_privileges"] = true;
  body["cap_drop"] = json::array{"ALL"};
  body["cap_add"] = PodCapabilities();
  json::array devices;
  for (const std::string& id : spec.gpu_ids)
    devices.emplace_back(json::object{{"path", CdiName(id)}});
  body["devices"] = std::move(devices);
  if (spec.remap_user_namespace) {
    // Podman chowns a new named volume to the mapped root on its first mount.
    const json::array ids{json::object{
        {"container_id", 0}, {"host_id", kRemappedRootId}, {"size", kRemappedIdCount}}};
    body["userns"] = json::object{{"nsmode", "private"}};
    body["idmappings"] = json::object{{"UIDMap", ids}, {"GIDMap", ids}};
  }
  return json::serialize(body);
}

core::Result<ContainerInfo> ParseContainer(const json::object& root) {
  ContainerInfo info;
  info.id = StringAt(&root, "Id");
  if (info.id.empty())
    return core::InternalError("the engine's inspect answer has no container Id");
  info.name = StringAt(&root, "Name");
  if (!info.name.empty() && info.name[0] == '/') info.name.erase(0, 1);
  const json::object* config = ObjectAt(&root, "Config");
  info.image = StringAt(config, "Image");
  if (const json::object* labels = ObjectAt(config, "Labels")) {
    for (const auto& [key, value] : *labels) {
      if (value.is_string()) info.labels[std::string(key)] = std::string(value.get_string());
    }
  }
  const json::object* state = ObjectAt(&root, "State");
  info.status = StringAt(state, "Status");
  info.running = BoolAt(state, "Running");
  info.exit_code = static_cast<int>(IntAt(state, "ExitCode"));
  info.error = StringAt(state, "Error");
  info.started_at = ParseEngineTime(StringAt(state, "StartedAt"));
  info.finished_at = ParseEngineTime(StringAt(state, "FinishedAt"));

  // {"8080/tcp": [{"HostIp": "0.0.0.0", "HostPort": "31234"}, {"HostIp": "::", ...}]}: Docker
  // lists an IPv4 and an IPv6 binding of one port, hence the set.
  std::set<std::tuple<int, int, std::string>> seen;
  if (const json::object* ports = ObjectAt(ObjectAt(&root, "NetworkSettings"), "Ports")) {
    for (const auto& [key, bindings] : *ports) {
      std::string_view text = key;
      size_t slash = text.find('/');
      int container_port = std::atoi(std::string(text.substr(0, slash)).c_str());
      std::string protocol =
          slash == std::string_view::npos ? "tcp" : std::string(text.substr(slash + 1));
      if (!bindings.is_array()) continue;  // null: exposed, not published
      for (const json::value& binding : bindings.get_array()) {
        if (!binding.is_object()) continue;
        int host_port = std::atoi(StringAt(&binding.get_object(), "HostPort").c_str());
        if (host_port <= 0 || !seen.emplace(container_port, host_port, protocol).second) continue;
        info.ports.push_back({container_port, host_port, protocol});
      }
    }
  }
  return info;
}

core::Status EngineErrorStatus(int http_status, std::string_view message, std::string_view what) {
  std::string text = std::string(what) + ": " + std::string(message);
  if (http_status == 404 ||
      (http_status == 500 && message.find("no such container") != std::string_view::npos)) {
    return core::NotFoundError(std::move(text));
  }
  return core::InternalError(std::move(text));
}

std::string GhostContainerId(std::string_view message) {
  constexpr std::string_view kPrefix = "getting container from store \"";
  constexpr std::string_view kSuffix = "\": container not known";
  const size_t start = message.find(kPrefix);
  if (start == std::string_view::npos) return "";
  const size_t id_start = start + kPrefix.size();
  const size_t id_end = message.find(kSuffix, id_start);
  if (id_end == std::string_view::npos) return "";
  std::string_view id = message.substr(id_start, id_end - id_start);
  // Podman's ids are 64 hex digits; anything else is not this message and must not reach a URL.
  if (id.size() != 64 || !std::all_of(id.begin(), id.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
      })) {
    return "";
  }
  return std::string(id);
}

void PullTracker::Feed(std::string_view piece) {
  pending_.append(piece);
  size_t newline;
  while ((newline = pending_.find('\n')) != std::string::npos) {
    Line(std::string_view(pending_).substr(0, newline));
    pending_.erase(0, newline + 1);
  }
}

void PullTracker::Finish() {
  Line(pending_);
  pending_.clear();
}

void PullTracker::Line(std::string_view line) {
  std::optional<json::value> value = ParseJson(line);
  if (!value || !value->is_object()) return;  // blank lines, or a truncated last one
  const json::object& object = value->get_object();
  if (std::string error = StringAt(&object, "error"); !error.empty()) {
    if (error_.empty()) error_ = std::move(error);
    return;
  }
  PullProgress progress;
  progress.status = StringAt(&object, "status");
  std::string id = StringAt(&object, "id");
  const json::object* detail = ObjectAt(&object, "progressDetail");
  if (!id.empty()) {
    Layer& layer = layers_[id];
    int64_t total = IntAt(detail, "total");
    if (progress.status == "Downloading" && total > 0) {
      layer.current = IntAt(detail, "current");
      layer.total = total;
    } else if (progress.status == "Download complete" || progress.status == "Pull complete" ||
               progress.status == "Already exists") {
      layer.current = layer.total;
    }
  }
  for (const auto& [layer_id, layer] : layers_) {
    progress.current_bytes += layer.current;
    progress.total_bytes += layer.total;
  }
  if (on_progress_) on_progress_(progress);
}

}  // namespace suanli::agent::engine_json
