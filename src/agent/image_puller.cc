#include "agent/image_puller.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "core/clock.h"

namespace suanli::agent {

void ImagePuller::PullFor(const core::Pod& pod) {
  std::optional<std::string> failure;
  {
    core::MutexLock lock(context_.mutex());
    if (const auto failed = pull_errors_.find(pod.image); failed != pull_errors_.end()) {
      failure = std::move(failed->second);
      pull_errors_.erase(failed);  // a later start tries again
    }
  }
  if (failure) {
    PodReportFields report(pod.id, core::PodState::kFailed, context_.clock().Now());
    report.message = "cannot pull image " + pod.image + ": " + *failure;
    reporter_.Queue(report);
    return;
  }
  if (context_.JobRunning(pod.image)) return;
  context_.Log("pulling " + pod.image + " for " + pod.id);
  (void)context_.StartJob(pod.image,
                          [this, image = pod.image, pod_id = pod.id] { Pull(image, pod_id); });
}

void ImagePuller::Pull(const std::string& image, const std::string& pod_id) {
  core::MonotonicTime last_report = core::MonotonicNow() - std::chrono::seconds(2);
  core::Status pulled = context_.engine().Pull(image, [&](const PullProgress& progress) {
    const core::MonotonicTime now = core::MonotonicNow();
    if (now - last_report < std::chrono::seconds(1)) return;
    last_report = now;
    std::string message = "pulling image " + image;
    if (progress.total_bytes > 0) {
      message += ": " + std::to_string(progress.current_bytes * 100 / progress.total_bytes) +
                 "% of " + std::to_string(progress.total_bytes >> 20) + " MiB";
    }
    {
      PodReportFields report(pod_id, core::PodState::kStarting, context_.clock().Now());
      report.message = message;
      report.pull = core::PullProgress{progress.current_bytes, progress.total_bytes};
      reporter_.Queue(report);
    }
  });
  core::MutexLock done(context_.mutex());
  if (!pulled.ok()) pull_errors_[image] = pulled.message();
  context_.Log(pulled.ok() ? "pulled " + image
                           : "pull of " + image + " failed: " + pulled.message());
}

}  // namespace suanli::agent
