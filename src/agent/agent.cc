#include "agent/agent.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "agent/activity.h"
#include "agent/agent_internal.h"
#include "agent/container_spec.h"
#include "agent/disk_quota.h"
#include "agent/engine.h"
#include "agent/gpu_probe.h"
#include "agent/gpus.h"
#include "agent/host_inventory.h"
#include "agent/ports.h"
#include "agent/readiness_probe.h"
#include "agent/reconcile.h"
#include "agent/relay.h"
#include "agent/ssh_keys.h"
#include "agent/state_db.h"
#include "agent/volume_move.h"
#include "core/check.h"
#include "core/mutex.h"
#include "net/http_client.h"
#include "wire/agent_protocol.h"

namespace suanli::agent {
namespace {

using core::PodState;
using core::Result;
using core::Status;

constexpr std::string_view kAgentVersion = "0.5.0";
// The lines of a stopped container's output read for its report (then cut to
// wire::kMaxReportedLogBytes): a bound on what the engine sends.
constexpr int kSavedLogLines = 2000;
// The state database's key for suanli-gpu-probe's last output on this host.
constexpr std::string_view kMeasuredGpusKey = "gpu_measurements";

struct Probe {
  std::string container_id;
  std::vector<core::PortMapping> ports;
};

// Thread-safety: the threads of agent.h share the fields GUARDED_BY(mutex_); the rest are set at
// construction and only read afterwards (threads_ is Begin's and Stop's, on the owner's thread),
// but keys_written_, the reconcile thread's alone.
class AgentImpl final : public Agent {
 public:
  AgentImpl(AgentOptions options, core::Clock& clock, std::ostream& log,
            std::unique_ptr<StateDb> state, std::unique_ptr<Engine> engine, GpuInventory gpus,
            std::unique_ptr<Nvml> nvml, GpuAccess gpu_access)
      : options_(std::move(options)),
        clock_(clock),
        log_(log),
        state_(std::move(state)),
        engine_(std::move(engine)),
        gpus_(std::move(gpus)),
        nvml_(std::move(nvml)),
        gpu_access_(gpu_access),
        resources_(WithRoomForSimulatedGpus(ReadResources(options_.state_dir), gpus_.gpus)),
        sampler_(*engine_, clock_, [](const std::string& path) {
          std::ifstream file(path);
          std::ostringstream text;
          text << file.rdbuf();
          return text.str();
        }) {
    engine_->SetNoticeHandler([this](const std::string& line) { Log(line); });
  }

  ~AgentImpl() override { Stop(); }

  void Begin() {
    LoadCachedDesired();
    threads_.emplace_back([this] { SyncLoop(); });
    threads_.emplace_back([this] { HeartbeatLoop(); });
    threads_.emplace_back([this] { ReconcileLoop(); });
    threads_.emplace_back([this] { ReportLoop(); });
    if (options_.disk_check_interval.count() > 0) threads_.emplace_back([this] { DiskLoop(); });
    if (options_.gpu_probe != "off") threads_.emplace_back([this] { MeasureGpus(); });
    threads_.emplace_back([this] {
      RelayOptions relay;
      relay.server_url = options_.server_url;
      relay.pod_address = ProbeAddress();
      relay.move_dir = options_.state_dir / "moves";
      relay.snapshot_dir = options_.state_dir / "snapshots";
      relay.shared_volume_dir = options_.shared_volume_dir;
      ServeRelay(
          relay,
          [this] {
            core::MutexLock lock(mutex_);
            return node_token_;
          },
          *engine_, [this] { return Stopping(); }, [this](const std::string& line) { Log(line); });
    });
  }

  // Where this host's published pod ports answer.
  std::string ProbeAddress() const {
    const std::string& address = options_.publish_address;
    return address.empty() || address == "0.0.0.0" ? "127.0.0.1" : address;
  }

  void Stop() EXCLUDES(mutex_) override {
    {
      core::MutexLock lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    wake_.NotifyAll();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    {
      // The reconcile thread, which starts pulls, is gone. A pull cannot be interrupted (the
      // engine's API has no way), so each runs to its end, as before Stop.
      core::MutexLock lock(mutex_);
      wake_.Wait(mutex_, [this]() REQUIRES(mutex_) { return pulls_.empty(); });
    }
    ReapPulls();
  }

  Status failure() const EXCLUDES(mutex_) override {
    core::MutexLock lock(mutex_);
    return failure_;
  }

  std::string node_id() const EXCLUDES(mutex_) override {
    core::MutexLock lock(mutex_);
    return node_id_;
  }

 private:
  // --- Talking to the server ---------------------------------------------------------------------

  std::unique_ptr<net::HttpClient> NewClient(std::chrono::milliseconds timeout) const {
    Result<std::unique_ptr<net::HttpClient>> client =
        net::HttpClient::Create(options_.server_url, {timeout});
    return client.ok() ? std::move(client).value() : nullptr;
  }

  net::Headers Auth() const EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    return {{"Authorization", "Bearer " + node_token_}};
  }

  std::string NodeReportBody(wire::NodeReportFor purpose) {
    wire::NodeReport report;
    report.gpu_health = nvml_ ? nvml_->Health() : std::vector<GpuHealth>();
    const std::set<int> failing = FailingGpus(report.gpu_health);
    for (const Gpu& gpu : gpus_.gpus) {
      if (gpu.type.empty()) continue;  // not in the catalog: nothing to price it by
      // A GPU that cannot be read (off the bus) is not offered: the server, seeing fewer GPUs,
      // drains the node.
      if (failing.contains(gpu.nvml_index)) continue;
      report.gpus.push_back({gpu.index, gpu.uuid, gpu.type, gpu.memory_gb, gpu.simulated,
                             gpu.link_group, gpu.capacity_milli, gpu.mig_profile});
    }
    report.vcpu = resources_.vcpu;
    report.memory_gb = resources_.memory_gb;
    report.disk_gb = resources_.disk_gb;
    report.agent_version = kAgentVersion;
    if (purpose == wire::NodeReportFor::kRegistration) report.name = options_.name;
    report.address = options_.public_address;
    report.labels = options_.labels;
    if (purpose == wire::NodeReportFor::kHeartbeat)
      report.pod_activity = sampler_.Sample(IdlePods());
    {
      core::MutexLock lock(mutex_);
      report.gpu_measurements = gpu_measurements_;
    }
    return wire::EncodeNodeReport(report);
  }

