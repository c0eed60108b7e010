#include "agent/engine.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>

#include "agent/engine_json.h"
#include "core/mutex.h"
#include "net/http_client.h"

namespace suanli::agent {
namespace {

namespace json = boost::json;
using engine_json::BoolAt;
using engine_json::CheckReference;
using engine_json::CheckSpec;
using engine_json::CompatCreateBody;
using engine_json::IntAt;
using engine_json::LibpodCreateBody;
using engine_json::ObjectAt;
using engine_json::ParseContainer;
using engine_json::ParseJson;
using engine_json::StringAt;

// Podman 4.3 answers 1.41; Docker accepts older versions than its own, so this one prefix serves
// both.
constexpr std::string_view kApi = "/v1.41";
// Podman's own API, used only for what its Docker-compatible one cannot do (CDI devices; see
// Create).
constexpr std::string_view kLibpodApi = "/v4.0.0/libpod";

constexpr std::chrono::seconds kCallTimeout{60};  // create, inspect, ... on a busy host
// A pull reports progress every few seconds; a longer silence means a stuck registry.
constexpr std::chrono::minutes kPullSilence{10};
// A followed log is silent while the container is; the call ends when the container stops.
constexpr std::chrono::hours kFollowSilence{24};
// Beyond the grace the engine itself waits, to kill and reap the container.
constexpr std::chrono::seconds kStopSlack{30};

constexpr std::string_view kStartHint =
    "start it (sudo systemctl start docker, or: sudo bash scripts/engine.sh)";

// The engine's reason for an error answer: Docker and Podman both send {"message": "..."}.
std::string EngineMessage(const net::HttpResponse& response) {
  if (std::optional<json::value> body = ParseJson(response.body); body && body->is_object()) {
    std::string message = StringAt(&body->get_object(), "message");
    if (!message.empty()) return message;
  }
  std::string text = response.body.substr(0, 300);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text.empty() ? "HTTP status " + std::to_string(response.status) : text;
}

// NOT_FOUND or INTERNAL (engine_json::EngineErrorStatus); `what` says which call failed.
core::Status EngineError(const net::HttpResponse& response, std::string_view what) {
  return engine_json::EngineErrorStatus(response.status, EngineMessage(response), what);
}

std::string SinceParameter(core::TimePoint since) {
  const int64_t nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(since.time_since_epoch()).count();
  if (nanos <= 0) return "0";
  char text[40];
  std::snprintf(text, sizeof text, "%lld.%09lld", static_cast<long long>(nanos / 1'000'000'000),
                static_cast<long long>(nanos % 1'000'000'000));
  return text;
}

std::string LogsTarget(std::string_view id, const LogOptions& options, bool follow) {
  std::string target = std::string(kApi) + "/containers/" + std::string(id) +
                       "/logs?stdout=1&stderr=1&tail=" +
                       (options.tail < 0 ? std::string("all") : std::to_string(options.tail));
  if (options.since) target += "&since=" + SinceParameter(*options.since);
  if (options.timestamps) target += "&timestamps=1";
  if (follow) target += "&follow=1";
  return target;
}

class DockerApiEngine final : public Engine {
 public:
  explicit DockerApiEngine(std::string url) : url_(std::move(url)) {}
  DockerApiEngine(const DockerApiEngine&) = delete;
  DockerApiEngine& operator=(const DockerApiEngine&) = delete;

  const std::string& socket_url() const override { return url_; }

  core::Result<EngineVersion> Version() override {
    core::Result<net::HttpResponse> response = Call("GET", std::string(kApi) + "/version");
    if (!response.ok()) return response.status();
    if (response->status != 200) return EngineError(*response, "the engine's version");
    std::optional<json::value> body = ParseJson(response->body);
    if (!body || !body->is_object()) {
      return core::InternalError("the engine at " + url_ + " answered /version with no JSON");
    }
    const json::object& root = body->get_object();
    EngineVersion version;
    version.version = StringAt(&root, "Version");
    version.api_version = StringAt(&root, "ApiVersion");
    // Docker names itself in Platform.Name ("Docker Engine - Community"); Podman there names
    // the OS, and itself as a component ("Podman Engine").
    std::string platform = StringAt(ObjectAt(&root, "Platform"), "Name");
    if (platform.find("Engine") != std::string::npos) version.name = platform;
    if (const json::value* components = root.if_contains("Components");
        version.name.empty() && components != nullptr && components->is_array()) {
      for (const json::value& component : components->get_array()) {
        if (!component.is_object()) continue;
        std::string name = StringAt(&component.get_object(), "Name");
        if (name.find("Engine") != std::string::npos && name != "Engine") {
          version.name = name;
          break;
        }
      }
    }
    if (version.name.empty()) version.name = "Docker Engine";
    return version;
  }

  core::Result<bool> ImagePresent(std::string_view image) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(image, "image reference", /*image=*/true));
    core::Result<net::HttpResponse> response =
        Call("GET", std::string(kApi) + "/images/" + std::string(image) + "/json");
    if (!response.ok()) return response.status();
    if (response->status == 200) return true;
    if (response->status == 404) return false;
    return EngineError(*response, "looking up image " + std::string(image));
  }

  core::Status Pull(std::string_view image,
                    const std::function<void(const PullProgress&)>& on_progress) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(image, "image reference", /*image=*/true));
    // An image without a tag must say "latest": an empty tag asks Docker for every tag.
    std::string name(image);
    std::string tag;
    if (name.find('@') == std::string::npos) {
      size_t colon = name.rfind(':');
      size_t slash = name.rfind('/');
      if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
        tag = name.substr(colon + 1);
        name.resize(colon);
      } else {
        tag = "latest";
      }
    }
    std::string target = std::string(kApi) + "/images/create?fromImage=" + net::PercentEncode(name);
    if (!tag.empty()) target += "&tag=" + net::PercentEncode(tag);

