// FakeEngine: an in-memory agent::Engine for the agent's manager tests, as ninja's
// FakeCommandRunner stands in for its process runner. It keeps images, containers, volumes and
// networks in maps, records each call in order, and lets a test script what the real engine
// would do on its own: be down, fail a pull, stop a container (its process exited), grow a
// container's writable layer. The real engine (Podman here) stays the test of engine.cc itself and
// of the agent end to end (engine_test, agent_faults_test, tests/*process_test*).
//
// Thread-safe: one mutex over everything, as the agent calls it from several threads (a pull runs
// on a thread of its own). Times come from the clock given, so a test on a ManualClock decides
// when a container started and finished.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agent/engine.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"

namespace suanli::testing {

class FakeEngine final : public agent::Engine {
 public:
  explicit FakeEngine(core::Clock& clock) : clock_(clock) {}
  FakeEngine(const FakeEngine&) = delete;
  FakeEngine& operator=(const FakeEngine&) = delete;

  // --- Scripting (the test's side) ---------------------------------------------------------------

  // While down, every call answers UNAVAILABLE, as a stopped engine's socket does.
  void SetDown(bool down) EXCLUDES(mutex_);
  // The image is on the host: Create finds it without a pull.
  void AddImage(std::string_view image) EXCLUDES(mutex_);
  // How a Pull of `image` ends: OK (the default) puts the image on the host; any other status is
  // the pull's answer. `progress` is handed to the caller's callback first, in order.
  void ScriptPull(std::string_view image, core::Status result,
                  std::vector<agent::PullProgress> progress = {}) EXCLUDES(mutex_);
  // Pulls wait until ReleasePulls (a test that checks what happens while one runs).
  void HoldPulls() EXCLUDES(mutex_);
  void ReleasePulls() EXCLUDES(mutex_);
  // The next call named `call` ("Create", "Start", "Stop", ...) answers `status` instead.
  void FailNext(std::string_view call, core::Status status) EXCLUDES(mutex_);
  // The container's process ended on its own with `exit_code`, at the clock's now.
  void ExitContainer(std::string_view id_or_name, int exit_code) EXCLUDES(mutex_);
  // What WritableLayerBytes, Logs and Exec answer for the container.
  void SetWritableLayerBytes(std::string_view id_or_name, int64_t bytes) EXCLUDES(mutex_);
  void SetLogs(std::string_view id_or_name, std::string text) EXCLUDES(mutex_);
  void SetExecResult(agent::ExecResult result) EXCLUDES(mutex_);
  // The host directory VolumeDirectory answers for the volume (created if missing).
  void SetVolumeDirectory(std::string_view volume, std::string directory) EXCLUDES(mutex_);

  // --- Inspection (the test's side) --------------------------------------------------------------

  // Every call so far, in order, as "Name argument" ("Pull busybox", "Create suanli-pod_a",
  // "Start c1", "Stop c1", "Remove c1", "RemoveVolume suanli-pod_a", "Exec c1 sh -c ..."): list
  // calls (ListLabelled, Inspect, ...) included.
  std::vector<std::string> calls() const EXCLUDES(mutex_);
  // The calls that change something (list and inspect calls left out).
  std::vector<std::string> changes() const EXCLUDES(mutex_);
  // How many calls start with `prefix` ("Pull ", "Create ").
  int CallCount(std::string_view prefix) const EXCLUDES(mutex_);
  // The spec a container was created from; nullopt for no such container.
  std::optional<agent::ContainerSpec> SpecOf(std::string_view id_or_name) const EXCLUDES(mutex_);
  std::set<std::string> networks() const EXCLUDES(mutex_);
  std::set<std::string> volumes() const EXCLUDES(mutex_);

  // --- agent::Engine
  // ------------------------------------------------------------------------------

