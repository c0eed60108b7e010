// AgentFixture: the state the agent's managers share (agent/agent_context.h) over a FakeEngine, a
// ManualClock and a state database in a TempDir, for the managers' tests: no HTTP server, no real
// engine, and no thread of the agent's (a test calls a manager's step itself). Header-only; for
// tests that link suanli_agent and suanli_fake_engine.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/agent.h"
#include "agent/agent_context.h"
#include "agent/state_db.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/domain.h"
#include "core/mutex.h"
#include "testing/fake_engine.h"
#include "testing/locked_log.h"
#include "testing/temp_dir.h"
#include "wire/agent_protocol.h"

namespace suanli::testing {

// A report in the agent's outbox, decoded.
struct QueuedReport {
  std::string pod_id;
  wire::PodReport report;
};

class AgentFixture {
 public:
  // 2026-12-01T00:00:00Z.
  static constexpr core::TimePoint kStart{std::chrono::seconds(1'796'083'200)};

  explicit AgentFixture(agent::AgentOptions options = {})
      : clock_(kStart), engine_(clock_), options_(Resolved(std::move(options), temp_)) {
    core::Result<std::unique_ptr<agent::StateDb>> state = agent::StateDb::Open(temp_.File("state"));
    SUANLI_CHECK(state.ok(), "a test's state database opens in its own folder");
    state_ = std::move(state).value();
    context_ = std::make_unique<agent::AgentContext>(options_, clock_, log_, *state_, engine_);
  }
  ~AgentFixture() { context_->WaitForJobs(); }

  core::ManualClock& clock() { return clock_; }
  FakeEngine& engine() { return engine_; }
  agent::StateDb& state() { return *state_; }
  agent::AgentContext& context() { return *context_; }
  const TempDir& temp() const { return temp_; }
  // What the agent logged so far. REQUIRES: no background job runs (WaitForJobs).
  std::string log() const { return log_.str(); }

  // As if the server session had registered the node.
  void Register(const std::string& node_id = "node_test") {
    core::MutexLock lock(context_->mutex());
    context_->SetIdentityLocked(node_id, "token_" + node_id);
  }
  // As if the server's long poll had answered these pods.
  void Desire(const std::vector<core::Pod>& pods) {
    std::vector<wire::DesiredPod> desired;
    for (const core::Pod& pod : pods) desired.push_back({pod, {}});
    context_->SetDesired(std::move(desired));
  }
  // The outbox, in order, decoded.
  std::vector<QueuedReport> Reports() {
    core::Result<std::vector<agent::PendingReport>> pending = state_->Pending(1000);
    SUANLI_CHECK(pending.ok(), "a test's outbox reads");
    std::vector<QueuedReport> reports;
    for (const agent::PendingReport& entry : *pending) {
      core::Result<wire::PodReport> report = wire::DecodePodReport(entry.body);
      SUANLI_CHECK(report.ok(), "the outbox holds reports the agent encoded");
      reports.push_back({entry.pod_id, *report});
    }
    return reports;
  }

  // A pod desired running on this node, without GPUs, ports or volume.
  static core::Pod MakePod(const std::string& id, const std::string& image = "busybox") {
    core::Pod pod;
    pod.id = id;
    pod.owner_id = "usr_owner";
    pod.image = image;
    pod.gpu_count = 0;
    pod.desired = core::DesiredState::kRunning;
    pod.state = core::PodState::kPending;
    pod.node_id = "node_test";
    return pod;
  }

 private:
  static agent::AgentOptions Resolved(agent::AgentOptions options, const TempDir& temp) {
    if (options.server_url.empty()) options.server_url = "http://127.0.0.1:1";
    options.state_dir = temp.File("state");
    if (options.name.empty()) options.name = "test-node";
    return options;
  }

  TempDir temp_;
  core::ManualClock clock_;
  FakeEngine engine_;
  LockedLog log_;  // read while background jobs write it
  const agent::AgentOptions options_;
  std::unique_ptr<agent::StateDb> state_;
  std::unique_ptr<agent::AgentContext> context_;
};

}  // namespace suanli::testing