    core::Result<std::unique_ptr<net::HttpClient>> client = Client(kPullSilence);
    if (!client.ok()) return client.status();
    engine_json::PullTracker tracker(on_progress);
    std::string error_body;  // a refusal before the stream starts is one JSON error
    core::Result<net::HttpResponse> response =
        (*client)->Stream("POST", target, {}, {}, [&](std::string_view piece) {
          if (error_body.size() < 4096) error_body.append(piece);
          tracker.Feed(piece);
          return true;
        });
    if (!response.ok()) return Unreachable(response.status());
    tracker.Finish();
    if (response->status != 200) {
      response->body = std::move(error_body);
      return EngineError(*response, "pulling " + std::string(image));
    }
    if (!tracker.error().empty()) {
      std::string message = "pulling " + std::string(image) + " failed: " + tracker.error();
      const std::string& error = tracker.error();
      if (error.find("manifest unknown") != std::string::npos ||
          error.find("not found") != std::string::npos ||
          error.find("repository does not exist") != std::string::npos) {
        return core::NotFoundError(std::move(message));
      }
      return core::InternalError(std::move(message));
    }
    return core::Status::Ok();
  }

  core::Result<std::string> Create(const ContainerSpec& spec) override {
    SUANLI_RETURN_IF_ERROR(CheckSpec(spec));
    bool libpod = false;
    if (spec.gpu_access != GpuAccess::kNone || spec.remap_user_namespace) {
      core::Result<bool> podman = IsPodman();
      if (!podman.ok()) return podman.status();
      if (*podman && spec.gpu_access == GpuAccess::kDeviceRequests) {
        return core::FailedPreconditionError(
            "Podman ignores DeviceRequests (container '" + spec.name +
            "' would start without its GPUs); attach GPUs through CDI instead: generate the spec "
            "with `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`");
      }
      if (!*podman && spec.remap_user_namespace) {
        SUANLI_RETURN_IF_ERROR(CheckDockerRemapsUserNamespaces());
      }
      libpod = *podman && (spec.gpu_access == GpuAccess::kCdi || spec.remap_user_namespace);
    }
    core::Result<net::HttpResponse> response =
        libpod
            ? Call("POST", std::string(kLibpodApi) + "/containers/create", LibpodCreateBody(spec))
            : Call("POST", std::string(kApi) + "/containers/create?name=" + spec.name,
                   CompatCreateBody(spec));
    if (!response.ok()) return response.status();
    if (response->status == 201 || response->status == 200) {
      std::optional<json::value> body = ParseJson(response->body);
      std::string id = body && body->is_object() ? StringAt(&body->get_object(), "Id") : "";
      if (id.empty()) {
        return core::InternalError("the engine created container '" + spec.name +
                                   "' but sent no id");
      }
      return id;
    }
    std::string message = EngineMessage(*response);
    // Docker answers 409; Podman 500 with "that name is already in use".
    if (response->status == 409 || message.find("already in use") != std::string::npos) {
      return core::AlreadyExistsError("a container named '" + spec.name + "' already exists");
    }
    // Before the image's 404: Docker answers 404 for a missing network too (Podman 500).
    if (!spec.network.empty() && message.find("network") != std::string::npos &&
        message.find("not found") != std::string::npos) {
      return core::FailedPreconditionError("network " + spec.network + " of container '" +
                                           spec.name + "' does not exist (" + message + ")");
    }
    // Docker and Podman's compatible API answer 404; Podman's own 500 with "image not known".
    if (response->status == 404 || message.find("image not known") != std::string::npos) {
      return core::NotFoundError("image " + spec.image +
                                 " is not present on this host; pull it first (" + message + ")");
    }
    return core::InternalError("creating container '" + spec.name + "': " + message);
  }

