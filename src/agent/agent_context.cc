#include "agent/agent_context.h"

#include <utility>

#include "core/check.h"

namespace suanli::agent {

AgentContext::AgentContext(const AgentOptions& options, core::Clock& clock, std::ostream& log,
                           StateDb& state, Engine& engine)
    : options_(options), clock_(clock), state_(state), engine_(engine), log_(log) {}

AgentContext::~AgentContext() {
  core::MutexLock lock(mutex_);
  SUANLI_CHECK(jobs_.empty() && ended_jobs_.empty(),
               "the agent waits for its background jobs before it goes");
}

void AgentContext::Log(const std::string& line) const {
  core::MutexLock lock(log_mutex_);
  log_ << core::FormatTime(clock_.Now()) << " agent: " << line << std::endl;
}

bool AgentContext::Stopping() const {
  core::MutexLock lock(mutex_);
  return stopping_;
}

void AgentContext::Sleep(std::chrono::milliseconds duration) const {
  core::MutexLock lock(mutex_);
  wake_.WaitFor(mutex_, duration, [this]() REQUIRES(mutex_) { return stopping_; });
}

bool AgentContext::BeginStop() {
  {
    core::MutexLock lock(mutex_);
    if (stopping_) return false;
    stopping_ = true;
  }
  wake_.NotifyAll();
  return true;
}

void AgentContext::Fail(const core::Status& status) {
  core::MutexLock lock(mutex_);
  if (failure_.ok()) failure_ = status;
  Log("agent stopped: " + status.message());
}

core::Status AgentContext::failure() const {
  core::MutexLock lock(mutex_);
  return failure_;
}

void AgentContext::Poke() {
  core::MutexLock lock(mutex_);
  PokeLocked();
}

void AgentContext::PokeLocked() {
  poked_ = true;
  wake_.NotifyAll();
}

void AgentContext::WaitForPoke(std::chrono::milliseconds timeout) {
  core::MutexLock lock(mutex_);
  wake_.WaitFor(mutex_, timeout, [this]() REQUIRES(mutex_) { return stopping_ || poked_; });
  poked_ = false;
}

std::string AgentContext::node_id() const {
  core::MutexLock lock(mutex_);
  return node_id_;
}

std::string AgentContext::node_token() const {
  core::MutexLock lock(mutex_);
  return node_token_;
}

void AgentContext::SetIdentityLocked(std::string node_id, std::string node_token) {
  node_id_ = std::move(node_id);
  node_token_ = std::move(node_token);
}

bool AgentContext::HaveDesired() const {
  core::MutexLock lock(mutex_);
  return have_desired_;
}

std::vector<DesiredPod> AgentContext::Desired() const {
  core::MutexLock lock(mutex_);
  return desired_;
}

void AgentContext::SetDesired(std::vector<DesiredPod> pods, bool quiet) {
  {
    core::MutexLock lock(mutex_);
    desired_ = std::move(pods);
    have_desired_ = true;
    if (quiet) return;
    poked_ = true;
  }
  wake_.NotifyAll();
}

void AgentContext::NoteEngine(const core::Status& status) {
  core::MutexLock lock(mutex_);
  const bool up = status.ok();
  if (up == engine_up_) return;
  engine_up_ = up;
  Log(up ? "the container engine at " + engine_.socket_url() + " answers again"
         : "the container engine is unavailable: " + status.message() +
               "; pods are left as they are and reconciled when it is back");
}

std::string AgentContext::ProbeAddress() const {
  const std::string& address = options_.publish_address;
  return address.empty() || address == "0.0.0.0" ? "127.0.0.1" : address;
}

bool AgentContext::StartJob(const std::string& key, std::function<void()> job) {
  core::MutexLock lock(mutex_);
  if (jobs_.contains(key)) return false;
  // The thread's last step takes mutex_, held here until the thread is in jobs_.
  jobs_.emplace(key, std::thread([this, key, job = std::move(job)] {
                  job();
                  core::MutexLock done(mutex_);
                  // A thread cannot join itself: ReapJobs joins it, after this returns.
                  const auto self = jobs_.find(key);
                  SUANLI_CHECK(self != jobs_.end(), "a job's thread is in jobs_ until it ends");
                  ended_jobs_.push_back(std::move(self->second));
                  jobs_.erase(self);
                  PokeLocked();
                }));
  return true;
}

bool AgentContext::JobRunning(const std::string& key) const {
  core::MutexLock lock(mutex_);
  return jobs_.contains(key);
}

void AgentContext::ReapJobs() {
  std::vector<std::thread> ended;
  {
    core::MutexLock lock(mutex_);
    ended.swap(ended_jobs_);
  }
  for (std::thread& thread : ended) thread.join();
}

void AgentContext::WaitForJobs() {
  {
    core::MutexLock lock(mutex_);
    wake_.Wait(mutex_, [this]() REQUIRES(mutex_) { return jobs_.empty(); });
  }
  ReapJobs();
}

}  // namespace suanli::agent
