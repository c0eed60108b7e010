// Agent::Start and `suanli agent`: the options checked and completed, the GPUs discovered, the
// engine and the state directory opened; then agent.cc's threads take over (BeginAgent).
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "agent/agent.h"
#include "agent/agent_internal.h"
#include "agent/engine.h"
#include "agent/gpus.h"
#include "agent/host_inventory.h"
#include "agent/state_db.h"
#include "core/domain.h"
#include "core/mount_path.h"
#include "core/stop_signal.h"
#include "net/http_client.h"

namespace suanli::agent {

using core::Result;
using core::Status;

namespace {

// The shared backend must be there and writable before the node says it has it: a missing NFS
// mount would otherwise show up as pods writing into an empty local directory.
Status CheckSharedVolumeDir(const std::filesystem::path& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    return core::InvalidArgumentError("--shared-volumes: " + dir.string() +
                                      " is not a directory; mount the shared backend there first");
  }
  const std::filesystem::path probe = dir / (".suanli-probe-" + HostName());
  std::ofstream(probe) << "suanli";
  if (!std::filesystem::exists(probe, error)) {
    return core::InvalidArgumentError("--shared-volumes: cannot write in " + dir.string() +
                                      " (read-only, or another user's); the agent must own it");
  }
  std::filesystem::remove(probe, error);
  // Each volume's directory is bound into containers as it is named here.
  return core::CheckMountPath(dir.string(), "--shared-volumes");
}

}  // namespace

Result<std::unique_ptr<Agent>> Agent::Start(const AgentOptions& given,
                                            const catalog::Catalog& catalog, core::Clock& clock,
                                            std::ostream& log) {
  AgentOptions options = given;
  // Several URLs (replicas of the control plane) are tried in turn: net::HttpClient fails over.
  std::string servers;
  for (std::string url : net::SplitBaseUrls(options.server_url)) {
    while (url.ends_with('/')) url.pop_back();
    if (!url.starts_with("http://")) {
      return core::InvalidArgumentError(
          "--server must be the control plane's URL, like http://10.0.0.2:7070, or several "
          "replicas' separated by commas (got '" +
          options.server_url + "')");
    }
    servers += (servers.empty() ? "" : ",") + url;
  }
  if (servers.empty()) {
    return core::InvalidArgumentError(
        "--server must be the control plane's URL, like http://10.0.0.2:7070 (got '" +
        options.server_url + "')");
  }
  options.server_url = servers;
  if (options.name.empty()) options.name = HostName();
  if (options.engine_socket.empty()) options.engine_socket = FindEngineSocket();
  if (options.engine_socket.empty()) {
    return core::UnavailableError(
        "no container engine socket found (tried $DOCKER_HOST, /var/run/docker.sock, "
        "/run/podman/podman.sock); start Docker or Podman (sudo bash scripts/engine.sh), or give "
        "--engine unix:///path/to.sock");
  }
  GpuAccess access = GpuAccess::kNone;
  if (options.gpu_access == "cdi") {
    access = GpuAccess::kCdi;
  } else if (options.gpu_access == "nvidia") {
    access = GpuAccess::kDeviceRequests;
  } else if (options.gpu_access != "auto") {
    return core::InvalidArgumentError("--gpu-access must be auto, cdi or nvidia (got '" +
                                      options.gpu_access + "')");
  }
  if (options.pod_network != "owner" && options.pod_network != "engine") {
    return core::InvalidArgumentError(
        "--pod-network must be owner (each owner's pods on a network of their own) or engine "
        "(all on the engine's default network) (got '" +
        options.pod_network + "')");
  }
  if (options.user_namespace != "off" && options.user_namespace != "remap") {
    return core::InvalidArgumentError(
        "--user-namespace must be off or remap (each pod's root an unprivileged id on the host) "
        "(got '" +
        options.user_namespace + "')");
  }
  if (!options.shared_volume_dir.empty()) {
    std::error_code error;
    options.shared_volume_dir = std::filesystem::canonical(options.shared_volume_dir, error);
    if (error) {
      return core::InvalidArgumentError("--shared-volumes: " + given.shared_volume_dir.string() +
                                        ": " + error.message() +
                                        "; mount the shared backend there first");
    }
    SUANLI_RETURN_IF_ERROR(CheckSharedVolumeDir(options.shared_volume_dir));
    options.labels[std::string(core::kSharedVolumesLabel)] = core::kSharedVolumesLabelValue;
  } else if (options.labels.contains(std::string(core::kSharedVolumesLabel))) {
    return core::InvalidArgumentError(std::string(core::kSharedVolumesLabel) +
                                      " is set by --shared-volumes PATH, not as a --label");
  }
  std::unique_ptr<Nvml> nvml;
  Result<GpuInventory> gpus = DiscoverGpus(catalog, options.simulate_gpus, &nvml);
  if (!gpus.ok()) return gpus.status();
  Result<std::unique_ptr<Engine>> engine = Engine::Connect(options.engine_socket);
  if (!engine.ok()) return engine.status();
  if (options.gpu_access == "auto") {
    Result<EngineVersion> version = (*engine)->Version();
    access = version.ok() && version->name.find("Podman") != std::string::npos
                 ? GpuAccess::kCdi
                 : GpuAccess::kDeviceRequests;
  }
  Result<std::unique_ptr<StateDb>> state = StateDb::Open(options.state_dir);
  if (!state.ok()) return state.status();
  if (gpus->gpus.empty()) {
    log << "agent: no GPUs on this host (" << (gpus->note.empty() ? gpus->source : gpus->note)
        << "); pass --simulate-gpus \"4xRTX 4090\" to try suanli without one" << std::endl;
  }
  if (options.publish_address.starts_with("127.") || options.publish_address == "::1") {
    log << "agent: pod ports are published on " << options.publish_address
        << " only: renters reach HTTP ports through the server's proxy; to let them SSH in from "
           "other machines, give --publish-address 0.0.0.0 (or this host's public address)"
        << std::endl;
  }
  return BeginAgent(std::move(options), clock, log, std::move(state).value(),
                    std::move(engine).value(), std::move(gpus).value(), std::move(nvml), access);
}

Status RunAgentUntilSignalled(const AgentOptions& options, const catalog::Catalog& catalog,
                              std::ostream& log) {
  core::BlockStopSignals();
  core::SystemClock clock;
  Result<std::unique_ptr<Agent>> agent = Agent::Start(options, catalog, clock, log);
  if (!agent.ok()) return agent.status();
  log << "suanli agent for " << options.server_url << " (state in " << options.state_dir.string()
      << "); Ctrl-C stops the agent and leaves pods running" << std::endl;
  const Status failure = core::WaitForStopSignal([&] { return (*agent)->failure(); });
  (*agent)->Stop();
  return failure;
}

Result<bool> IsRegistered(const std::filesystem::path& state_dir) {
  if (!std::filesystem::exists(state_dir / "agent.db")) return false;
  Result<std::unique_ptr<StateDb>> state = StateDb::Open(state_dir);
  if (!state.ok()) return state.status();
  Result<std::optional<std::string>> token = (*state)->Get("node_token");
  if (!token.ok()) return token.status();
  Result<std::optional<std::string>> id = (*state)->Get("node_id");
  if (!id.ok()) return id.status();
  return token->has_value() && id->has_value();
}

}  // namespace suanli::agent