  core::Status Start(std::string_view id_or_name) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(id_or_name, "container id or name", /*image=*/false));
    core::Result<net::HttpResponse> response =
        Call("POST", std::string(kApi) + "/containers/" + std::string(id_or_name) + "/start");
    if (!response.ok()) return response.status();
    // 304: already running.
    if (response->status == 204 || response->status == 304) return core::Status::Ok();
    return EngineError(*response, "starting container " + std::string(id_or_name));
  }

  core::Status Stop(std::string_view id_or_name, std::chrono::seconds grace) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(id_or_name, "container id or name", /*image=*/false));
    const int64_t seconds = std::max<int64_t>(grace.count(), 0);
    core::Result<net::HttpResponse> response =
        Call("POST",
             std::string(kApi) + "/containers/" + std::string(id_or_name) +
                 "/stop?t=" + std::to_string(seconds),
             {}, std::chrono::seconds(seconds) + kStopSlack);
    if (!response.ok()) return response.status();
    // 304: not running (created, exited, or stopped already).
    if (response->status == 204 || response->status == 304) return core::Status::Ok();
    return EngineError(*response, "stopping container " + std::string(id_or_name));
  }

  core::Status Remove(std::string_view id_or_name) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(id_or_name, "container id or name", /*image=*/false));
    // Without v=true: the pod's named volume outlives its container.
    const std::string path = std::string(kApi) + "/containers/" + std::string(id_or_name);
    for (int attempt = 1;; ++attempt) {
      core::Result<net::HttpResponse> response = Call("DELETE", path + "?force=true");
      if (!response.ok()) return response.status();
      if (response->status == 204 || response->status == 200) return core::Status::Ok();
      // Podman 4.3 answers "unlinkat .../userdata/shm: device or resource busy" now and then for
      // a container in a user namespace that has just exited: its own cleanup is unmounting the
      // shm as the remove runs. The container is gone by then, or is on a second try.
      constexpr int kBusyAttempts = 5;
      if (attempt < kBusyAttempts &&
          EngineMessage(*response).find("resource busy") != std::string::npos) {
        if (InspectJson(id_or_name).status().code() == core::StatusCode::kNotFound) {
          return core::Status::Ok();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
        continue;
      }
      return EngineError(*response, "removing container " + std::string(id_or_name));
    }
  }

  core::Result<ContainerInfo> Inspect(std::string_view id_or_name) override {
    core::Result<json::value> raw = InspectJson(id_or_name);
    if (!raw.ok()) return raw.status();
    return ParseContainer(raw->get_object());
  }

  core::Result<std::vector<ContainerInfo>> ListLabelled(std::string_view label_key) override {
    if (label_key.empty()) return core::InvalidArgumentError("an empty label key matches nothing");
    json::object filters{{"label", json::array{label_key}}};
    core::Result<net::HttpResponse> response =
        ListCall(std::string(kApi) + "/containers/json?all=true&filters=" +
                 net::PercentEncode(json::serialize(filters)));
    if (!response.ok()) return response.status();
    if (response->status != 200) return EngineError(*response, "listing containers");
    std::optional<json::value> body = ParseJson(response->body);
    if (!body || !body->is_array()) {
      return core::InternalError("the engine's container list is not a JSON array");
    }
    std::vector<ContainerInfo> containers;
    for (const json::value& entry : body->get_array()) {
      std::string id = entry.is_object() ? StringAt(&entry.get_object(), "Id") : "";
      if (id.empty()) continue;
      core::Result<ContainerInfo> info = Inspect(id);
      // Removed between the list and the inspect: it is not there any more, which is the answer.
      if (!info.ok() && info.status().code() == core::StatusCode::kNotFound) continue;
      if (!info.ok()) return info.status();
      // The filter is the engine's; check it, as a stale or foreign engine must not hand the
      // agent containers that are not its own.
      if (!info->labels.contains(std::string(label_key))) continue;
      containers.push_back(std::move(*info));
    }
    return containers;
  }

  core::Status RemoveVolume(std::string_view name) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(name, "volume name", /*image=*/false));
    // No force=true: Podman's force removes the containers using the volume, and answers 204 for
    // a volume that does not exist.
    core::Result<net::HttpResponse> response =
        Call("DELETE", std::string(kApi) + "/volumes/" + std::string(name));
    if (!response.ok()) return response.status();
    if (response->status == 204 || response->status == 200) return core::Status::Ok();
    if (response->status == 409) {
      return core::FailedPreconditionError("volume " + std::string(name) +
                                           " is in use by a container; remove the container "
                                           "first (" +
                                           EngineMessage(*response) + ")");
    }
    return EngineError(*response, "removing volume " + std::string(name));
  }

  core::Status CreateVolume(std::string_view name) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(name, "volume name", /*image=*/false));
    if (VolumeDirectory(name).ok()) return core::Status::Ok();
    core::Result<net::HttpResponse> created =
        Call("POST", std::string(kApi) + "/volumes/create",
             json::serialize(json::object{{"Name", std::string(name)}}));
    if (!created.ok()) return created.status();
    if (created->status == 201 || created->status == 200) return core::Status::Ok();
    return EngineError(*created, "creating volume " + std::string(name));
  }

  core::Status CreateIsolatedNetwork(std::string_view name,
                                     const std::map<std::string, std::string>& labels) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(name, "network name", /*image=*/false));
    core::Result<bool> podman = IsPodman();
    if (!podman.ok()) return podman.status();
    json::object label_object;
    for (const auto& [key, value] : labels) label_object[key] = value;
    // Podman's compatible API drops options it does not map ("isolate" among them), with only a
    // warning; its own API keeps them.
    core::Result<net::HttpResponse> response =
        *podman ? Call("POST", std::string(kLibpodApi) + "/networks/create",
                       json::serialize(json::object{{"name", std::string(name)},
                                                    {"driver", "bridge"},
                                                    {"options", json::object{{"isolate", "true"}}},
                                                    {"labels", std::move(label_object)}}))
                : Call("POST", std::string(kApi) + "/networks/create",
                       json::serialize(json::object{{"Name", std::string(name)},
                                                    {"Driver", "bridge"},
                                                    {"CheckDuplicate", true},
                                                    {"Labels", std::move(label_object)}}));
    if (!response.ok()) return response.status();
    if (response->status == 200 || response->status == 201) return core::Status::Ok();
    if (response->status == 409 || EngineMessage(*response).find("already") != std::string::npos) {
      return core::Status::Ok();
    }
    return EngineError(*response, "creating network " + std::string(name));
  }

  core::Result<std::vector<std::string>> ListLabelledNetworks(std::string_view label_key) override {
    if (label_key.empty()) return core::InvalidArgumentError("an empty label key matches nothing");
    json::object filters{{"label", json::array{label_key}}};
    core::Result<net::HttpResponse> response = ListCall(
        std::string(kApi) + "/networks?filters=" + net::PercentEncode(json::serialize(filters)));
    if (!response.ok()) return response.status();
    if (response->status != 200) return EngineError(*response, "listing networks");
    std::optional<json::value> body = ParseJson(response->body);
    if (!body || !body->is_array()) {
      return core::InternalError("the engine's network list is not a JSON array");
    }
    std::vector<std::string> names;
    for (const json::value& entry : body->get_array()) {
      const json::object* network = entry.is_object() ? &entry.get_object() : nullptr;
      // As for containers: the engine's filter is checked, not trusted.
      const json::object* labels = ObjectAt(network, "Labels");
      if (labels == nullptr || !labels->contains(label_key)) continue;
      if (std::string name = StringAt(network, "Name"); !name.empty()) {
        names.push_back(std::move(name));
      }
    }
    return names;
  }

  core::Status RemoveNetwork(std::string_view name) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(name, "network name", /*image=*/false));
    core::Result<net::HttpResponse> response =
        Call("DELETE", std::string(kApi) + "/networks/" + std::string(name));
    if (!response.ok()) return response.status();
    if (response->status == 204 || response->status == 200) return core::Status::Ok();
    const std::string message = EngineMessage(*response);
    // Docker answers 403 ("has active endpoints"), Podman 500 ("network is being used").
    if (response->status == 403 || response->status == 409 ||
        message.find("being used") != std::string::npos ||
        message.find("active endpoints") != std::string::npos) {
      return core::FailedPreconditionError("network " + std::string(name) +
                                           " has containers on it (" + message + ")");
    }
    return EngineError(*response, "removing network " + std::string(name));
  }

  core::Result<std::string> VolumeDirectory(std::string_view name) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(name, "volume name", /*image=*/false));
    core::Result<net::HttpResponse> response =
        Call("GET", std::string(kApi) + "/volumes/" + std::string(name));
    if (!response.ok()) return response.status();
    if (response->status == 404) return core::NotFoundError("no volume " + std::string(name));
    if (response->status != 200)
      return EngineError(*response, "inspecting volume " + std::string(name));
    std::optional<json::value> body = ParseJson(response->body);
    std::string mountpoint =
        body && body->is_object() ? StringAt(&body->get_object(), "Mountpoint") : "";
    if (mountpoint.empty() || mountpoint.front() != '/') {
      return core::FailedPreconditionError("volume " + std::string(name) +
                                           " has no host directory (a volume driver keeps it)");
    }
    return mountpoint;
  }

  core::Status PutArchive(std::string_view id_or_name, std::string_view path,
                          const std::string& tar) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(id_or_name, "container id or name", /*image=*/false));
    if (path.empty() || path.front() != '/') {
      return core::InvalidArgumentError("the archive's target directory must be an absolute path");
    }
    core::Result<net::HttpResponse> response =
        Call("PUT",
             std::string(kApi) + "/containers/" + std::string(id_or_name) +
                 "/archive?path=" + net::PercentEncode(path),
             tar, kCallTimeout, {{"content-type", "application/x-tar"}});
    if (!response.ok()) return response.status();
    if (response->status == 200) return core::Status::Ok();
    return EngineError(*response, "copying files into " + std::string(path) + " of container " +
                                      std::string(id_or_name));
  }

  core::Result<std::string> Logs(std::string_view id_or_name, const LogOptions& options) override {
    core::Result<bool> framed = Framed(id_or_name);
    if (!framed.ok()) return framed.status();
    core::Result<net::HttpResponse> response =
        Call("GET", LogsTarget(id_or_name, options, /*follow=*/false));
    if (!response.ok()) return response.status();
    if (response->status != 200) {
      return EngineError(*response, "logs of container " + std::string(id_or_name));
    }
    LogDemuxer demuxer(*framed);
    std::string text;
    if (!demuxer.Feed(response->body, text)) {
      return core::InternalError("logs of container " + std::string(id_or_name) + ": " +
                                 demuxer.error());
    }
    return text;
  }

  core::Result<ExecResult> Exec(std::string_view id_or_name, const std::vector<std::string>& argv,
                                std::chrono::seconds timeout) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(id_or_name, "container id or name", /*image=*/false));
    if (argv.empty()) return core::InvalidArgumentError("exec: no command");
    // Asked first: Docker says 409 for a stopped container, Podman 500.
    core::Result<ContainerInfo> info = Inspect(id_or_name);
    if (!info.ok()) return info.status();
    if (!info->running) {
      return core::FailedPreconditionError("container " + std::string(id_or_name) +
                                           " is not running: nothing can run in it");
    }
    json::array cmd;
    for (const std::string& arg : argv) cmd.emplace_back(arg);
    core::Result<net::HttpResponse> created =
        Call("POST", std::string(kApi) + "/containers/" + std::string(id_or_name) + "/exec",
             json::serialize(json::object{
                 {"Cmd", std::move(cmd)}, {"AttachStdout", true}, {"AttachStderr", true}}));
    if (!created.ok()) return created.status();
    if (created->status != 201) {
      return EngineError(*created, "creating an exec in container " + std::string(id_or_name));
    }
    std::optional<json::value> body = ParseJson(created->body);
    const std::string exec_id =
        body && body->is_object() ? StringAt(&body->get_object(), "Id") : "";
    SUANLI_RETURN_IF_ERROR(CheckReference(exec_id, "exec id", /*image=*/false));
    // Attached: the answer is the command's output and ends when the command does.
    core::Result<net::HttpResponse> started =
        Call("POST", std::string(kApi) + "/exec/" + exec_id + "/start",
             json::serialize(json::object{{"Detach", false}, {"Tty", false}}), timeout);
    if (!started.ok()) {
      return core::UnavailableError(
          "the command in container " + std::string(id_or_name) + " did not end within " +
          std::to_string(timeout.count()) +
          " s, or the engine stopped answering: " + started.status().message());
    }
    if (started->status != 200) {
      return EngineError(*started, "running a command in container " + std::string(id_or_name));
    }
    ExecResult result;
    LogDemuxer demuxer(/*framed=*/true);
    if (!demuxer.Feed(started->body, result.output)) result.output = started->body;
    constexpr size_t kMaxOutput = 64 * 1024;
    if (result.output.size() > kMaxOutput) {
      result.output.erase(0, result.output.size() - kMaxOutput);
    }
    core::Result<net::HttpResponse> inspected =
        Call("GET", std::string(kApi) + "/exec/" + exec_id + "/json");
    if (!inspected.ok()) return inspected.status();
    if (inspected->status != 200) return EngineError(*inspected, "inspecting exec " + exec_id);
    std::optional<json::value> state = ParseJson(inspected->body);
    if (!state || !state->is_object()) {
      return core::InternalError("the engine's answer about exec " + exec_id + " is not JSON");
    }
    result.exit_code = static_cast<int>(IntAt(&state->get_object(), "ExitCode"));
    return result;
  }

  core::Result<int64_t> WritableLayerBytes(std::string_view id_or_name) override {
    core::Result<json::value> raw = InspectJson(id_or_name, /*with_size=*/true);
    if (!raw.ok()) return raw.status();
    const json::value* size = raw->get_object().if_contains("SizeRw");
    if (size == nullptr || !size->is_number()) {
      return core::InternalError("the engine did not say how much container " +
                                 std::string(id_or_name) + " wrote (no SizeRw)");
    }
    return IntAt(&raw->get_object(), "SizeRw");
  }

  core::Result<uint64_t> CpuUsage(std::string_view id_or_name) override {
    SUANLI_RETURN_IF_ERROR(CheckReference(id_or_name, "container id or name", /*image=*/false));
    core::Result<net::HttpResponse> response =
        Call("GET", std::string(kApi) + "/containers/" + std::string(id_or_name) +
                        "/stats?stream=false&one-shot=true");
    if (!response.ok()) return response.status();
    if (response->status != 200) {
      return EngineError(*response, "the stats of container " + std::string(id_or_name));
    }
    std::optional<json::value> body = ParseJson(response->body);
    const json::object* root = body && body->is_object() ? &body->get_object() : nullptr;
    const json::object* usage = ObjectAt(ObjectAt(root, "cpu_stats"), "cpu_usage");
    if (usage == nullptr) {
      return core::InternalError("the stats of container " + std::string(id_or_name) +
                                 " have no cpu_stats.cpu_usage");
    }
    return static_cast<uint64_t>(std::max<int64_t>(IntAt(usage, "total_usage"), 0));
  }

  core::Status FollowLogs(std::string_view id_or_name, const LogOptions& options,
                          const std::function<bool(std::string_view)>& on_text) override {
    core::Result<bool> framed = Framed(id_or_name);
    if (!framed.ok()) return framed.status();
    core::Result<std::unique_ptr<net::HttpClient>> client = Client(kFollowSilence);
    if (!client.ok()) return client.status();
    LogDemuxer demuxer(*framed);
    std::string text;
    core::Result<net::HttpResponse> response =
        (*client)->Stream("GET", LogsTarget(id_or_name, options, /*follow=*/true), {}, {},
                          [&](std::string_view piece) {
                            text.clear();
                            if (!demuxer.Feed(piece, text)) return false;
                            return text.empty() || on_text(text);
                          });
    if (!response.ok()) return Unreachable(response.status());
    if (!demuxer.error().empty()) {
      return core::InternalError("logs of container " + std::string(id_or_name) + ": " +
                                 demuxer.error());
    }
    if (response->status != 200) {
      return core::InternalError("logs of container " + std::string(id_or_name) +
                                 ": the engine answered HTTP " + std::to_string(response->status));
    }
    return core::Status::Ok();
  }

 private:
  core::Result<std::unique_ptr<net::HttpClient>> Client(std::chrono::milliseconds timeout) {
    return net::HttpClient::Create(url_, net::HttpClientOptions{.timeout = timeout});
  }

  // A GET of a list that Podman fails as a whole while one container's record outlived its
  // storage (engine_json::GhostContainerId): the record is removed, said, and the list asked again.
  // A few in a row at most, so an engine that keeps answering so cannot hold the caller.
  core::Result<net::HttpResponse> ListCall(const std::string& target) {
    constexpr int kMostGhosts = 8;
    for (int removed = 0;; ++removed) {
      core::Result<net::HttpResponse> response = Call("GET", target);
      if (!response.ok() || response->status != 500 || removed == kMostGhosts) return response;
      const std::string ghost = engine_json::GhostContainerId(EngineMessage(*response));
      if (ghost.empty()) return response;
      core::Result<net::HttpResponse> removal =
          Call("DELETE", std::string(kApi) + "/containers/" + ghost + "?force=true");
      if (!removal.ok() || (removal->status != 204 && removal->status != 200)) return response;
      Notice("removed container " + ghost.substr(0, 12) +
             ": the engine kept its record but its storage was gone (its service was stopped "
             "while removing it), which failed every list of containers");
    }
  }

  // One request on a connection of its own (see the header: thread-safety).
  core::Result<net::HttpResponse> Call(std::string_view method, const std::string& target,
                                       std::string_view body = {},
                                       std::chrono::milliseconds timeout = kCallTimeout,
                                       const net::Headers& headers = {}) {
    core::Result<std::unique_ptr<net::HttpClient>> client = Client(timeout);
    if (!client.ok()) return client.status();
    core::Result<net::HttpResponse> response = (*client)->Send(method, target, body, headers);
    if (!response.ok()) return Unreachable(response.status());
    return response;
  }

  // The HTTP client's "cannot reach URL: reason" as a sentence that says how to fix it.
  core::Status Unreachable(const core::Status& status) const {
    if (status.code() != core::StatusCode::kUnavailable) return status;
    const std::string prefix = "cannot reach " + url_ + ": ";
    if (status.message().rfind(prefix, 0) == 0) {
      return core::UnavailableError("cannot reach the container engine at " + url_ + ": " +
                                    status.message().substr(prefix.size()) + "; " +
                                    std::string(kStartHint));
    }
    return core::UnavailableError("the container engine: " + status.message());
  }

  core::Result<json::value> InspectJson(std::string_view id_or_name, bool with_size = false) {
    SUANLI_RETURN_IF_ERROR(CheckReference(id_or_name, "container id or name", /*image=*/false));
    core::Result<net::HttpResponse> response =
        Call("GET", std::string(kApi) + "/containers/" + std::string(id_or_name) + "/json" +
                        (with_size ? "?size=true" : ""));
    if (!response.ok()) return response.status();
    if (response->status != 200) {
      return EngineError(*response, "inspecting container " + std::string(id_or_name));
    }
    std::optional<json::value> body = ParseJson(response->body);
    if (!body || !body->is_object()) {
      return core::InternalError("the engine's inspect answer for " + std::string(id_or_name) +
                                 " is not a JSON object");
    }
    return std::move(*body);
  }

  // Whether the container's logs come framed: they do unless it has a TTY. Asked rather than
  // guessed from the bytes; also turns an unknown container into NOT_FOUND before streaming.
  core::Result<bool> Framed(std::string_view id_or_name) {
    core::Result<json::value> raw = InspectJson(id_or_name);
    if (!raw.ok()) return raw.status();
    return !BoolAt(ObjectAt(&raw->get_object(), "Config"), "Tty");
  }

  core::Result<bool> IsPodman() {
    {
      core::MutexLock lock(mutex_);
      if (is_podman_) return *is_podman_;
    }
    core::Result<EngineVersion> version = Version();
    if (!version.ok()) return version.status();
    const bool podman = version->name.find("Podman") != std::string::npos;
    core::MutexLock lock(mutex_);
    is_podman_ = podman;
    return podman;
  }

  // Docker maps user namespaces only for the whole daemon (dockerd --userns-remap), which its
  // /info lists among SecurityOptions as "name=userns". Asked at each create (seconds apart at
  // most), not once: a daemon restarted without the setting must not get unmapped pods.
  core::Status CheckDockerRemapsUserNamespaces() {
    core::Result<net::HttpResponse> response = Call("GET", std::string(kApi) + "/info");
    if (!response.ok()) return response.status();
    if (response->status != 200) return EngineError(*response, "asking the engine for its info");
    std::optional<json::value> info = ParseJson(response->body);
    const json::object* root = info && info->is_object() ? &info->get_object() : nullptr;
    bool remaps = false;
    if (const json::value* options = root ? root->if_contains("SecurityOptions") : nullptr;
        options != nullptr && options->is_array()) {
      for (const json::value& option : options->get_array()) {
        remaps |= option.is_string() && option.get_string().starts_with("name=userns");
      }
    }
    if (!remaps) {
      return core::FailedPreconditionError(
          "this agent remaps pods' user namespaces (--user-namespace remap), which Docker does "
          "only for the whole daemon: add \"userns-remap\": \"default\" to "
          "/etc/docker/daemon.json and restart Docker, or run the agent with --user-namespace off");
    }
    return core::Status::Ok();
  }

  const std::string url_;
  core::Mutex mutex_;
  std::optional<bool> is_podman_ GUARDED_BY(mutex_);  // learnt on the first GPU create
};