  const std::string& socket_url() const override { return socket_url_; }
  core::Result<agent::EngineVersion> Version() override EXCLUDES(mutex_);
  core::Result<bool> ImagePresent(std::string_view image) override EXCLUDES(mutex_);
  core::Status Pull(std::string_view image,
                    const std::function<void(const agent::PullProgress&)>& on_progress) override
      EXCLUDES(mutex_);
  core::Result<std::string> Create(const agent::ContainerSpec& spec) override EXCLUDES(mutex_);
  core::Status Start(std::string_view id_or_name) override EXCLUDES(mutex_);
  core::Status Stop(std::string_view id_or_name, std::chrono::seconds grace) override
      EXCLUDES(mutex_);
  core::Status Remove(std::string_view id_or_name) override EXCLUDES(mutex_);
  core::Result<agent::ContainerInfo> Inspect(std::string_view id_or_name) override EXCLUDES(mutex_);
  core::Result<std::vector<agent::ContainerInfo>> ListLabelled(std::string_view label_key) override
      EXCLUDES(mutex_);
  core::Status RemoveVolume(std::string_view name) override EXCLUDES(mutex_);
  core::Status CreateVolume(std::string_view name) override EXCLUDES(mutex_);
  core::Status CreateIsolatedNetwork(std::string_view name,
                                     const std::map<std::string, std::string>& labels) override
      EXCLUDES(mutex_);
  core::Result<std::vector<std::string>> ListLabelledNetworks(std::string_view label_key) override
      EXCLUDES(mutex_);
  core::Status RemoveNetwork(std::string_view name) override EXCLUDES(mutex_);
  core::Result<std::string> VolumeDirectory(std::string_view name) override EXCLUDES(mutex_);
  core::Status PutArchive(std::string_view id_or_name, std::string_view path,
                          const std::string& tar) override EXCLUDES(mutex_);
  core::Result<std::string> Logs(std::string_view id_or_name,
                                 const agent::LogOptions& options) override EXCLUDES(mutex_);
  core::Status FollowLogs(std::string_view id_or_name, const agent::LogOptions& options,
                          const std::function<bool(std::string_view)>& on_text) override
      EXCLUDES(mutex_);
  core::Result<agent::ExecResult> Exec(std::string_view id_or_name,
                                       const std::vector<std::string>& argv,
                                       std::chrono::seconds timeout) override EXCLUDES(mutex_);
  core::Result<int64_t> WritableLayerBytes(std::string_view id_or_name) override EXCLUDES(mutex_);
  core::Result<uint64_t> CpuUsage(std::string_view id_or_name) override EXCLUDES(mutex_);

 private:
  struct Container {
    agent::ContainerInfo info;
    agent::ContainerSpec spec;
    int64_t writable_bytes = 0;
    std::string logs;
  };
  struct ScriptedPull {
    core::Status result;
    std::vector<agent::PullProgress> progress;
  };

  // Records the call and answers what is scripted for it: UNAVAILABLE while down, the status of
  // FailNext, else OK (the call goes ahead).
  core::Status Enter(std::string_view call, std::string_view argument) REQUIRES(mutex_);
  Container* Find(std::string_view id_or_name) REQUIRES(mutex_);

  core::Clock& clock_;
  const std::string socket_url_ = "fake://engine";
  mutable core::Mutex mutex_;
  core::CondVar pulls_released_;
  bool down_ GUARDED_BY(mutex_) = false;
  bool hold_pulls_ GUARDED_BY(mutex_) = false;
  int next_id_ GUARDED_BY(mutex_) = 1;
  std::vector<std::string> calls_ GUARDED_BY(mutex_);
  std::map<std::string, core::Status> fail_next_ GUARDED_BY(mutex_);
  std::set<std::string> images_ GUARDED_BY(mutex_);
  std::map<std::string, ScriptedPull> pulls_ GUARDED_BY(mutex_);
  std::map<std::string, Container> containers_ GUARDED_BY(mutex_);  // by id
  std::map<std::string, std::string> volumes_ GUARDED_BY(mutex_);   // name -> host directory
  std::map<std::string, std::map<std::string, std::string>> networks_ GUARDED_BY(mutex_);
  agent::ExecResult exec_result_ GUARDED_BY(mutex_);
};

}  // namespace suanli::testing