  // --- Measuring the GPUs (agent/gpu_probe.h) ----------------------------------------------------

  // What suanli-gpu-probe measured on this host's GPUs, for the heartbeat: kept in the state
  // directory from an earlier start while it covers every GPU the host has now, else measured
  // once, while no pod runs (a pod would slow the probe, and the probe the pod); a host whose pods
  // never stop keeps its datasheet figures until it starts with none.
  void MeasureGpus() EXCLUDES(mutex_) {
    std::map<std::string, int> index_by_uuid;
    for (const Gpu& gpu : gpus_.gpus) {
      if (gpu.mig_profile.empty() && !gpu.type.empty()) index_by_uuid[gpu.uuid] = gpu.index;
    }
    if (index_by_uuid.empty()) return;
    std::vector<MeasuredGpu> measured;
    if (Result<std::optional<std::string>> kept = state_->Get(kMeasuredGpusKey);
        kept.ok() && kept->has_value()) {
      if (Result<std::vector<MeasuredGpu>> parsed = ParseGpuProbeOutput(**kept);
          parsed.ok() &&
          ToNodeMeasurements(*parsed, index_by_uuid).size() == index_by_uuid.size()) {
        measured = std::move(parsed).value();
      }
    }
    if (measured.empty()) {
      Result<std::vector<MeasuredGpu>> fresh = RunProbe();
      if (!fresh.ok()) {
        // Where nobody asked for the probe and none is here, there is nothing to say.
        if (options_.gpu_probe != "auto" || fresh.status().code() != core::StatusCode::kNotFound) {
          Log("GPUs not measured, so the advisor uses their datasheets: " +
              fresh.status().message());
        }
        return;
      }
      measured = std::move(fresh).value();
      (void)state_->Set(kMeasuredGpusKey, EncodeMeasuredGpus(measured));
    }
    std::vector<core::GpuMeasurement> figures = ToNodeMeasurements(measured, index_by_uuid);
    if (figures.empty()) {
      Log("the GPU probe measured none of this node's GPUs (other UUIDs than " +
          index_by_uuid.begin()->first + "...), so the advisor uses their datasheets");
      return;
    }
    std::string said;
    for (const core::GpuMeasurement& gpu : figures) {
      said += fmt::format("; GPU {}: memory {:.0f} GB/s, fp16 {:.0f} TFLOPS", gpu.index,
                          gpu.memory_bandwidth_gbps, gpu.fp16_tflops);
    }
    Log("measured " + std::to_string(figures.size()) + " GPU(s), reported with each heartbeat" +
        said);
    core::MutexLock lock(mutex_);
    gpu_measurements_ = std::move(figures);
    heartbeat_due_ = true;  // the advisor uses them from the next heartbeat: send it now
    wake_.NotifyAll();
  }

  Result<std::vector<MeasuredGpu>> RunProbe() EXCLUDES(mutex_) {
    Result<std::filesystem::path> probe =
        options_.gpu_probe == "auto" ? FindGpuProbe() : FindGpuProbe(options_.gpu_probe, {});
    if (!probe.ok()) return probe.status();
    // Whether pods run is the engine's to say: wait for it (it may start after the agent).
    Result<std::vector<ContainerInfo>> containers = engine_->ListLabelled(kPodLabel);
    while (!containers.ok()) {
      Sleep(std::chrono::seconds(5));
      if (Stopping()) return core::UnavailableError("the agent stopped before the engine answered");
      containers = engine_->ListLabelled(kPodLabel);
    }
    // This node's pods only (an engine may serve other agents too); one not yet registered has
    // none.
    Result<std::optional<std::string>> saved_id = state_->Get("node_id");
    const std::string own = saved_id.ok() ? saved_id->value_or("") : "";
    const bool busy = std::ranges::any_of(*containers, [&own](const ContainerInfo& container) {
      const auto node = container.labels.find(std::string(kNodeLabel));
      return container.running && !own.empty() && node != container.labels.end() &&
             node->second == own;
    });
    if (busy) {
      return core::FailedPreconditionError(
          "pods are running here; it measures at the next start with none running");
    }
    Log("measuring this host's GPUs with " + probe->string() + " (a few seconds a GPU)");
    GpuProbeOptions options;
    options.cancelled = [this] { return Stopping(); };
    return RunGpuProbe(*probe, options);
  }

  // The pods whose use the server watches for idleness (idle_stop_after set) and that should run.
  std::vector<std::string> IdlePods() EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    std::vector<std::string> ids;
    for (const DesiredPod& entry : desired_) {
      if (entry.pod.idle_stop_after_s > 0 && entry.pod.desired == core::DesiredState::kRunning) {
        ids.push_back(entry.pod.id);
      }
    }
    return ids;
  }

  // The GPUs whose last reading failed; logs each change of the set.
  std::set<int> FailingGpus(const std::vector<GpuHealth>& health) EXCLUDES(mutex_) {
    std::set<int> failing;
    std::string why;
    for (const GpuHealth& reading : health) {
      if (reading.problem.empty()) continue;
      failing.insert(reading.index);
      why += " GPU " + std::to_string(reading.index) + ": " + reading.problem + ";";
    }
    core::MutexLock lock(mutex_);
    if (failing != failing_gpus_) {
      Log(failing.empty() ? "every GPU reads well again"
                          : "GPUs that cannot be read are no longer offered:" + why +
                                " the server drains this node until an admin uncordons it");
      failing_gpus_ = failing;
    }
    return failing;
  }

  // Logs a change of the server's reachability once, not once per retry.
  void NoteServer(bool reachable, const std::string& why) EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    if (reachable == server_reachable_) return;
    server_reachable_ = reachable;
    Log(reachable ? "the server is reachable again at " + options_.server_url
                  : "cannot reach the server (" + why +
                        "); pods keep running and their changes are kept until it is back");
  }

