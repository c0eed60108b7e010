#include "agent/agent.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "agent/engine.h"
#include "agent/gpus.h"
#include "agent/ports.h"
#include "agent/reconcile.h"
#include "agent/relay.h"
#include "agent/state_db.h"
#include "agent/tar.h"
#include "core/stop_signal.h"
#include "net/http_client.h"
#include "wire/agent_protocol.h"

namespace suanli::agent {
namespace {

using core::PodState;
using core::Result;
using core::Status;

constexpr std::string_view kAgentVersion = "0.5.0";

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "node";
  return name;
}

// Whether something in the pod answers on `port`: an HTTP port must answer a request (any
// status); a TCP port must accept, then either greet (an SSH banner) or wait for the client to
// speak. The engine's port forwarder accepts even when nothing listens inside, and then closes:
// that is "not yet".
bool PortAnswers(const std::string& address, const core::PortMapping& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = htons(static_cast<uint16_t>(port.host_port));
  inet_pton(AF_INET, address.c_str(), &where.sin_addr);
  auto wait_for = [&](short events, int timeout_ms) {
    pollfd poll_fd{fd, events, 0};
    return ::poll(&poll_fd, 1, timeout_ms) == 1 && (poll_fd.revents & events) != 0;
  };
  bool answers = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&where), sizeof where) == 0 ||
      (errno == EINPROGRESS && wait_for(POLLOUT, 500))) {
    int error = 0;
    socklen_t size = sizeof error;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
    if (error == 0) {
      if (port.protocol == "http") {
        constexpr std::string_view kRequest = "HEAD / HTTP/1.0\r\nHost: localhost\r\n\r\n";
        (void)::send(fd, kRequest.data(), kRequest.size(), MSG_NOSIGNAL);
      }
      char first[5] = {};
      if (wait_for(POLLIN, port.protocol == "http" ? 1000 : 300)) {
        const ssize_t got = ::recv(fd, first, sizeof first, 0);
        answers =
            port.protocol == "http" ? got == 5 && std::string_view(first, 5) == "HTTP/" : got > 0;
      } else {
        answers = port.protocol != "http";  // open and silent: a server waiting for its client
      }
    }
  }
  ::close(fd);
  return answers;
}

struct Probe {
  std::string container_id;
  std::vector<core::PortMapping> ports;
};

struct Resources {
  int vcpu = 0;
  int memory_gb = 0;
  int disk_gb = 0;
};

