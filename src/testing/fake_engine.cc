#include "testing/fake_engine.h"

#include <utility>

namespace suanli::testing {

using agent::ContainerInfo;
using core::Result;
using core::Status;

namespace {

// The calls that only read: changes() leaves them out.
bool IsRead(std::string_view call) {
  return call == "Version" || call == "ImagePresent" || call == "Inspect" ||
         call == "ListLabelled" || call == "ListLabelledNetworks" || call == "VolumeDirectory" ||
         call == "Logs" || call == "FollowLogs" || call == "WritableLayerBytes" ||
         call == "CpuUsage";
}

}  // namespace

void FakeEngine::SetDown(bool down) {
  core::MutexLock lock(mutex_);
  down_ = down;
}

void FakeEngine::AddImage(std::string_view image) {
  core::MutexLock lock(mutex_);
  images_.insert(std::string(image));
}

void FakeEngine::ScriptPull(std::string_view image, Status result,
                            std::vector<agent::PullProgress> progress) {
  core::MutexLock lock(mutex_);
  pulls_[std::string(image)] = {std::move(result), std::move(progress)};
}

void FakeEngine::HoldPulls() {
  core::MutexLock lock(mutex_);
  hold_pulls_ = true;
}

void FakeEngine::ReleasePulls() {
  {
    core::MutexLock lock(mutex_);
    hold_pulls_ = false;
  }
  pulls_released_.NotifyAll();
}

void FakeEngine::FailNext(std::string_view call, Status status) {
  core::MutexLock lock(mutex_);
  fail_next_[std::string(call)] = std::move(status);
}

void FakeEngine::ExitContainer(std::string_view id_or_name, int exit_code) {
  core::MutexLock lock(mutex_);
  Container* container = Find(id_or_name);
  if (container == nullptr || !container->info.running) return;
  container->info.running = false;
  container->info.status = "exited";
  container->info.exit_code = exit_code;
  container->info.finished_at = clock_.Now();
}

void FakeEngine::SetWritableLayerBytes(std::string_view id_or_name, int64_t bytes) {
  core::MutexLock lock(mutex_);
  if (Container* container = Find(id_or_name)) container->writable_bytes = bytes;
}

void FakeEngine::SetLogs(std::string_view id_or_name, std::string text) {
  core::MutexLock lock(mutex_);
  if (Container* container = Find(id_or_name)) container->logs = std::move(text);
}

void FakeEngine::SetExecResult(agent::ExecResult result) {
  core::MutexLock lock(mutex_);
  exec_result_ = std::move(result);
}

void FakeEngine::SetVolumeDirectory(std::string_view volume, std::string directory) {
  core::MutexLock lock(mutex_);
  volumes_[std::string(volume)] = std::move(directory);
}

std::vector<std::string> FakeEngine::calls() const {
  core::MutexLock lock(mutex_);
  return calls_;
}

std::vector<std::string> FakeEngine::changes() const {
  core::MutexLock lock(mutex_);
  std::vector<std::string> changes;
  for (const std::string& call : calls_) {
    if (!IsRead(std::string_view(call).substr(0, call.find(' ')))) changes.push_back(call);
  }
  return changes;
}

int FakeEngine::CallCount(std::string_view prefix) const {
  core::MutexLock lock(mutex_);
  int count = 0;
  for (const std::string& call : calls_) count += call.starts_with(prefix) ? 1 : 0;
  return count;
}

std::optional<agent::ContainerSpec> FakeEngine::SpecOf(std::string_view id_or_name) const {
  core::MutexLock lock(mutex_);
  for (const auto& [id, container] : containers_) {
    if (id == id_or_name || container.info.name == id_or_name) return container.spec;
  }
  return std::nullopt;
}

std::set<std::string> FakeEngine::networks() const {
  core::MutexLock lock(mutex_);
  std::set<std::string> names;
  for (const auto& [name, labels] : networks_) names.insert(name);
  return names;
}

std::set<std::string> FakeEngine::volumes() const {
  core::MutexLock lock(mutex_);
  std::set<std::string> names;
  for (const auto& [name, directory] : volumes_) names.insert(name);
  return names;
}

Status FakeEngine::Enter(std::string_view call, std::string_view argument) {
  calls_.push_back(argument.empty() ? std::string(call)
                                    : std::string(call) + " " + std::string(argument));
  if (down_) {
    return core::UnavailableError("cannot reach the container engine at " + socket_url_ +
                                  ": the fake engine is down");
  }
  if (auto failure = fail_next_.find(std::string(call)); failure != fail_next_.end()) {
    Status status = std::move(failure->second);
    fail_next_.erase(failure);
    return status;
  }
  return Status::Ok();
}

FakeEngine::Container* FakeEngine::Find(std::string_view id_or_name) {
  for (auto& [id, container] : containers_) {
    if (id == id_or_name || container.info.name == id_or_name) return &container;
  }
  return nullptr;
}

Result<agent::EngineVersion> FakeEngine::Version() {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("Version", ""));
  return agent::EngineVersion{"Fake Engine", "1.0", "1.41"};
}

