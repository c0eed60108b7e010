// EventWebhookDispatcher: delivers each user's events to their webhooks (POST /v1/webhooks).
//
// The outbox is the event stream itself: a webhook's cursor (`delivered_seq`, in the store) says
// up to which event it has been served, and the dispatcher posts what comes after, in event order,
// one at a time per webhook, and moves the cursor (durably, before the next POST) once a POST was
// answered 2xx (events of kinds the webhook does not want are passed over). A failed POST is tried
// again after 1 s, 2 s, 4 s, ... (at most `max_backoff`), and nothing later goes to that webhook
// until it succeeds: in order, and at least once, since a crash (kill -9 included) between a
// delivery and its cursor's commit sends that event again after the restart. Each body is the
// event as GET /v1/events shows it, signed as a job's webhook is (webhooks.h: X-Suanli-Signature,
// HMAC-SHA256 with the webhook's secret); `X-Suanli-Event-Id` carries its id, for receivers that
// drop repeats. Events expire after their retention (30 days): a webhook failing longer than that
// misses them.
//
// Thread-safe; one thread of its own makes the calls.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/mutex.h"
#include "server/control_plane.h"

namespace suanli::server {

struct EventWebhookOptions {
  std::chrono::milliseconds first_backoff{1'000};  // doubled after each failed try
  std::chrono::milliseconds max_backoff{300'000};
  std::chrono::milliseconds timeout{10'000};  // for one try
  std::chrono::milliseconds poll{250};        // how often the cursors are compared to the stream
  net::OutboundPolicy policy;                 // which addresses it may call (webhooks.h)
};

class EventWebhookDispatcher {
 public:
  EventWebhookDispatcher(ControlPlane& plane, EventWebhookOptions options = {});
  ~EventWebhookDispatcher();  // stops after the POST under way, if any
  EventWebhookDispatcher(const EventWebhookDispatcher&) = delete;
  EventWebhookDispatcher& operator=(const EventWebhookDispatcher&) = delete;

 private:
  struct Backoff {
    std::chrono::milliseconds wait{0};
    core::MonotonicTime until{};
  };

  void Loop() EXCLUDES(mutex_);
  // Sends what `hook` is owed, until a failure or the end; moves its cursor.
  void Serve(const core::EventWebhook& hook, Backoff& backoff);
  bool Stopping() EXCLUDES(mutex_);

  ControlPlane& plane_;
  const EventWebhookOptions options_;
  std::map<std::string, Backoff> backoff_;  // the thread's own
  core::Mutex mutex_;
  core::CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_;  // last: started once the fields are
};

}  // namespace suanli::server