  // Loads the saved credential, or registers with the join token. Retries until it works or the
  // agent stops; false when stopping or hopeless.
  bool EnsureRegistered(net::HttpClient& client) EXCLUDES(mutex_) {
    {
      core::MutexLock lock(mutex_);
      if (!node_token_.empty()) return true;
    }
    Result<std::optional<std::string>> token = state_->Get("node_token");
    Result<std::optional<std::string>> id = state_->Get("node_id");
    if (token.ok() && id.ok() && token->has_value() && id->has_value()) {
      core::MutexLock lock(mutex_);
      node_token_ = **token;
      node_id_ = **id;
      return true;
    }
    if (options_.join_token.empty()) {
      Fail(core::FailedPreconditionError(
          "this agent is not registered and has no join token; get one with `suanli nodes "
          "join-token` and pass --join-token"));
      return false;
    }
    while (!Stopping()) {
      Result<net::HttpResponse> answer = client.Send(
          "POST", "/v1/agent/register", NodeReportBody(wire::NodeReportFor::kRegistration),
          {{"Authorization", "Bearer " + options_.join_token}});
      if (answer.ok() && answer->status == 201) {
        Result<wire::Registration> registration = wire::DecodeRegistration(answer->body);
        if (!registration.ok()) {
          // The server took the join token but said something else than a node: registering
          // again would make a second node of this host, so stop and say what came back.
          Fail(core::FailedPreconditionError(
              "the server registered this node but its answer could not be read (" +
              registration.status().message() + "); is --server " + options_.server_url +
              " a suanli control plane of this version?"));
          return false;
        }
        const std::string& node_token = registration->node_token;
        const std::string& node_id = registration->node_id;
        if (Status saved = state_->Set("node_token", node_token); !saved.ok()) {
          Fail(saved);
          return false;
        }
        (void)state_->Set("node_id", node_id);
        (void)state_->Set("server_url", options_.server_url);
        core::MutexLock lock(mutex_);
        node_token_ = node_token;
        node_id_ = node_id;
        wake_.NotifyAll();  // a heartbeat may be due
        Log("registered as node " + node_id + " (" + options_.name + ") with " +
            std::to_string(gpus_.gpus.size()) + " GPU(s) from " + gpus_.source);
        return true;
      }
      if (answer.ok() && answer->status >= 400 && answer->status < 500) {
        Fail(core::PermissionDeniedError("the server refused to register this node: " +
                                         answer->body));
        return false;
      }
      NoteServer(false, answer.ok() ? "HTTP " + std::to_string(answer->status)
                                    : answer.status().message());
      Sleep(std::chrono::seconds(1));
    }
    return false;
  }

