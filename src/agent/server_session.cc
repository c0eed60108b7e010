#include "agent/server_session.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

namespace suanli::agent {

using core::Result;
using core::Status;

ServerSession::ServerSession(AgentContext& context, StatusReporter& reporter,
                             const GpuInventory& gpus, Nvml* nvml,
                             std::function<std::vector<core::GpuMeasurement>()> measurements)
    : context_(context),
      reporter_(reporter),
      gpus_(gpus),
      nvml_(nvml),
      measurements_(std::move(measurements)),
      resources_(WithRoomForSimulatedGpus(ReadResources(context.options().state_dir), gpus.gpus)),
      sampler_(context.engine(), context.clock(), [](const std::string& path) {
        std::ifstream file(path);
        std::ostringstream text;
        text << file.rdbuf();
        return text.str();
      }) {}

void ServerSession::LoadCachedDesired() {
  Result<std::optional<std::string>> cached = context_.state().Get("desired");
  if (!cached.ok() || !cached->has_value()) return;
  Result<wire::DesiredPods> desired = wire::DecodeDesiredPods(**cached);
  if (!desired.ok()) return;
  context_.SetDesired(std::move(desired->pods), /*quiet=*/true);
}

std::unique_ptr<net::HttpClient> ServerSession::NewClient(std::chrono::milliseconds timeout) const {
  Result<std::unique_ptr<net::HttpClient>> client =
      net::HttpClient::Create(context_.options().server_url, {timeout});
  return client.ok() ? std::move(client).value() : nullptr;
}

net::Headers ServerSession::Auth() const {
  return {{"Authorization", "Bearer " + context_.node_token()}};
}

std::string ServerSession::NodeReportBody(wire::NodeReportFor purpose) {
  const AgentOptions& options = context_.options();
  wire::NodeReport report;
  report.gpu_health = nvml_ != nullptr ? nvml_->Health() : std::vector<GpuHealth>();
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
  if (purpose == wire::NodeReportFor::kRegistration) report.name = options.name;
  report.address = options.public_address;
  report.labels = options.labels;
  if (purpose == wire::NodeReportFor::kHeartbeat) {
    report.pod_activity = sampler_.Sample(IdlePods());
  }
  if (measurements_) report.gpu_measurements = measurements_();
  return wire::EncodeNodeReport(report);
}

std::vector<std::string> ServerSession::IdlePods() const {
  std::vector<std::string> ids;
  for (const DesiredPod& entry : context_.Desired()) {
    if (entry.pod.idle_stop_after_s > 0 && entry.pod.desired == core::DesiredState::kRunning) {
      ids.push_back(entry.pod.id);
    }
  }
  return ids;
}

std::set<int> ServerSession::FailingGpus(const std::vector<GpuHealth>& health) {
  std::set<int> failing;
  std::string why;
  for (const GpuHealth& reading : health) {
    if (reading.problem.empty()) continue;
    failing.insert(reading.index);
    why += " GPU " + std::to_string(reading.index) + ": " + reading.problem + ";";
  }
  core::MutexLock lock(context_.mutex());
  if (failing != failing_gpus_) {
    context_.Log(failing.empty() ? "every GPU reads well again"
                                 : "GPUs that cannot be read are no longer offered:" + why +
                                       " the server drains this node until an admin uncordons it");
    failing_gpus_ = failing;
  }
  return failing;
}

void ServerSession::NoteServer(bool reachable, const std::string& why) {
  core::MutexLock lock(context_.mutex());
  if (reachable == server_reachable_) return;
  server_reachable_ = reachable;
  context_.Log(reachable ? "the server is reachable again at " + context_.options().server_url
                         : "cannot reach the server (" + why +
                               "); pods keep running and their changes are kept until it is back");
}

bool ServerSession::EnsureRegistered(net::HttpClient& client) {
  const AgentOptions& options = context_.options();
  StateDb& state = context_.state();
  if (!context_.node_token().empty()) return true;
  Result<std::optional<std::string>> token = state.Get("node_token");
  Result<std::optional<std::string>> id = state.Get("node_id");
  if (token.ok() && id.ok() && token->has_value() && id->has_value()) {
    core::MutexLock lock(context_.mutex());
    context_.SetIdentityLocked(**id, **token);
    return true;
  }
  if (options.join_token.empty()) {
    context_.Fail(core::FailedPreconditionError(
        "this agent is not registered and has no join token; get one with `suanli nodes "
        "join-token` and pass --join-token"));
    return false;
  }
  while (!context_.Stopping()) {
    Result<net::HttpResponse> answer = client.Send(
        "POST", "/v1/agent/register", NodeReportBody(wire::NodeReportFor::kRegistration),
        {{"Authorization", "Bearer " + options.join_token}});
    if (answer.ok() && answer->status == 201) {
      Result<wire::Registration> registration = wire::DecodeRegistration(answer->body);
      if (!registration.ok()) {
        // The server took the join token but said something else than a node: registering
        // again would make a second node of this host, so stop and say what came back.
        context_.Fail(core::FailedPreconditionError(
            "the server registered this node but its answer could not be read (" +
            registration.status().message() + "); is --server " + options.server_url +
            " a suanli control plane of this version?"));
        return false;
      }
      const std::string& node_token = registration->node_token;
      const std::string& node_id = registration->node_id;
      if (Status saved = state.Set("node_token", node_token); !saved.ok()) {
        context_.Fail(saved);
        return false;
      }
      (void)state.Set("node_id", node_id);
      (void)state.Set("server_url", options.server_url);
      core::MutexLock lock(context_.mutex());
      context_.SetIdentityLocked(node_id, node_token);
      context_.WakeAll();  // a heartbeat may be due
      context_.Log("registered as node " + node_id + " (" + options.name + ") with " +
                   std::to_string(gpus_.gpus.size()) + " GPU(s) from " + gpus_.source);
      return true;
    }
    if (answer.ok() && answer->status >= 400 && answer->status < 500) {
      context_.Fail(
          core::PermissionDeniedError("the server refused to register this node: " + answer->body));
      return false;
    }
    NoteServer(false,
               answer.ok() ? "HTTP " + std::to_string(answer->status) : answer.status().message());
    context_.Sleep(std::chrono::seconds(1));
  }
  return false;
}

void ServerSession::SyncLoop() {
  const AgentOptions& options = context_.options();
  std::unique_ptr<net::HttpClient> client = NewClient(options.long_poll + std::chrono::seconds(10));
  if (!client) {
    return context_.Fail(
        core::InvalidArgumentError("--server " + options.server_url + " is not an http:// URL"));
  }
  if (!EnsureRegistered(*client)) return;
  int64_t after = -1;
  auto backoff = std::chrono::milliseconds(200);
  while (!context_.Stopping()) {
    const std::string target = "/v1/agent/pods?after=" + std::to_string(after) +
                               "&wait_s=" + std::to_string(options.long_poll.count());
    Result<net::HttpResponse> answer = client->Send("GET", target, "", Auth());
    if (answer.ok() && answer->status == 200) {
      NoteServer(true, "");
      backoff = std::chrono::milliseconds(200);
      Result<wire::DesiredPods> desired = wire::DecodeDesiredPods(answer->body);
      if (!desired.ok()) {
        context_.Log("the server's desired pods could not be read: " + desired.status().message());
        context_.Sleep(std::chrono::seconds(1));
        continue;
      }
      after = desired->generation;
      (void)context_.state().Set("desired", answer->body);
      context_.SetDesired(std::move(desired->pods));
      continue;
    }
    if (answer.ok() && answer->status == 401) {
      context_.Log("the server no longer knows this node's token (was the node removed?)");
      if (options.join_token.empty()) {
        return context_.Fail(core::UnauthenticatedError(
            "the server rejected this node's token; register it again with --join-token"));
      }
      {
        core::MutexLock lock(context_.mutex());
        context_.SetIdentityLocked(context_.NodeIdLocked(), "");
      }
      (void)context_.state().Set("node_token", "");
      (void)context_.state().Set("node_id", "");
      if (!EnsureRegistered(*client)) return;
      after = -1;
      continue;
    }
    NoteServer(false, answer.ok() ? "HTTP " + std::to_string(answer->status) + ": " + answer->body
                                  : answer.status().message());
    context_.Sleep(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5'000));
  }
}

void ServerSession::HeartbeatSoon() {
  core::MutexLock lock(context_.mutex());
  heartbeat_due_ = true;
  context_.WakeAll();
}

void ServerSession::HeartbeatLoop() {
  std::unique_ptr<net::HttpClient> client = NewClient(std::chrono::seconds(10));
  if (!client) return;
  while (!context_.Stopping()) {
    if (!context_.node_id().empty()) {
      {
        core::MutexLock lock(context_.mutex());
        heartbeat_due_ = false;
      }
      Result<net::HttpResponse> answer = client->Send(
          "POST", "/v1/agent/heartbeat", NodeReportBody(wire::NodeReportFor::kHeartbeat), Auth());
      if (!answer.ok()) NoteServer(false, answer.status().message());
    }
    // A heartbeat asked for before the registration went through goes as soon as it has.
    core::MutexLock lock(context_.mutex());
    context_.WaitFor(context_.options().heartbeat_interval, [this]() REQUIRES(context_.mutex()) {
      return context_.StoppingLocked() || (heartbeat_due_ && !context_.NodeIdLocked().empty());
    });
  }
}

ReportOutcome ServerSession::SendReport(net::HttpClient& client, const PendingReport& report) {
  Result<net::HttpResponse> answer =
      client.Send("POST", "/v1/agent/pods/" + net::PercentEncode(report.pod_id) + "/status",
                  report.body, Auth());
  if (!answer.ok() || answer->status >= 500 || answer->status == 401 || answer->status == 429) {
    NoteServer(false,
               answer.ok() ? "HTTP " + std::to_string(answer->status) : answer.status().message());
    return ReportOutcome::kRetry;
  }
  // Refused for good (the pod is gone or on another node): dropped.
  if (answer->status >= 400) {
    context_.Log("the server refused a report on " + report.pod_id + " (" + answer->body +
                 "); dropped");
  }
  NoteServer(true, "");
  return ReportOutcome::kSent;
}

void ServerSession::ReportLoop() {
  std::unique_ptr<net::HttpClient> client = NewClient(std::chrono::seconds(10));
  if (!client) return;
  auto backoff = std::chrono::milliseconds(200);
  while (!context_.Stopping()) {
    if (context_.node_id().empty()) {
      context_.Sleep(std::chrono::milliseconds(200));
      continue;
    }
    const int sent =
        reporter_.Send([&](const PendingReport& report) { return SendReport(*client, report); });
    if (sent == 0) {
      reporter_.WaitForReports(std::chrono::seconds(1));
    } else if (sent < 0) {
      context_.Sleep(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5'000));
    } else {
      backoff = std::chrono::milliseconds(200);
    }
  }
}

}  // namespace suanli::agent
