// The running agent: owns the parts Agent::Start opened (agent_start.cc), the state its managers
// share (agent_context.h), the managers, and the threads that run them:
//   sync       ServerSession::SyncLoop       registration, the long poll of the desired pods
//   heartbeat  ServerSession::HeartbeatLoop  the node's report every heartbeat_interval
//   report     ServerSession::ReportLoop     the status reporter's outbox, sent in order
//   reconcile  ReconcileLoop below           ReconcileExecutor, then ReadinessProber, each pass
//   disk       DiskLoop below                DiskGuard::Check every disk_check_interval
//   gpu probe  GpuMeter::Measure             once, unless --gpu-probe off
//   relay      ServeRelay (relay.h)          the server's requests for logs, ports and volumes
// and one background job per image pulled or pod's volumes moved (image_puller.h,
// volume_mover.h), joined by the reconcile loop.
#include "agent/agent.h"

#include <memory>
#include <ostream>
#include <thread>
#include <utility>
#include <vector>

#include "agent/agent_context.h"
#include "agent/agent_internal.h"
#include "agent/disk_guard.h"
#include "agent/engine.h"
#include "agent/gpu_meter.h"
#include "agent/gpus.h"
#include "agent/image_puller.h"
#include "agent/readiness_prober.h"
#include "agent/reconcile_executor.h"
#include "agent/relay.h"
#include "agent/server_session.h"
#include "agent/state_db.h"
#include "agent/status_reporter.h"
#include "agent/volume_mover.h"
#include "core/mutex.h"

namespace suanli::agent {
namespace {

// Thread-safety: Stop, failure and node_id from any thread; Begin and Stop on the owner's
// (threads_ is theirs). The managers say what they guard.
class AgentImpl final : public Agent {
 public:
  AgentImpl(AgentOptions options, core::Clock& clock, std::ostream& log,
            std::unique_ptr<StateDb> state, std::unique_ptr<Engine> engine, GpuInventory gpus,
            std::unique_ptr<Nvml> nvml, GpuAccess gpu_access)
      : options_(std::move(options)),
        state_(std::move(state)),
        engine_(std::move(engine)),
        gpus_(std::move(gpus)),
        nvml_(std::move(nvml)),
        context_(options_, clock, log, *state_, *engine_),
        reporter_(context_),
        gpu_meter_(context_, gpus_, [this] { session_.HeartbeatSoon(); }),
        session_(context_, reporter_, gpus_, nvml_.get(),
                 [this] { return gpu_meter_.Measurements(); }),
        puller_(context_, reporter_),
        mover_(context_, reporter_),
        disk_guard_(context_),
        executor_(context_, reporter_, puller_, mover_, disk_guard_, gpus_, gpu_access),
        prober_(context_, reporter_) {
    engine_->SetNoticeHandler([this](const std::string& line) { context_.Log(line); });
  }

  ~AgentImpl() override { Stop(); }

  void Begin() {
    session_.LoadCachedDesired();
    threads_.emplace_back([this] { session_.SyncLoop(); });
    threads_.emplace_back([this] { session_.HeartbeatLoop(); });
    threads_.emplace_back([this] { ReconcileLoop(); });
    threads_.emplace_back([this] { session_.ReportLoop(); });
    if (options_.disk_check_interval.count() > 0) threads_.emplace_back([this] { DiskLoop(); });
    if (options_.gpu_probe != "off") threads_.emplace_back([this] { gpu_meter_.Measure(); });
    threads_.emplace_back([this] {
      RelayOptions relay;
      relay.server_url = options_.server_url;
      relay.pod_address = context_.ProbeAddress();
      relay.move_dir = options_.state_dir / "moves";
      relay.snapshot_dir = options_.state_dir / "snapshots";
      relay.shared_volume_dir = options_.shared_volume_dir;
      ServeRelay(
          relay, [this] { return context_.node_token(); }, *engine_,
          [this] { return context_.Stopping(); },
          [this](const std::string& line) { context_.Log(line); });
    });
  }

  void Stop() override {
    if (!context_.BeginStop()) return;
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    // The reconcile thread, which starts pulls and moves, is gone. A pull cannot be interrupted
    // (the engine's API has no way), so each runs to its end, as before Stop.
    context_.WaitForJobs();
  }

  core::Status failure() const override { return context_.failure(); }
  std::string node_id() const override { return context_.node_id(); }

 private:
  void ReconcileLoop() {
    while (!context_.Stopping()) {
      context_.ReapJobs();
      if (context_.HaveDesired()) {
        executor_.ReconcileOnce();
        prober_.Probe();
      }
      // While a pod's ports are coming up, look again soon: `pods create --wait` waits for them.
      context_.WaitForPoke(reporter_.AnyUnready() ? std::chrono::milliseconds(200)
                                                  : options_.resync_interval);
    }
  }

  // On a thread of its own: a walk of a large volume takes seconds, which must not hold up
  // reconciling or heartbeats.
  void DiskLoop() {
    while (!context_.Stopping()) {
      context_.Sleep(options_.disk_check_interval);
      if (!context_.Stopping()) disk_guard_.Check();
    }
  }

  const AgentOptions options_;
  const std::unique_ptr<StateDb> state_;  // thread-safe itself
  const std::unique_ptr<Engine> engine_;  // thread-safe itself
  const GpuInventory gpus_;
  const std::unique_ptr<Nvml> nvml_;  // null unless the GPUs came from NVML
  AgentContext context_;
  StatusReporter reporter_;
  GpuMeter gpu_meter_;
  ServerSession session_;
  ImagePuller puller_;
  VolumeMover mover_;
  DiskGuard disk_guard_;
  ReconcileExecutor executor_;
  ReadinessProber prober_;
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