  void SyncLoop() EXCLUDES(mutex_) {
    std::unique_ptr<net::HttpClient> client =
        NewClient(options_.long_poll + std::chrono::seconds(10));
    if (!client)
      return Fail(
          core::InvalidArgumentError("--server " + options_.server_url + " is not an http:// URL"));
    if (!EnsureRegistered(*client)) return;
    int64_t after = -1;
    auto backoff = std::chrono::milliseconds(200);
    while (!Stopping()) {
      const std::string target = "/v1/agent/pods?after=" + std::to_string(after) +
                                 "&wait_s=" + std::to_string(options_.long_poll.count());
      Result<net::HttpResponse> answer = client->Send("GET", target, "", Auth());
      if (answer.ok() && answer->status == 200) {
        NoteServer(true, "");
        backoff = std::chrono::milliseconds(200);
        Result<wire::DesiredPods> desired = wire::DecodeDesiredPods(answer->body);
        if (!desired.ok()) {
          Log("the server's desired pods could not be read: " + desired.status().message());
          Sleep(std::chrono::seconds(1));
          continue;
        }
        after = desired->generation;
        (void)state_->Set("desired", answer->body);
        {
          core::MutexLock lock(mutex_);
          desired_ = std::move(desired->pods);
          have_desired_ = true;
          poked_ = true;
        }
        wake_.NotifyAll();
        continue;
      }
      if (answer.ok() && answer->status == 401) {
        Log("the server no longer knows this node's token (was the node removed?)");
        if (options_.join_token.empty()) {
          return Fail(core::UnauthenticatedError(
              "the server rejected this node's token; register it again with --join-token"));
        }
        {
          core::MutexLock lock(mutex_);
          node_token_.clear();
        }
        (void)state_->Set("node_token", "");
        (void)state_->Set("node_id", "");
        if (!EnsureRegistered(*client)) return;
        after = -1;
        continue;
      }
      NoteServer(false, answer.ok() ? "HTTP " + std::to_string(answer->status) + ": " + answer->body
                                    : answer.status().message());
      Sleep(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5'000));
    }
  }

  void HeartbeatLoop() EXCLUDES(mutex_) {
    std::unique_ptr<net::HttpClient> client = NewClient(std::chrono::seconds(10));
    if (!client) return;
    while (!Stopping()) {
      if (!node_id().empty()) {
        {
          core::MutexLock lock(mutex_);
          heartbeat_due_ = false;
        }
        Result<net::HttpResponse> answer = client->Send(
            "POST", "/v1/agent/heartbeat", NodeReportBody(wire::NodeReportFor::kHeartbeat), Auth());
        if (!answer.ok()) NoteServer(false, answer.status().message());
      }
      // A heartbeat asked for before the registration went through goes as soon as it has.
      core::MutexLock lock(mutex_);
      wake_.WaitFor(mutex_, options_.heartbeat_interval, [this]() REQUIRES(mutex_) {
        return stopping_ || (heartbeat_due_ && !node_id_.empty());
      });
    }
  }

  // Sends queued reports in order. A report the server refuses for good (the pod is gone or on
  // another node) is dropped; one it could not take now is retried, so nothing is lost.
  void ReportLoop() EXCLUDES(mutex_) {
    std::unique_ptr<net::HttpClient> client = NewClient(std::chrono::seconds(10));
    if (!client) return;
    auto backoff = std::chrono::milliseconds(200);
    while (!Stopping()) {
      if (node_id().empty()) {
        Sleep(std::chrono::milliseconds(200));
        continue;
      }
      Result<std::vector<PendingReport>> pending = state_->Pending(32);
      if (!pending.ok() || pending->empty()) {
        core::MutexLock lock(mutex_);
        report_wake_.WaitFor(mutex_, std::chrono::seconds(1),
                             [this]() REQUIRES(mutex_) { return stopping_ || reports_queued_; });
        reports_queued_ = false;
        continue;
      }
      bool failed = false;
      for (const PendingReport& report : *pending) {
        Result<net::HttpResponse> answer =
            client->Send("POST", "/v1/agent/pods/" + net::PercentEncode(report.pod_id) + "/status",
                         report.body, Auth());
        if (!answer.ok() || answer->status >= 500 || answer->status == 401 ||
            answer->status == 429) {
          NoteServer(false, answer.ok() ? "HTTP " + std::to_string(answer->status)
                                        : answer.status().message());
          failed = true;
          break;
        }
        if (answer->status >= 400) {
          Log("the server refused a report on " + report.pod_id + " (" + answer->body +
              "); dropped");
        }
        NoteServer(true, "");
        (void)state_->Acknowledge(report.id);
      }
      if (failed) {
        Sleep(backoff);
        backoff = std::min(backoff * 2, std::chrono::milliseconds(5'000));
      } else {
        backoff = std::chrono::milliseconds(200);
      }
    }
  }

  // --- Desired pods ------------------------------------------------------------------------------

  // The last desired state seen, so an agent restarted while the server is down still knows which
  // containers are pods (and so reports their exits) instead of waiting blind.
  void LoadCachedDesired() {
    Result<std::optional<std::string>> cached = state_->Get("desired");
    if (!cached.ok() || !cached->has_value()) return;
    Result<wire::DesiredPods> desired = wire::DecodeDesiredPods(**cached);
    if (!desired.ok()) return;
    core::MutexLock lock(mutex_);
    desired_ = std::move(desired->pods);
    have_desired_ = true;
  }

  // --- Disk sizes (disk_quota.h) -----------------------------------------------------------------

  // On a thread of its own: a walk of a large volume takes seconds, which must not hold up
  // reconciling or heartbeats.
  void DiskLoop() EXCLUDES(mutex_) {
    while (!Stopping()) {
      Sleep(options_.disk_check_interval);
      if (!Stopping()) CheckDiskSizes();
    }
  }

  void CheckDiskSizes() EXCLUDES(mutex_) {
    std::vector<core::Pod> pods;
    {
      core::MutexLock lock(mutex_);
      for (const DesiredPod& entry : desired_) {
        if (entry.pod.desired == core::DesiredState::kRunning) pods.push_back(entry.pod);
      }
    }
    const std::string node = node_id();
    for (const core::Pod& pod : pods) {
      Result<ContainerInfo> container = engine_->Inspect(ContainerName(pod.id));
      if (!container.ok() || !container->running) continue;
      const auto on = container->labels.find(std::string(kNodeLabel));
      if (on == container->labels.end() || on->second != node) continue;
      DiskUse use;
      if (Result<int64_t> layer = engine_->WritableLayerBytes(container->id); layer.ok()) {
        use.container_bytes = *layer;
      }
      if (pod.volume_gb > 0 && !pod.volume_mount_path.empty()) {
        if (Result<std::string> directory = engine_->VolumeDirectory(VolumeName(pod.id));
            directory.ok()) {
          use.volume_bytes = DirectoryBytes(*directory);
        }
      }
      std::string why = OverDiskSize(pod, use);
      if (why.empty()) continue;
      Log(pod.id + " " + why);
      {
        core::MutexLock lock(mutex_);
        disk_stops_[container->id] = std::move(why);
      }
      if (Status stopped = engine_->Stop(container->id, options_.stop_grace); !stopped.ok()) {
        NoteEngine(stopped);
      }
      core::MutexLock lock(mutex_);  // the reconcile loop reports the exit now, not in 2 s
      poked_ = true;
      wake_.NotifyAll();
    }
  }

  // --- Reconciling -------------------------------------------------------------------------------

  void ReconcileLoop() EXCLUDES(mutex_) {
    while (!Stopping()) {
      ReapPulls();
      bool ready = false;
      {
        core::MutexLock lock(mutex_);
        ready = have_desired_;
      }
      if (ready) {
        ReconcileOnce();
        ProbeUnready();
      }
      core::MutexLock lock(mutex_);
      // While a pod's ports are coming up, look again soon: `pods create --wait` waits for them.
      const auto interval =
          unready_.empty() ? options_.resync_interval : std::chrono::milliseconds(200);
      wake_.WaitFor(mutex_, interval, [this]() REQUIRES(mutex_) { return stopping_ || poked_; });
      poked_ = false;
    }
  }

  void ReconcileOnce() EXCLUDES(mutex_) {
    // Each pass plans one step per pod; steps that need the engine's answer come next pass.
    for (int pass = 0; pass < 8 && !Stopping(); ++pass) {
      Result<std::vector<ContainerInfo>> containers = engine_->ListLabelled(kPodLabel);
      if (!containers.ok()) return NoteEngine(containers.status());
      NoteEngine(Status());
      // Only this node's containers: another agent may share the engine (a second installation,
      // tests in parallel), and its pods are not this agent's orphans.
      const std::string node = node_id();
      if (node.empty()) return;
      std::erase_if(*containers, [&](const ContainerInfo& container) {
        const auto owner = container.labels.find(std::string(kNodeLabel));
        return owner == container.labels.end() || owner->second != node;
      });
      std::vector<DesiredPod> desired;
      std::map<std::string, Reported> reported;
      {
        core::MutexLock lock(mutex_);
        desired = desired_;
        reported = reported_;
      }
      // Keys changed while pods run (a member removed): rewritten into them (ssh_keys.h).
      FollowAuthorizedKeys(*engine_, desired, *containers, keys_written_,
                           [this](const std::string& line) { Log(line); });
      const std::vector<Action> actions = Plan(desired, *containers, reported, clock_.Now());
      if (actions.empty()) return;
      std::map<std::string, const DesiredPod*> by_id;
      for (const DesiredPod& pod : desired) by_id[pod.pod.id] = &pod;
      for (const Action& action : actions) {
        const auto it = by_id.find(action.pod_id);
        Carry(action, it == by_id.end() ? nullptr : it->second);
      }
    }
  }

  // The pod's pre-stop command (sh -c, in its container), before the container is stopped; the
  // stop goes ahead whatever it does, after at most options_.pre_stop_timeout.
  void RunPreStop(const Action& action, const core::Pod& pod) {
    Log("running the pre-stop command of " + action.pod_id);
    Result<ExecResult> done = engine_->Exec(action.container_id, {"sh", "-c", pod.pre_stop_command},
                                            options_.pre_stop_timeout);
    if (!done.ok()) {
      Log("the pre-stop command of " + action.pod_id + " did not run: " + done.status().message());
      return;
    }
    std::string tail =
        done->output.substr(done->output.size() - std::min<size_t>(done->output.size(), 512));
    Log("the pre-stop command of " + action.pod_id + " exited " + std::to_string(done->exit_code) +
        (tail.empty() ? "" : ": " + tail));
  }

  void Carry(const Action& action, const DesiredPod* pod) {
    using Kind = Action::Kind;
    switch (action.kind) {
      case Kind::kCreate:
        if (pod != nullptr) CreatePod(*pod);
        return;
      case Kind::kStart:
        if (Status started = engine_->Start(action.container_id); !started.ok()) {
          Queue(action.pod_id, PodState::kFailed, clock_.Now(), action.container_id, {},
                "the container would not start: " + started.message());
        }
        return;
      case Kind::kStop:
        if (pod != nullptr && !pod->pod.pre_stop_command.empty()) RunPreStop(action, pod->pod);
        Log("stopping " + action.pod_id);
        if (Status stopped = engine_->Stop(action.container_id, options_.stop_grace);
            !stopped.ok()) {
          NoteEngine(stopped);
        }
        return;
      case Kind::kRemove:
        if (Status removed = engine_->Remove(action.container_id);
            !removed.ok() && removed.code() != core::StatusCode::kNotFound) {
          NoteEngine(removed);
          return;
        }
        PruneNetworks();
        return;
      case Kind::kRemoveVolume:
        if (Status removed = engine_->RemoveVolume(VolumeName(action.pod_id));
            !removed.ok() && removed.code() != core::StatusCode::kNotFound) {
          NoteEngine(removed);
        }
        return;
      case Kind::kReport: {
        // A pod without ports is ready as soon as it runs; the others once their ports answer.
        const bool ready =
            action.state == PodState::kRunning && pod != nullptr && pod->pod.ports.empty();
        std::string message = action.message;
        if (action.state == PodState::kExited) {
          core::MutexLock lock(mutex_);  // its exit was our stop: say why
          if (auto stop = disk_stops_.find(action.container_id); stop != disk_stops_.end()) {
            message = std::move(stop->second);
            disk_stops_.erase(stop);
          }
        }
        Queue(action.pod_id, action.state, action.at, action.container_id, action.port_mappings,
              message, action.exit_code, ready, std::nullopt, LastLogs(action));
        if (action.state == PodState::kRunning) {
          Log(action.pod_id + " is running (container " + action.container_id.substr(0, 12) + ")");
        } else {
          Log(action.pod_id + " is " + std::string(core::PodStateName(action.state)));
        }
        return;
      }
    }
  }

  // The end of a container's output when it has stopped, exited or failed, for the report: the
  // container is removed next, and its logs with it, so the server keeps them (docs/agent.md).
  std::optional<std::string> LastLogs(const Action& action) {
    if (!core::IsDown(action.state) || action.state == PodState::kTerminated ||
        action.container_id.empty()) {
      return std::nullopt;
    }
    LogOptions options;
    options.tail = kSavedLogLines;
    options.timestamps = true;
    Result<std::string> logs = engine_->Logs(action.container_id, options);
    if (!logs.ok()) {
      Log("cannot keep the logs of " + action.pod_id + ": " + logs.status().message());
      return std::nullopt;
    }
    std::string text = NormalizeLogTimestamps(*logs);
    if (text.size() > wire::kMaxReportedLogBytes) {
      // The newest lines matter most; start at a whole line.
      const size_t cut = text.size() - wire::kMaxReportedLogBytes;
      const size_t line = text.find('\n', cut);
      text.erase(0, line == std::string::npos ? cut : line + 1);
    }
    return text;
  }

  // Reports `ready` for each running pod whose ports all answer now.
  void ProbeUnready() EXCLUDES(mutex_) {
    std::map<std::string, Probe> unready;
    {
      core::MutexLock lock(mutex_);
      unready = unready_;
    }
    const std::string address = ProbeAddress();
    for (const auto& [pod_id, probe] : unready) {
      const bool all_answer =
          std::all_of(probe.ports.begin(), probe.ports.end(),
                      [&](const core::PortMapping& port) { return PortAnswers(address, port); });
      if (!all_answer) continue;
      Queue(pod_id, PodState::kRunning, clock_.Now(), probe.container_id, probe.ports, "",
            std::nullopt, true);
      Log(pod_id + " is ready: its ports answer");
    }
  }

  // Each of the pod's volumes on the shared backend gets its directory there on first use, owned
  // by the pod's root (the remapped one when pods run remapped).
  Status MakeSharedVolumes(const core::Pod& pod) const {
    for (const core::VolumeMount& mount : pod.volumes) {
      if (!mount.shared) continue;
      if (options_.shared_volume_dir.empty()) {
        return core::FailedPreconditionError(
            "volume " + mount.volume_id +
            " is on the shared backend, which this node lacks (start its agent with "
            "--shared-volumes PATH)");
      }
      const std::filesystem::path dir =
          SharedVolumeDirectory(options_.shared_volume_dir.string(), mount.volume_id);
      std::error_code error;
      if (std::filesystem::create_directory(dir, error) && options_.user_namespace == "remap") {
        if (::chown(dir.c_str(), kRemappedRootId, kRemappedRootId) != 0)
          error.assign(errno, std::generic_category());
      }
      if (error) {
        return core::UnavailableError("the shared backend's directory " + dir.string() +
                                      " could not be made: " + error.message());
      }
    }
    return Status::Ok();
  }

  void CreatePod(const DesiredPod& desired) EXCLUDES(mutex_) {
    const core::Pod& pod = desired.pod;
    // Its data comes first when it is on another node (volume_move.h): the container starts once
    // every move is in.
    if (!MovesDone(pod)) return MoveFor(pod);
    if (Status shared = MakeSharedVolumes(pod); !shared.ok()) {
      Queue(pod.id, PodState::kFailed, clock_.Now(), "", {}, shared.message());
      return;
    }
    // One per pod port. Once started (or given up), the engine holds them: the kernel will not
    // hand them out.
    std::vector<int> host_ports;
    struct ReleasePorts {
      AgentImpl& agent;
      const std::vector<int>& ports;
      ~ReleasePorts() { agent.ReleaseHostPorts(ports); }
    } release{*this, host_ports};
    {
      core::MutexLock lock(mutex_);
      while (host_ports.size() < pod.ports.size()) {
        Result<int> host_port = FreeHostPort(options_.publish_address, ports_handed_out_);
        if (!host_port.ok()) {
          QueueLocked(pod.id, PodState::kFailed, clock_.Now(), "", {}, host_port.status().message(),
                      std::nullopt);
          return;
        }
        ports_handed_out_.insert(*host_port);
        host_ports.push_back(*host_port);
      }
    }
    const ContainerSpec spec = BuildContainerSpec(
        desired, host_ports,
        {node_id(), options_.publish_address, gpus_.gpus, gpu_access_, options_.pids_limit,
         options_.pod_network == "owner", options_.user_namespace == "remap",
         options_.shared_volume_dir.string()});
    if (!spec.network.empty()) {
      if (Status made = engine_->CreateIsolatedNetwork(
              spec.network, {{std::string(kNetworkLabel), pod.owner_id}});
          !made.ok()) {
        if (made.code() == core::StatusCode::kUnavailable) return NoteEngine(made);
        Queue(pod.id, PodState::kFailed, clock_.Now(), "", {},
              "the pod's network could not be created: " + made.message());
        return;
      }
      core::MutexLock lock(mutex_);
      networks_made_.insert(spec.network);
    }
    const std::string keys = AuthorizedKeys(desired);
    Result<std::string> created = engine_->Create(spec);
    if (!created.ok()) {
      if (created.status().code() == core::StatusCode::kAlreadyExists) return;  // next pass sees it
      // Its network was removed between the two calls (by another program sharing the engine):
      // the next pass makes it again.
      if (created.status().code() == core::StatusCode::kFailedPrecondition &&
          !spec.network.empty() && created.status().message().starts_with("network ")) {
        return;
      }
      // Create first, pull only when the engine lacks the image: the common case (the image is
      // there) then costs one round trip less on every start.
      if (created.status().code() == core::StatusCode::kNotFound) return PullFor(pod);
      if (created.status().code() == core::StatusCode::kUnavailable) {
        return NoteEngine(created.status());
      }
      Queue(pod.id, PodState::kFailed, clock_.Now(), "", {},
            "the container could not be created: " + created.status().message());
      return;
    }
    Status put;
    if (!keys.empty() && !spec.volume_name.empty()) {
      // For images that read keys from the volume rather than from PUBLIC_KEY; rewritten while it
      // runs when they change, or when this failed (ReconcileOnce). PUBLIC_KEY stays either way.
      put = PutAuthorizedKeys(*engine_, *created, spec.volume_mount_path, keys);
      if (!put.ok()) Log("could not write authorized_keys into " + pod.id + ": " + put.message());
    }
    keys_written_.erase(pod.id);  // what did not go in, FollowAuthorizedKeys writes again
    if (put.ok()) keys_written_[pod.id] = keys;
    if (Status started = engine_->Start(*created); !started.ok()) {
      (void)engine_->Remove(*created);
      // Another program bound a host port after it was picked: the next pass picks others.
      if (started.message().find("address already in use") != std::string::npos) {
        Log("a host port of " + pod.id + " was taken before the start; trying other ports");
        return;
      }
      // Its network went between the create and the start (removed by another program sharing
      // the engine, a test's cleanup): the next pass makes both again.
      if (!spec.network.empty() && started.message().find("network") != std::string::npos &&
          started.message().find("not found") != std::string::npos) {
        Log("the network of " + pod.id + " went before its start; trying again");
        return;
      }
      Queue(pod.id, PodState::kFailed, clock_.Now(), *created, {},
            "the container would not start: " + started.message());
      return;
    }
    Log("started " + pod.id + " (" + pod.image + ") as container " + created->substr(0, 12));
  }

  // Removes the owners' networks this agent made that no container is on any more (the engine
  // refuses the others), so that a host which served many owners does not run out of the
  // engine's subnets. Only its own: another agent sharing the engine may be about to use one. On
  // the reconcile thread, as CreatePod, so never between a network's creation and its first use.
  // Networks made before a restart are left (at most one per owner; `suanli agent` on the same
  // engine again reuses them).
  void PruneNetworks() EXCLUDES(mutex_) {
    std::set<std::string> made;
    {
      core::MutexLock lock(mutex_);
      made = networks_made_;
    }
    for (const std::string& network : made) {
      Status removed = engine_->RemoveNetwork(network);
      if (removed.code() == core::StatusCode::kFailedPrecondition) continue;  // in use
      if (!removed.ok() && removed.code() != core::StatusCode::kNotFound) {
        return Log("cannot remove network " + network + ": " + removed.message());
      }
      if (removed.ok()) Log("removed network " + network + ": no pod of its owner is here");
      core::MutexLock lock(mutex_);
      networks_made_.erase(network);
    }
  }

  void ReleaseHostPorts(const std::vector<int>& ports) EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    for (int port : ports) ports_handed_out_.erase(port);
  }

  // Pulls in the background (a pull may take minutes; other pods go on), telling the server how far
  // it got about once a second so people see a progress bar.
  //
  // One thread per image rather than one pull worker with a queue: a pull of a small image must
  // not wait behind a large one. They do not accumulate: a pull's thread ends by handing its
  // handle to ended_pulls_, which the reconcile loop (woken by that same pull) joins.
  void PullFor(const core::Pod& pod) EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    if (const auto failed = pull_errors_.find(pod.image); failed != pull_errors_.end()) {
      const std::string message = "cannot pull image " + pod.image + ": " + failed->second;
      pull_errors_.erase(failed);  // a later start tries again
      QueueLocked(pod.id, PodState::kFailed, clock_.Now(), "", {}, message, std::nullopt);
      return;
    }
    if (pulls_.contains(pod.image)) return;
    Log("pulling " + pod.image + " for " + pod.id);
    // Its last step takes mutex_, held here until the thread is in pulls_.
    pulls_.emplace(pod.image, std::thread([this, image = pod.image, pod_id = pod.id] {
                     Pull(image, pod_id);
                   }));
  }

  // A pull's thread.
  void Pull(const std::string& image, const std::string& pod_id) EXCLUDES(mutex_) {
    core::MonotonicTime last_report = core::MonotonicNow() - std::chrono::seconds(2);
    Status pulled = engine_->Pull(image, [&](const PullProgress& progress) {
      const core::MonotonicTime now = core::MonotonicNow();
      if (now - last_report < std::chrono::seconds(1)) return;
      last_report = now;
      std::string message = "pulling image " + image;
      if (progress.total_bytes > 0) {
        message += ": " + std::to_string(progress.current_bytes * 100 / progress.total_bytes) +
                   "% of " + std::to_string(progress.total_bytes >> 20) + " MiB";
      }
      Queue(pod_id, PodState::kStarting, clock_.Now(), "", {}, message, std::nullopt, false,
            core::PullProgress{progress.current_bytes, progress.total_bytes});
    });
    core::MutexLock done(mutex_);
    if (!pulled.ok()) pull_errors_[image] = pulled.message();
    Log(pulled.ok() ? "pulled " + image : "pull of " + image + " failed: " + pulled.message());
    // A thread cannot join itself: ReapPulls joins it, after this returns.
    const auto self = pulls_.find(image);
    SUANLI_CHECK(self != pulls_.end(), "a pull's thread is in pulls_ until it ends");
    ended_pulls_.push_back(std::move(self->second));
    pulls_.erase(self);
    poked_ = true;
    wake_.NotifyAll();
  }

  // --- Volume moves (volume_move.h) --------------------------------------------------------------

  bool MovesDone(const core::Pod& pod) {
    for (const core::VolumeMove& move : pod.moves) {
      Result<std::optional<std::string>> done = state_->Get("moved/" + move.id);
      if (!done.ok() || !done->has_value()) return false;
    }
    return true;
  }

  // Fetches the pod's moves in the background, as a pull: its thread is in pulls_ (as
  // "move:<pod id>"), so Stop waits for it (a fetch ends soon after Stopping()).
  void MoveFor(const core::Pod& pod) EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    const std::string key = "move:" + pod.id;
    if (pulls_.contains(key)) return;
    pulls_.emplace(key, std::thread([this, pod, key] { Move(pod, key); }));
  }