Result<bool> FakeEngine::ImagePresent(std::string_view image) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("ImagePresent", image));
  return images_.contains(std::string(image));
}

Status FakeEngine::Pull(std::string_view image,
                        const std::function<void(const agent::PullProgress&)>& on_progress) {
  ScriptedPull scripted;
  {
    core::MutexLock lock(mutex_);
    SUANLI_RETURN_IF_ERROR(Enter("Pull", image));
    if (auto it = pulls_.find(std::string(image)); it != pulls_.end()) scripted = it->second;
    pulls_released_.Wait(mutex_, [this]() REQUIRES(mutex_) { return !hold_pulls_; });
  }
  // The callback runs without the lock, as the real engine's runs on the caller's thread.
  for (const agent::PullProgress& progress : scripted.progress) {
    if (on_progress) on_progress(progress);
  }
  core::MutexLock lock(mutex_);
  if (scripted.result.ok()) images_.insert(std::string(image));
  return scripted.result;
}

Result<std::string> FakeEngine::Create(const agent::ContainerSpec& spec) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("Create", spec.name));
  if (Find(spec.name) != nullptr) {
    return core::AlreadyExistsError("the container name " + spec.name + " is already in use");
  }
  if (!images_.contains(spec.image)) return core::NotFoundError("no such image: " + spec.image);
  if (!spec.network.empty() && !networks_.contains(spec.network)) {
    return core::FailedPreconditionError("network " + spec.network + " not found");
  }
  Container container;
  container.info.id = "c" + std::to_string(next_id_++);
  container.info.name = spec.name;
  container.info.image = spec.image;
  container.info.labels = spec.labels;
  container.info.status = "created";
  container.info.ports = spec.ports;
  container.spec = spec;
  if (!spec.volume_name.empty() && !volumes_.contains(spec.volume_name)) {
    volumes_[spec.volume_name] = "";
  }
  const std::string id = container.info.id;
  containers_[id] = std::move(container);
  return id;
}

Status FakeEngine::Start(std::string_view id_or_name) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("Start", id_or_name));
  Container* container = Find(id_or_name);
  if (container == nullptr)
    return core::NotFoundError("no such container " + std::string(id_or_name));
  if (container->info.running) return Status::Ok();
  container->info.running = true;
  container->info.status = "running";
  container->info.started_at = clock_.Now();
  container->info.finished_at.reset();
  return Status::Ok();
}

Status FakeEngine::Stop(std::string_view id_or_name, std::chrono::seconds /*grace*/) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("Stop", id_or_name));
  Container* container = Find(id_or_name);
  if (container == nullptr)
    return core::NotFoundError("no such container " + std::string(id_or_name));
  if (!container->info.running) return Status::Ok();
  container->info.running = false;
  container->info.status = "exited";
  container->info.exit_code = 143;  // SIGTERM, as a process that does not catch it ends
  container->info.finished_at = clock_.Now();
  return Status::Ok();
}

Status FakeEngine::Remove(std::string_view id_or_name) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("Remove", id_or_name));
  Container* container = Find(id_or_name);
  if (container == nullptr)
    return core::NotFoundError("no such container " + std::string(id_or_name));
  containers_.erase(container->info.id);
  return Status::Ok();
}

Result<ContainerInfo> FakeEngine::Inspect(std::string_view id_or_name) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("Inspect", id_or_name));
  Container* container = Find(id_or_name);
  if (container == nullptr)
    return core::NotFoundError("no such container " + std::string(id_or_name));
  return container->info;
}

Result<std::vector<ContainerInfo>> FakeEngine::ListLabelled(std::string_view label_key) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("ListLabelled", label_key));
  std::vector<ContainerInfo> found;
  for (const auto& [id, container] : containers_) {
    if (container.info.labels.contains(std::string(label_key))) found.push_back(container.info);
  }
  return found;
}

Status FakeEngine::RemoveVolume(std::string_view name) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("RemoveVolume", name));
  if (!volumes_.contains(std::string(name))) {
    return core::NotFoundError("no such volume " + std::string(name));
  }
  for (const auto& [id, container] : containers_) {
    if (container.spec.volume_name == name) {
      return core::FailedPreconditionError("volume " + std::string(name) + " is in use");
    }
  }
  volumes_.erase(std::string(name));
  return Status::Ok();
}