Resources ReadResources(const std::filesystem::path& dir) {
  Resources resources;
  resources.vcpu = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) {
    resources.memory_gb = static_cast<int>((static_cast<int64_t>(pages) * page_size) >> 30);
  }
  struct statvfs disk {};
  if (statvfs(dir.c_str(), &disk) == 0) {
    resources.disk_gb =
        static_cast<int>((static_cast<int64_t>(disk.f_bavail) * disk.f_frsize) >> 30);
  }
  return resources;
}

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
        resources_(ReadResources(options_.state_dir)) {}

  ~AgentImpl() override { Stop(); }

  void Begin() {
    LoadCachedDesired();
    threads_.emplace_back([this] { SyncLoop(); });
    threads_.emplace_back([this] { HeartbeatLoop(); });
    threads_.emplace_back([this] { ReconcileLoop(); });
    threads_.emplace_back([this] { ReportLoop(); });
    threads_.emplace_back([this] {
      RelayOptions relay;
      relay.server_url = options_.server_url;
      relay.pod_address = ProbeAddress();
      ServeRelay(
          relay,
          [this] {
            std::lock_guard lock(mutex_);
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

  void Stop() override {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    std::vector<std::thread> pulls;
    {
      std::lock_guard lock(mutex_);
      pulls.swap(pull_threads_);
    }
    for (std::thread& thread : pulls) thread.join();
  }

  Status failure() const override {
    std::lock_guard lock(mutex_);
    return failure_;
  }

  std::string node_id() const override {
    std::lock_guard lock(mutex_);
    return node_id_;
  }

 private:
  // --- Talking to the server ---------------------------------------------------------------------

  std::unique_ptr<net::HttpClient> NewClient(std::chrono::milliseconds timeout) const {
    Result<std::unique_ptr<net::HttpClient>> client =
        net::HttpClient::Create(options_.server_url, {timeout});
    return client.ok() ? std::move(client).value() : nullptr;
  }

  net::Headers Auth() const {
    std::lock_guard lock(mutex_);
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
      if (failing.contains(gpu.index)) continue;
      report.gpus.push_back({gpu.index, gpu.uuid, gpu.type, gpu.memory_gb, gpu.simulated});
    }
    report.vcpu = resources_.vcpu;
    report.memory_gb = resources_.memory_gb;
    report.disk_gb = resources_.disk_gb;
    report.agent_version = kAgentVersion;
    if (purpose == wire::NodeReportFor::kRegistration) report.name = options_.name;
    report.address = options_.public_address;
    return wire::EncodeNodeReport(report);
  }

  // The GPUs whose last reading failed; logs each change of the set.
  std::set<int> FailingGpus(const std::vector<GpuHealth>& health) {
    std::set<int> failing;
    std::string why;
    for (const GpuHealth& reading : health) {
      if (reading.problem.empty()) continue;
      failing.insert(reading.index);
      why += " GPU " + std::to_string(reading.index) + ": " + reading.problem + ";";
    }
    std::lock_guard lock(mutex_);
    if (failing != failing_gpus_) {
      Log(failing.empty() ? "every GPU reads well again"
                          : "GPUs that cannot be read are no longer offered:" + why +
                                " the server drains this node until an admin uncordons it");
      failing_gpus_ = failing;
    }
    return failing;
  }

  // Logs a change of the server's reachability once, not once per retry.
  void NoteServer(bool reachable, const std::string& why) {
    std::lock_guard lock(mutex_);
    if (reachable == server_reachable_) return;
    server_reachable_ = reachable;
    Log(reachable ? "the server is reachable again at " + options_.server_url
                  : "cannot reach the server (" + why +
                        "); pods keep running and their changes are kept until it is back");
  }

  // Loads the saved credential, or registers with the join token. Retries until it works or the
  // agent stops; false when stopping or hopeless.
  bool EnsureRegistered(net::HttpClient& client) {
    {
      std::lock_guard lock(mutex_);
      if (!node_token_.empty()) return true;
    }
    Result<std::optional<std::string>> token = state_->Get("node_token");
    Result<std::optional<std::string>> id = state_->Get("node_id");
    if (token.ok() && id.ok() && token->has_value() && id->has_value()) {
      std::lock_guard lock(mutex_);
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
        std::lock_guard lock(mutex_);
        node_token_ = node_token;
        node_id_ = node_id;
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

  void SyncLoop() {
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
          std::lock_guard lock(mutex_);
          desired_ = std::move(desired->pods);
          have_desired_ = true;
          poked_ = true;
        }
        wake_.notify_all();
        continue;
      }
      if (answer.ok() && answer->status == 401) {
        Log("the server no longer knows this node's token (was the node removed?)");
        if (options_.join_token.empty()) {
          return Fail(core::UnauthenticatedError(
              "the server rejected this node's token; register it again with --join-token"));
        }
        {
          std::lock_guard lock(mutex_);
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

  void HeartbeatLoop() {
    std::unique_ptr<net::HttpClient> client = NewClient(std::chrono::seconds(10));
    if (!client) return;
    while (!Stopping()) {
      if (!node_id().empty()) {
        Result<net::HttpResponse> answer = client->Send(
            "POST", "/v1/agent/heartbeat", NodeReportBody(wire::NodeReportFor::kHeartbeat), Auth());
        if (!answer.ok()) NoteServer(false, answer.status().message());
      }
      Sleep(options_.heartbeat_interval);
    }
  }

  // Sends queued reports in order. A report the server refuses for good (the pod is gone or on
  // another node) is dropped; one it could not take now is retried, so nothing is lost.
  void ReportLoop() {
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
        std::unique_lock lock(mutex_);
        report_wake_.wait_for(lock, std::chrono::seconds(1),
                              [this] { return stopping_ || reports_queued_; });
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
    std::lock_guard lock(mutex_);
    desired_ = std::move(desired->pods);
    have_desired_ = true;
  }

  // --- Reconciling -------------------------------------------------------------------------------

  void ReconcileLoop() {
    while (!Stopping()) {
      bool ready = false;
      {
        std::lock_guard lock(mutex_);
        ready = have_desired_;
      }
      if (ready) {
        ReconcileOnce();
        ProbeUnready();
      }
      std::unique_lock lock(mutex_);
      // While a pod's ports are coming up, look again soon: `pods create --wait` waits for them.
      const auto interval =
          unready_.empty() ? options_.resync_interval : std::chrono::milliseconds(200);
      wake_.wait_for(lock, interval, [this] { return stopping_ || poked_; });
      poked_ = false;
    }
  }

  void ReconcileOnce() {
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
        std::lock_guard lock(mutex_);
        desired = desired_;
        reported = reported_;
      }
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
        }
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
        Queue(action.pod_id, action.state, action.at, action.container_id, action.port_mappings,
              action.message, action.exit_code, ready);
        if (action.state == PodState::kRunning) {
          Log(action.pod_id + " is running (container " + action.container_id.substr(0, 12) + ")");
        } else {
          Log(action.pod_id + " is " + std::string(core::PodStateName(action.state)));
        }
        return;
      }
    }
  }

  // Reports `ready` for each running pod whose ports all answer now.
  void ProbeUnready() {
    std::map<std::string, Probe> unready;
    {
      std::lock_guard lock(mutex_);
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

  void CreatePod(const DesiredPod& desired) {
    const core::Pod& pod = desired.pod;
    ContainerSpec spec;
    spec.name = ContainerName(pod.id);
    spec.image = pod.image;
    spec.command = pod.command;
    spec.labels = {{std::string(kPodLabel), pod.id},
                   {std::string(kRestartsLabel), std::to_string(pod.restarts)},
                   {std::string(kNodeLabel), node_id()}};
    // suanli's variables: in the container's env, and usable as ${NAME} in the template's env and
    // command (templates pass JUPYTER_TOKEN to Jupyter that way).
    std::map<std::string, std::string> variables{{"SUANLI_POD_ID", pod.id}};
    if (!pod.jupyter_token.empty()) variables["JUPYTER_TOKEN"] = pod.jupyter_token;
    std::string keys;
    for (const std::string& key : desired.ssh_keys) keys += key + "\n";
    if (!keys.empty()) variables["PUBLIC_KEY"] = keys;
    // Once started (or given up), the engine holds the ports: the kernel will not hand them out.
    struct ReleasePorts {
      AgentImpl& agent;
      const ContainerSpec& spec;
      ~ReleasePorts() {
        std::lock_guard lock(agent.mutex_);
        for (const PublishedPort& port : spec.ports) agent.ports_handed_out_.erase(port.host_port);
      }
    } release{*this, spec};
    {
      std::lock_guard lock(mutex_);
      for (const core::PortSpec& port : pod.ports) {
        Result<int> host_port = FreeHostPort(options_.publish_address, ports_handed_out_);
        if (!host_port.ok()) {
          QueueLocked(pod.id, PodState::kFailed, clock_.Now(), "", {}, host_port.status().message(),
                      std::nullopt);
          return;
        }
        ports_handed_out_.insert(*host_port);
        spec.ports.push_back({port.container_port, *host_port, "tcp"});
        variables["SUANLI_PORT_" + std::to_string(port.container_port)] =
            std::to_string(*host_port);
      }
    }
    // The command is exec'd, not run by a shell, so ${NAME} there is ours to expand: the pod's env
    // (a template's `--model ${MODEL}`) as well as suanli's variables.
    std::map<std::string, std::string> command_variables = variables;
    for (const auto& [key, value] : pod.env) {
      spec.env.emplace_back(key, ExpandVariables(value, variables));
      command_variables[key] = spec.env.back().second;
    }
    for (const auto& [key, value] : variables) {
      if (!pod.env.contains(key)) spec.env.emplace_back(key, value);
    }
    for (std::string& argument : spec.command) {
      argument = ExpandVariables(argument, command_variables);
    }
    spec.publish_address = options_.publish_address;
    spec.nano_cpus = static_cast<int64_t>(pod.vcpu) * 1'000'000'000;
    spec.memory_bytes = static_cast<int64_t>(pod.memory_gb) << 30;
    if (pod.volume_gb > 0 && !pod.volume_mount_path.empty()) {
      spec.volume_name = VolumeName(pod.id);
      spec.volume_mount_path = pod.volume_mount_path;
    }
    AddGpus(pod, spec);
    Result<std::string> created = engine_->Create(spec);
    if (!created.ok()) {
      if (created.status().code() == core::StatusCode::kAlreadyExists) return;  // next pass sees it
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
    if (!keys.empty() && !spec.volume_name.empty()) {
      // For images that read keys from the volume rather than from PUBLIC_KEY. Rewritten at each
      // start from the owner's registered keys; a failure leaves PUBLIC_KEY, so the pod goes on.
      if (Status put = PutAuthorizedKeys(*created, spec.volume_mount_path, keys); !put.ok()) {
        Log("could not write authorized_keys into " + pod.id + "'s volume: " + put.message());
      }
    }
    if (Status started = engine_->Start(*created); !started.ok()) {
      (void)engine_->Remove(*created);
      // Another program bound a host port after it was picked: the next pass picks others.
      if (started.message().find("address already in use") != std::string::npos) {
        Log("a host port of " + pod.id + " was taken before the start; trying other ports");
        return;
      }
      Queue(pod.id, PodState::kFailed, clock_.Now(), *created, {},
            "the container would not start: " + started.message());
      return;
    }
    Log("started " + pod.id + " (" + pod.image + ") as container " + created->substr(0, 12));
  }

  Status PutAuthorizedKeys(const std::string& container_id, const std::string& volume_path,
                           const std::string& keys) {
    Result<std::string> tar = MakeTar(
        {TarEntry::Directory(".ssh", 0700), TarEntry::File(".ssh/authorized_keys", 0600, keys)});
    if (!tar.ok()) return tar.status();
    return engine_->PutArchive(container_id, volume_path, *tar);
  }

  // Only the pod's GPUs reach it. Simulated GPUs have no devices: the container is told which it
  // would have, so software that reads the variables behaves, and that they are simulated.
  void AddGpus(const core::Pod& pod, ContainerSpec& spec) const {
    std::vector<std::string> ids;
    std::string indices;
    bool simulated = false;
    for (int index : pod.gpu_indices) {
      for (const Gpu& gpu : gpus_.gpus) {
        if (gpu.index != index) continue;
        ids.push_back(gpu.uuid);
        simulated = simulated || gpu.simulated;
      }
      indices += (indices.empty() ? "" : ",") + std::to_string(index);
    }
    if (ids.empty()) return;
    spec.env.emplace_back("SUANLI_GPUS", indices);
    if (simulated) {
      spec.env.emplace_back("SUANLI_GPUS_SIMULATED", "1");
      spec.env.emplace_back("NVIDIA_VISIBLE_DEVICES", "void");
      return;
    }
    spec.gpu_access = gpu_access_;
    if (gpu_access_ == GpuAccess::kCdi) {
      for (int index : pod.gpu_indices) spec.gpu_ids.push_back(std::to_string(index));
    } else {
      spec.gpu_ids = std::move(ids);
    }
  }

  // Pulls in the background (a pull may take minutes; other pods go on), telling the server how far
  // it got about once a second so people see a progress bar.
  void PullFor(const core::Pod& pod) {
    std::lock_guard lock(mutex_);
    if (const auto failed = pull_errors_.find(pod.image); failed != pull_errors_.end()) {
      const std::string message = "cannot pull image " + pod.image + ": " + failed->second;
      pull_errors_.erase(failed);  // a later start tries again
      QueueLocked(pod.id, PodState::kFailed, clock_.Now(), "", {}, message, std::nullopt);
      return;
    }
    if (!pulling_.insert(pod.image).second) return;
    Log("pulling " + pod.image + " for " + pod.id);
    pull_threads_.emplace_back([this, image = pod.image, pod_id = pod.id] {
      auto last_report = std::chrono::steady_clock::now() - std::chrono::seconds(2);
      Status pulled = engine_->Pull(image, [&](const PullProgress& progress) {
        const auto now = std::chrono::steady_clock::now();
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
      std::lock_guard done(mutex_);
      pulling_.erase(image);
      if (!pulled.ok()) pull_errors_[image] = pulled.message();
      Log(pulled.ok() ? "pulled " + image : "pull of " + image + " failed: " + pulled.message());
      poked_ = true;
      wake_.notify_all();
    });
  }

  void Queue(const std::string& pod_id, PodState state, core::TimePoint at,
             const std::string& container_id, const std::vector<core::PortMapping>& mappings,
             const std::string& message, std::optional<int> exit_code = std::nullopt,
             bool ready = false, std::optional<core::PullProgress> pull = std::nullopt) {
    std::lock_guard lock(mutex_);
    QueueLocked(pod_id, state, at, container_id, mappings, message, exit_code, ready, pull);
  }

  void QueueLocked(const std::string& pod_id, PodState state, core::TimePoint at,
                   const std::string& container_id, const std::vector<core::PortMapping>& mappings,
                   const std::string& message, std::optional<int> exit_code, bool ready = false,
                   std::optional<core::PullProgress> pull = std::nullopt) {
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
    report_wake_.notify_all();
  }

  void NoteEngine(const Status& status) {
    std::lock_guard lock(mutex_);
    const bool up = status.ok();
    if (up == engine_up_) return;
    engine_up_ = up;
    Log(up ? "the container engine at " + engine_->socket_url() + " answers again"
           : "the container engine is unavailable: " + status.message() +
                 "; pods are left as they are and reconciled when it is back");
  }

  // --- Plumbing ----------------------------------------------------------------------------------

  bool Stopping() const {
    std::lock_guard lock(mutex_);
    return stopping_;
  }

  void Sleep(std::chrono::milliseconds duration) {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, duration, [this] { return stopping_; });
  }

  void Fail(const Status& status) {
    std::lock_guard lock(mutex_);
    if (failure_.ok()) failure_ = status;
    Log("agent stopped: " + status.message());
  }

  // Callers may hold mutex_; log_mutex_ only orders lines.
  void Log(const std::string& line) {
    std::lock_guard lock(log_mutex_);
    log_ << core::FormatTime(clock_.Now()) << " agent: " << line << std::endl;
  }

  const AgentOptions options_;
  core::Clock& clock_;
  std::ostream& log_;
  std::unique_ptr<StateDb> state_;
  std::unique_ptr<Engine> engine_;
  const GpuInventory gpus_;
  const std::unique_ptr<Nvml> nvml_;  // null unless the GPUs came from NVML
  std::set<int> failing_gpus_;        // guarded by mutex_
  const GpuAccess gpu_access_;
  const Resources resources_;

  mutable std::mutex mutex_;
  std::mutex log_mutex_;
  std::condition_variable wake_;         // reconcile and sleeps
  std::condition_variable report_wake_;  // the outbox has something
  bool stopping_ = false;
  bool poked_ = false;
  bool reports_queued_ = false;
  Status failure_;
  std::string node_id_;
  std::string node_token_;
  bool server_reachable_ = true;
  bool engine_up_ = true;
  bool have_desired_ = false;
  std::vector<DesiredPod> desired_;
  std::map<std::string, Reported> reported_;
  std::map<std::string, Probe> unready_;  // running pods whose ports have not all answered yet
  std::set<int> ports_handed_out_;
  std::set<std::string> pulling_;
  std::map<std::string, std::string> pull_errors_;
  std::vector<std::thread> pull_threads_;
  std::vector<std::thread> threads_;
};

}  // namespace

Result<std::unique_ptr<Agent>> Agent::Start(const AgentOptions& given,
                                            const catalog::Catalog& catalog, core::Clock& clock,
                                            std::ostream& log) {
  AgentOptions options = given;
  if (!options.server_url.starts_with("http://")) {
    return core::InvalidArgumentError(
        "--server must be the control plane's URL, like "
        "http://10.0.0.2:7070 (got '" +
        options.server_url + "')");
  }
  while (options.server_url.ends_with('/')) options.server_url.pop_back();
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
  auto agent = std::make_unique<AgentImpl>(std::move(options), clock, log, std::move(state).value(),
                                           std::move(engine).value(), std::move(gpus).value(),
                                           std::move(nvml), access);
  agent->Begin();
  return std::unique_ptr<Agent>(std::move(agent));
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

}  // namespace suanli::agent