  // A move's thread.
  void Move(const core::Pod& pod, const std::string& key) EXCLUDES(mutex_) {
    for (const core::VolumeMove& move : pod.moves) {
      Result<std::optional<std::string>> moved_before = state_->Get("moved/" + move.id);
      if (moved_before.ok() && moved_before->has_value()) continue;
      Log("moving volume " + move.volume + " of " + pod.id + " here from node " +
          move.from_node_id);
      core::MonotonicTime last_report = core::MonotonicNow() - std::chrono::seconds(2);
      FetchOptions fetch;
      fetch.server_url = options_.server_url;
      fetch.node_token = [this] {
        core::MutexLock lock(mutex_);
        return node_token_;
      };
      fetch.move_dir = options_.state_dir / "moves";
      fetch.stopping = [this] { return Stopping(); };
      fetch.progress = [&](const wire::MoveProgress& progress) {
        const core::MonotonicTime now = core::MonotonicNow();
        if (now - last_report < std::chrono::seconds(1)) return;
        last_report = now;
        Queue(pod.id, PodState::kStarting, clock_.Now(), "", {},
              "moving volume " + move.volume + ": " + std::to_string(progress.bytes >> 20) +
                  " of " + std::to_string(progress.total_bytes >> 20) + " MiB",
              std::nullopt, false, std::nullopt, std::nullopt, progress);
      };
      Result<wire::MoveProgress> moved = FetchVolume(*engine_, clock_, fetch, move);
      if (!moved.ok()) {
        Log("the move of " + move.volume + " for " + pod.id +
            " stopped: " + moved.status().message());
        const core::StatusCode code = moved.status().code();
        if (code != core::StatusCode::kNotFound && code != core::StatusCode::kUnavailable) {
          Queue(pod.id, PodState::kFailed, clock_.Now(), "", {},
                "its volume could not be moved here: " + moved.status().message());
        }
        break;
      }
      if (Status noted = state_->Set("moved/" + move.id, "1"); !noted.ok()) {
        Log("cannot note the move of " + move.volume + ": " + noted.message());
        break;
      }
      Log("moved volume " + move.volume + " of " + pod.id + ": " + std::to_string(moved->bytes) +
          " bytes in " + std::to_string(moved->elapsed_ms) + " ms");
      Queue(pod.id, PodState::kStarting, clock_.Now(), "", {},
            "moved volume " + move.volume + " here", std::nullopt, false, std::nullopt,
            std::nullopt, *moved);
    }
    core::MutexLock done(mutex_);
    const auto self = pulls_.find(key);
    SUANLI_CHECK(self != pulls_.end(), "a move's thread is in pulls_ until it ends");
    ended_pulls_.push_back(std::move(self->second));
    pulls_.erase(self);
    poked_ = true;
    wake_.NotifyAll();
  }

