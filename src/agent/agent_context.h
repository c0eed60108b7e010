// AgentContext: what the agent's managers share (agent.cc owns it and them): the options, the
// clock, the log, the engine and the state database, and the little state that is nobody's job
// alone: the node's identity, the desired pods, whether the agent stops, the wake-ups of the
// reconcile loop, and the threads of background jobs (pulls and volume moves).
//
// The managers (server_session.h, status_reporter.h, reconcile_executor.h, image_puller.h,
// volume_mover.h, readiness_prober.h, disk_guard.h, gpu_meter.h) each keep their own fields, read
// and written only in their own files, GUARDED_BY this one mutex; no manager holds it while it
// calls another (each public method of a manager takes it itself). One mutex rather than one per
// manager because the waits combine fields of several owners on one condition (the heartbeat waits
// for its own due flag, the node's identity or the stop; the reporter's sender for a queued report
// or the stop), and a report is noted with the generation of the desired pods read under the same
// lock as the outbox write. Nothing slow runs under it: engine calls and HTTP run outside it; the
// state database's enqueue of a report runs inside it, as it must be atomic with what is noted.
//
// Thread-safety: every method may be called from any thread; fields GUARDED_BY(mutex_).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "agent/agent.h"
#include "agent/engine.h"
#include "agent/reconcile.h"
#include "agent/state_db.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"

namespace suanli::agent {

class AgentContext {
 public:
  // Borrows everything; each must outlive the context. `options` resolved (agent_start.cc).
  AgentContext(const AgentOptions& options, core::Clock& clock, std::ostream& log, StateDb& state,
               Engine& engine);
  AgentContext(const AgentContext&) = delete;
  AgentContext& operator=(const AgentContext&) = delete;
  // REQUIRES: WaitForJobs() returned (no background job runs).
  ~AgentContext();

  const AgentOptions& options() const { return options_; }
  core::Clock& clock() const { return clock_; }
  StateDb& state() const { return state_; }
  Engine& engine() const { return engine_; }

  // The one mutex of the agent's state (see above) and its wake-up: reconciling, sleeps, Stop
  // waiting for background jobs.
  core::Mutex& mutex() const RETURN_CAPABILITY(mutex_) { return mutex_; }

  // One line of the agent's log, stamped with the clock. Callers may hold mutex().
  void Log(const std::string& line) const EXCLUDES(log_mutex_);

  // --- Stopping ---------------------------------------------------------------------------------
  bool Stopping() const EXCLUDES(mutex_);
  // Sleeps `duration`, or less when the agent stops.
  void Sleep(std::chrono::milliseconds duration) const EXCLUDES(mutex_);
  // Asks every loop to end and wakes them. Idempotent; false when it was asked before.
  bool BeginStop() EXCLUDES(mutex_);
  bool StoppingLocked() const REQUIRES(mutex_) { return stopping_; }
  // Why the agent gave up, or OK; the first Fail wins (and is logged).
  void Fail(const core::Status& status) EXCLUDES(mutex_);
  core::Status failure() const EXCLUDES(mutex_);

  // --- The reconcile loop's wake-ups ------------------------------------------------------------
  // Reconcile now rather than at the interval's end (a desired change, a pull or disk stop done).
  void Poke() EXCLUDES(mutex_);
  void PokeLocked() REQUIRES(mutex_);
  // Waits until poked or stopping, at most `timeout`, and clears the poke.
  void WaitForPoke(std::chrono::milliseconds timeout) EXCLUDES(mutex_);
  // Wakes every waiter on the shared condition (a heartbeat due, a registration).
  void WakeAll() { wake_.NotifyAll(); }
  // Waits on the shared condition until `done()` (called under mutex()) or `timeout`.
  template <typename Predicate>
  void WaitFor(std::chrono::milliseconds timeout, Predicate done) REQUIRES(mutex_) {
    wake_.WaitFor(mutex_, timeout, std::move(done));
  }

  // --- The node's identity (written by server_session.h) -----------------------------------------
  std::string node_id() const EXCLUDES(mutex_);
  std::string node_token() const EXCLUDES(mutex_);
  const std::string& NodeIdLocked() const REQUIRES(mutex_) { return node_id_; }
  const std::string& NodeTokenLocked() const REQUIRES(mutex_) { return node_token_; }
  void SetIdentityLocked(std::string node_id, std::string node_token) REQUIRES(mutex_);

  // --- The desired pods (written by server_session.h, read by every manager) --------------------
  // Whether the server's desired pods (or the cached ones) are known yet.
  bool HaveDesired() const EXCLUDES(mutex_);
  std::vector<DesiredPod> Desired() const EXCLUDES(mutex_);
  const std::vector<DesiredPod>& DesiredLocked() const REQUIRES(mutex_) { return desired_; }
  // Replaces them and pokes the reconcile loop unless `quiet` (the cache read at start).
  void SetDesired(std::vector<DesiredPod> pods, bool quiet = false) EXCLUDES(mutex_);

  // --- The container engine's reachability -------------------------------------------------------
  // Logs a change of the engine's answer (OK or not) once, not once per call.
  void NoteEngine(const core::Status& status) EXCLUDES(mutex_);

  // Where this host's published pod ports answer (the relay and the readiness probe).
  std::string ProbeAddress() const;

  // --- Background jobs (a pull, a volume move), one per key at a time ---------------------------
  // Runs `job` on a thread of its own unless a job of `key` runs; false then. When `job` returns,
  // its thread is handed to ReapJobs and the reconcile loop poked.
  bool StartJob(const std::string& key, std::function<void()> job) EXCLUDES(mutex_);
  bool JobRunning(const std::string& key) const EXCLUDES(mutex_);
  // Joins the threads of the jobs that ended (the reconcile loop, each pass).
  void ReapJobs() EXCLUDES(mutex_);
  // Waits for every job to end, then joins them (Stop: a pull cannot be interrupted, so each runs
  // to its end).
  void WaitForJobs() EXCLUDES(mutex_);

 private:
  const AgentOptions& options_;
  core::Clock& clock_;
  StateDb& state_;
  Engine& engine_;
  mutable core::Mutex log_mutex_;  // orders log lines; taken with or without mutex_ held
  std::ostream& log_ GUARDED_BY(log_mutex_);

  mutable core::Mutex mutex_;
  mutable core::CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  bool poked_ GUARDED_BY(mutex_) = false;
  core::Status failure_ GUARDED_BY(mutex_);
  bool engine_up_ GUARDED_BY(mutex_) = true;
  std::string node_id_ GUARDED_BY(mutex_);
  std::string node_token_ GUARDED_BY(mutex_);
  bool have_desired_ GUARDED_BY(mutex_) = false;
  std::vector<DesiredPod> desired_ GUARDED_BY(mutex_);
  std::map<std::string, std::thread> jobs_ GUARDED_BY(mutex_);  // by key: one of each at a time
  std::vector<std::thread> ended_jobs_ GUARDED_BY(mutex_);      // for ReapJobs to join
};

}  // namespace suanli::agent
