// JobPusher: posts the jobs of http-mode serverless endpoints to their workers and hands the
// answers back to the control plane.
//
// A worker of such an endpoint is an HTTP server in a pod. The control plane picks the jobs and
// the workers (ControlPlane::TakePushJobs); each job's input goes as a POST to the worker's
// `http_port` and `http_path`, through the relay to its node (relay.h), as a user's request to a
// pod's port does, so the server never dials a node. The answer, or the relay's 502/504 when the
// worker cannot be reached, goes to ControlPlane::AnswerPushedJob, and the freed room is filled
// at once. The relay waits for the job's execution timeout and a margin, so that the control
// plane's tick times the job out (TIMED_OUT) before the relay would give up on it (a 504 would
// queue it again).
//
// Thread-safe: Push runs on whichever thread wakes it (a request's, the tick's, the relay's).
#pragma once

#include <atomic>

#include "net/http.h"
#include "server/control_plane.h"
#include "server/relay.h"

namespace suanli::server {

class JobPusher {
 public:
  // Both must outlive the pusher. Registers itself as the plane's push hook.
  JobPusher(ControlPlane& plane, Relay& relay);
  // Unregisters the hook; answers that come after are dropped (Stop).
  ~JobPusher();
  JobPusher(const JobPusher&) = delete;
  JobPusher& operator=(const JobPusher&) = delete;

  // Posts every job the control plane has for a worker now.
  void Push();
  // From now on nothing is pushed and answers are dropped: the jobs in flight stay IN_PROGRESS in
  // the store, and the next start of the server queues them again.
  void Stop();

 private:
  void Answered(const PushedJob& job, const net::HttpResponse& answer);

  ControlPlane& plane_;
  Relay& relay_;
  std::atomic<bool> stopped_{false};
};

}  // namespace suanli::server