  // Joins the threads of the pulls that ended.
  void ReapPulls() EXCLUDES(mutex_) {
    std::vector<std::thread> ended;
    {
      core::MutexLock lock(mutex_);
      ended.swap(ended_pulls_);
    }
    for (std::thread& thread : ended) thread.join();
  }

  void Queue(const std::string& pod_id, PodState state, core::TimePoint at,
             const std::string& container_id, const std::vector<core::PortMapping>& mappings,
             const std::string& message, std::optional<int> exit_code = std::nullopt,
             bool ready = false, std::optional<core::PullProgress> pull = std::nullopt,
             std::optional<std::string> logs = std::nullopt,
             std::optional<wire::MoveProgress> move = std::nullopt) EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    QueueLocked(pod_id, state, at, container_id, mappings, message, exit_code, ready, pull,
                std::move(logs), std::move(move));
  }

  void QueueLocked(const std::string& pod_id, PodState state, core::TimePoint at,
                   const std::string& container_id, const std::vector<core::PortMapping>& mappings,
                   const std::string& message, std::optional<int> exit_code, bool ready = false,
                   std::optional<core::PullProgress> pull = std::nullopt,
                   std::optional<std::string> logs = std::nullopt,
                   std::optional<wire::MoveProgress> move = std::nullopt) REQUIRES(mutex_) {
    Result<PendingReport> queued = state_->Enqueue(pod_id, [&](int64_t seq) {
      wire::PodReport report;
      report.seq = seq;
      report.state = state;
      report.at = at;
      report.container_id = container_id;
      report.port_mappings = mappings;
      report.message = message;
      report.exit_code = exit_code;
      if (ready) report.ready = true;
      report.pull = pull;
      report.logs = logs;
      report.move = move;
      return wire::EncodePodReport(report);
    });
    if (!queued.ok()) {
      // The report is not durable, so the agent must not believe it was made: the next pass tries
      // again.
      Log("cannot queue a report on " + pod_id + ": " + queued.status().message());
      return;
    }
    int64_t generation = 0;
    for (const DesiredPod& pod : desired_) {
      if (pod.pod.id == pod_id) generation = pod.pod.generation;
    }
    if (state != PodState::kStarting) reported_[pod_id] = {state, container_id, generation};
    if (state == PodState::kRunning && !ready) {
      unready_[pod_id] = {container_id, mappings};
    } else {
      unready_.erase(pod_id);
    }
    reports_queued_ = true;
    report_wake_.NotifyAll();
  }

  void NoteEngine(const Status& status) EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    const bool up = status.ok();
    if (up == engine_up_) return;
    engine_up_ = up;
    Log(up ? "the container engine at " + engine_->socket_url() + " answers again"
           : "the container engine is unavailable: " + status.message() +
                 "; pods are left as they are and reconciled when it is back");
  }

  // --- Plumbing ----------------------------------------------------------------------------------

  bool Stopping() const EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    return stopping_;
  }

  void Sleep(std::chrono::milliseconds duration) EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    wake_.WaitFor(mutex_, duration, [this]() REQUIRES(mutex_) { return stopping_; });
  }

  void Fail(const Status& status) EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    if (failure_.ok()) failure_ = status;
    Log("agent stopped: " + status.message());
  }

  // Callers may hold mutex_; log_mutex_ only orders lines.
  void Log(const std::string& line) EXCLUDES(log_mutex_) {
    core::MutexLock lock(log_mutex_);
    log_ << core::FormatTime(clock_.Now()) << " agent: " << line << std::endl;
  }

  const AgentOptions options_;
  core::Clock& clock_;
  core::Mutex log_mutex_;  // orders log lines; taken with or without mutex_ held
  std::ostream& log_ GUARDED_BY(log_mutex_);
  std::unique_ptr<StateDb> state_;  // thread-safe itself
  std::unique_ptr<Engine> engine_;  // thread-safe itself
  const GpuInventory gpus_;
  const std::unique_ptr<Nvml> nvml_;  // null unless the GPUs came from NVML
  const GpuAccess gpu_access_;
  const HostResources resources_;
  ActivitySampler sampler_;                                 // the heartbeat thread's
  std::set<std::string> networks_made_ GUARDED_BY(mutex_);  // PruneNetworks
  // Containers stopped for writing past a size, by container id: the reason their exit is told.
  std::map<std::string, std::string> disk_stops_ GUARDED_BY(mutex_);

  mutable core::Mutex mutex_;
  core::CondVar wake_;         // reconcile, sleeps, and Stop waiting for pulls
  core::CondVar report_wake_;  // the outbox has something
  bool stopping_ GUARDED_BY(mutex_) = false;
  bool poked_ GUARDED_BY(mutex_) = false;
  bool reports_queued_ GUARDED_BY(mutex_) = false;
  Status failure_ GUARDED_BY(mutex_);
  std::string node_id_ GUARDED_BY(mutex_);
  std::string node_token_ GUARDED_BY(mutex_);
  bool server_reachable_ GUARDED_BY(mutex_) = true;
  bool engine_up_ GUARDED_BY(mutex_) = true;
  std::set<int> failing_gpus_ GUARDED_BY(mutex_);
  std::vector<core::GpuMeasurement> gpu_measurements_ GUARDED_BY(mutex_);  // MeasureGpus
  bool heartbeat_due_ GUARDED_BY(mutex_) = false;  // send one now, not at the interval's end
  bool have_desired_ GUARDED_BY(mutex_) = false;
  std::vector<DesiredPod> desired_ GUARDED_BY(mutex_);
  std::map<std::string, Reported> reported_ GUARDED_BY(mutex_);
  std::map<std::string, std::string> keys_written_;  // by pod, into its container (ssh_keys.h)
  // Running pods whose ports have not all answered yet.
  std::map<std::string, Probe> unready_ GUARDED_BY(mutex_);
  std::set<int> ports_handed_out_ GUARDED_BY(mutex_);
  std::map<std::string, std::thread> pulls_ GUARDED_BY(mutex_);        // by image: one pull of each
  std::vector<std::thread> ended_pulls_ GUARDED_BY(mutex_);            // for ReapPulls to join
  std::map<std::string, std::string> pull_errors_ GUARDED_BY(mutex_);  // by image, until reported
  std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<Agent> BeginAgent(AgentOptions options, core::Clock& clock, std::ostream& log,
                                  std::unique_ptr<StateDb> state, std::unique_ptr<Engine> engine,
                                  GpuInventory gpus, std::unique_ptr<Nvml> nvml,
                                  GpuAccess gpu_access) {
  auto agent =
      std::make_unique<AgentImpl>(std::move(options), clock, log, std::move(state),
                                  std::move(engine), std::move(gpus), std::move(nvml), gpu_access);
  agent->Begin();
  return agent;
}

}  // namespace suanli::agent