bool IsSocket(const std::string& path) {
  struct stat info {};
  return !path.empty() && ::stat(path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode);
}

}  // namespace

core::Result<std::unique_ptr<Engine>> Engine::Connect(std::string_view socket_url) {
  constexpr std::string_view kUnix = "unix://";
  if (!socket_url.starts_with(kUnix) || socket_url.size() <= kUnix.size() ||
      socket_url[kUnix.size()] != '/') {
    return core::InvalidArgumentError("'" + std::string(socket_url) +
                                      "' is not a container engine socket; write it as "
                                      "unix:///run/podman/podman.sock or "
                                      "unix:///var/run/docker.sock");
  }
  return std::unique_ptr<Engine>(std::make_unique<DockerApiEngine>(std::string(socket_url)));
}

std::string FindEngineSocket() {
  std::vector<std::string> candidates;
  if (const char* docker_host = std::getenv("DOCKER_HOST")) {
    std::string_view host = docker_host;
    if (host.starts_with("unix://")) candidates.emplace_back(host.substr(7));
  }
  candidates.emplace_back("/var/run/docker.sock");
  candidates.emplace_back("/run/podman/podman.sock");
  // The user's Podman (rootless), where systemd's user instance would put it.
  const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
  candidates.push_back((runtime_dir != nullptr && runtime_dir[0] != '\0'
                            ? std::string(runtime_dir)
                            : "/run/user/" + std::to_string(::getuid())) +
                       "/podman/podman.sock");
  for (const std::string& path : candidates) {
    if (IsSocket(path)) return "unix://" + path;
  }
  return {};
}

}  // namespace suanli::agent
