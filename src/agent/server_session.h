// ServerSession: the agent's side of its conversation with the control plane, over HTTP that the
// agent always dials (the server never connects to a node): registration with the join token (or
// the credential kept in the state database), the long poll of the desired pods (cached in the
// state database so an agent restarted while the server is down still knows its pods), the
// heartbeat with the node's report (GPUs, their health and measurements, pods' activity), and the
// sending of the status reporter's outbox.
//
// Threads: SyncLoop, HeartbeatLoop and ReportLoop each run on a thread of the agent's (agent.cc),
// each with its own HTTP client. Thread-safety: any thread; its fields are GUARDED_BY the agent's
// mutex (agent_context.h), but sampler_, the heartbeat thread's alone.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "agent/activity.h"
#include "agent/agent_context.h"
#include "agent/gpus.h"
#include "agent/host_inventory.h"
#include "agent/status_reporter.h"
#include "core/domain.h"
#include "core/mutex.h"
#include "net/http_client.h"
#include "wire/agent_protocol.h"

namespace suanli::agent {

inline constexpr std::string_view kAgentVersion = "0.5.0";

class ServerSession {
 public:
  // `nvml` may be null (GPUs not from NVML); `measurements` gives the GPU meter's figures for
  // each report (gpu_meter.h). All borrowed.
  ServerSession(AgentContext& context, StatusReporter& reporter, const GpuInventory& gpus,
                Nvml* nvml, std::function<std::vector<core::GpuMeasurement>()> measurements);
  ServerSession(const ServerSession&) = delete;
  ServerSession& operator=(const ServerSession&) = delete;

  // The last desired pods seen, from the state database, so an agent restarted while the server
  // is down still knows which containers are pods (and so reports their exits).
  void LoadCachedDesired();

  // The threads' bodies; each returns once the agent stops (SyncLoop also when it gives up:
  // context.failure() says why).
  void SyncLoop() EXCLUDES(context_.mutex());
  void HeartbeatLoop() EXCLUDES(context_.mutex());
  void ReportLoop() EXCLUDES(context_.mutex());

  // Sends a heartbeat now rather than at the interval's end (new GPU measurements).
  void HeartbeatSoon() EXCLUDES(context_.mutex());

  // The node's report for registration or a heartbeat. Exposed for its tests.
  std::string NodeReportBody(wire::NodeReportFor purpose) EXCLUDES(context_.mutex());
  // One report of the outbox sent with `client`: how the server took it.
  ReportOutcome SendReport(net::HttpClient& client, const PendingReport& report)
      EXCLUDES(context_.mutex());

  // Loads the saved credential, or registers with the join token. Retries until it works or the
  // agent stops; false when stopping or hopeless (context.failure() says why).
  bool EnsureRegistered(net::HttpClient& client) EXCLUDES(context_.mutex());

 private:
  std::unique_ptr<net::HttpClient> NewClient(std::chrono::milliseconds timeout) const;
  net::Headers Auth() const EXCLUDES(context_.mutex());
  // The pods whose use the server watches for idleness (idle_stop_after set) and that should run.
  std::vector<std::string> IdlePods() const EXCLUDES(context_.mutex());
  // The GPUs whose last reading failed; logs each change of the set.
  std::set<int> FailingGpus(const std::vector<GpuHealth>& health) EXCLUDES(context_.mutex());
  // Logs a change of the server's reachability once, not once per retry.
  void NoteServer(bool reachable, const std::string& why) EXCLUDES(context_.mutex());

  AgentContext& context_;
  StatusReporter& reporter_;
  const GpuInventory& gpus_;
  Nvml* const nvml_;
  const std::function<std::vector<core::GpuMeasurement>()> measurements_;
  const HostResources resources_;
  ActivitySampler sampler_;  // the heartbeat thread's
  bool server_reachable_ GUARDED_BY(context_.mutex()) = true;
  std::set<int> failing_gpus_ GUARDED_BY(context_.mutex());
  bool heartbeat_due_ GUARDED_BY(context_.mutex()) = false;  // send one now, not at the interval
};

}  // namespace suanli::agent