Status FakeEngine::CreateVolume(std::string_view name) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("CreateVolume", name));
  volumes_.try_emplace(std::string(name), "");
  return Status::Ok();
}

Status FakeEngine::CreateIsolatedNetwork(std::string_view name,
                                         const std::map<std::string, std::string>& labels) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("CreateIsolatedNetwork", name));
  networks_.try_emplace(std::string(name), labels);
  return Status::Ok();
}

Result<std::vector<std::string>> FakeEngine::ListLabelledNetworks(std::string_view label_key) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("ListLabelledNetworks", label_key));
  std::vector<std::string> names;
  for (const auto& [name, labels] : networks_) {
    if (labels.contains(std::string(label_key))) names.push_back(name);
  }
  return names;
}

Status FakeEngine::RemoveNetwork(std::string_view name) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("RemoveNetwork", name));
  if (!networks_.contains(std::string(name))) {
    return core::NotFoundError("no such network " + std::string(name));
  }
  for (const auto& [id, container] : containers_) {
    if (container.spec.network == name) {
      return core::FailedPreconditionError("network " + std::string(name) + " is in use");
    }
  }
  networks_.erase(std::string(name));
  return Status::Ok();
}

Result<std::string> FakeEngine::VolumeDirectory(std::string_view name) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("VolumeDirectory", name));
  auto volume = volumes_.find(std::string(name));
  if (volume == volumes_.end()) return core::NotFoundError("no such volume " + std::string(name));
  if (volume->second.empty()) {
    return core::FailedPreconditionError("the fake engine keeps volume " + std::string(name) +
                                         " in no directory (SetVolumeDirectory)");
  }
  return volume->second;
}

Status FakeEngine::PutArchive(std::string_view id_or_name, std::string_view path,
                              const std::string& /*tar*/) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("PutArchive", std::string(id_or_name) + " " + std::string(path)));
  if (Find(id_or_name) == nullptr) {
    return core::NotFoundError("no such container " + std::string(id_or_name));
  }
  return Status::Ok();
}

Result<std::string> FakeEngine::Logs(std::string_view id_or_name,
                                     const agent::LogOptions& /*options*/) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("Logs", id_or_name));
  Container* container = Find(id_or_name);
  if (container == nullptr)
    return core::NotFoundError("no such container " + std::string(id_or_name));
  return container->logs;
}

Status FakeEngine::FollowLogs(std::string_view id_or_name, const agent::LogOptions& /*options*/,
                              const std::function<bool(std::string_view)>& on_text) {
  std::string text;
  {
    core::MutexLock lock(mutex_);
    SUANLI_RETURN_IF_ERROR(Enter("FollowLogs", id_or_name));
    Container* container = Find(id_or_name);
    if (container == nullptr) {
      return core::NotFoundError("no such container " + std::string(id_or_name));
    }
    text = container->logs;
  }
  if (!text.empty()) on_text(text);
  return Status::Ok();
}

Result<agent::ExecResult> FakeEngine::Exec(std::string_view id_or_name,
                                           const std::vector<std::string>& argv,
                                           std::chrono::seconds /*timeout*/) {
  core::MutexLock lock(mutex_);
  std::string call(id_or_name);
  for (const std::string& arg : argv) call += " " + arg;
  SUANLI_RETURN_IF_ERROR(Enter("Exec", call));
  Container* container = Find(id_or_name);
  if (container == nullptr)
    return core::NotFoundError("no such container " + std::string(id_or_name));
  if (!container->info.running) {
    return core::FailedPreconditionError("container " + std::string(id_or_name) +
                                         " is not running");
  }
  return exec_result_;
}

Result<int64_t> FakeEngine::WritableLayerBytes(std::string_view id_or_name) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("WritableLayerBytes", id_or_name));
  Container* container = Find(id_or_name);
  if (container == nullptr)
    return core::NotFoundError("no such container " + std::string(id_or_name));
  return container->writable_bytes;
}

Result<uint64_t> FakeEngine::CpuUsage(std::string_view id_or_name) {
  core::MutexLock lock(mutex_);
  SUANLI_RETURN_IF_ERROR(Enter("CpuUsage", id_or_name));
  if (Find(id_or_name) == nullptr) {
    return core::NotFoundError("no such container " + std::string(id_or_name));
  }
  return uint64_t{0};
}

}  // namespace suanli::testing
