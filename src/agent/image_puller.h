// ImagePuller: pulls the images of pods whose container the engine could not create for want of
// one, in the background (a pull may take minutes; other pods go on), telling the server how far
// it got about once a second so people see a progress bar. A pull that fails is reported on the
// pod as failed when the reconcile loop next asks for its image, and tried again at the pod's next
// start.
//
// One thread per image rather than one pull worker with a queue: a pull of a small image must not
// wait behind a large one. They do not accumulate: each is a background job of the agent's
// (agent_context.h), joined by the reconcile loop once it ends.
//
// Thread-safety: any thread; pull_errors_ is GUARDED_BY the agent's mutex (agent_context.h).
#pragma once

#include <map>
#include <string>

#include "agent/agent_context.h"
#include "agent/status_reporter.h"
#include "core/domain.h"
#include "core/mutex.h"

namespace suanli::agent {

class ImagePuller {
 public:
  ImagePuller(AgentContext& context, StatusReporter& reporter)
      : context_(context), reporter_(reporter) {}
  ImagePuller(const ImagePuller&) = delete;
  ImagePuller& operator=(const ImagePuller&) = delete;

  // Starts the pull of `pod.image` unless one runs; reports the pod failed instead when the last
  // pull of its image failed (and forgets that failure, so a later start pulls again).
  void PullFor(const core::Pod& pod) EXCLUDES(context_.mutex());

 private:
  // A pull's thread.
  void Pull(const std::string& image, const std::string& pod_id) EXCLUDES(context_.mutex());

  AgentContext& context_;
  StatusReporter& reporter_;
  // By image, the engine's message, until reported on a pod.
  std::map<std::string, std::string> pull_errors_ GUARDED_BY(context_.mutex());
};

}  // namespace suanli::agent
