#include "server/event_webhooks.h"

#include <algorithm>
#include <boost/json/serialize.hpp>

#include "server/webhooks.h"
#include "wire/views.h"

namespace suanli::server {

namespace {

constexpr size_t kPage = 100;  // events read at a time

}  // namespace

EventWebhookDispatcher::EventWebhookDispatcher(ControlPlane& plane, EventWebhookOptions options)
    : plane_(plane), options_(options), thread_([this] { Loop(); }) {}

EventWebhookDispatcher::~EventWebhookDispatcher() {
  {
    core::MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  thread_.join();
}

bool EventWebhookDispatcher::Stopping() {
  core::MutexLock lock(mutex_);
  return stopping_;
}

void EventWebhookDispatcher::Loop() {
  while (!Stopping()) {
    std::map<std::string, Backoff> kept;
    for (const core::EventWebhook& hook : plane_.EventWebhooks()) {
      Backoff& backoff = kept[hook.id] = backoff_[hook.id];
      if (core::MonotonicNow() < backoff.until) continue;
      Serve(hook, backoff);
      if (Stopping()) return;
    }
    backoff_ = std::move(kept);  // deleted webhooks are forgotten
    core::MutexLock lock(mutex_);
    wake_.WaitFor(mutex_, options_.poll, [this]() REQUIRES(mutex_) { return stopping_; });
  }
}

void EventWebhookDispatcher::Serve(const core::EventWebhook& hook, Backoff& backoff) {
  core::EventWebhook cursor = hook;
  while (!Stopping()) {
    core::Result<std::vector<core::Event>> events = plane_.EventsOwed(cursor, kPage);
    if (!events.ok() || events->empty()) return;
    int64_t through = cursor.delivered_seq;
    for (const core::Event& event : *events) {
      const bool wanted =
          cursor.kinds.empty() ||
          std::find(cursor.kinds.begin(), cursor.kinds.end(), event.kind) != cursor.kinds.end();
      if (wanted) {
        const std::string body = boost::json::serialize(wire::EventView(event));
        int status = 0;
        const core::Status posted =
            PostWebhook(options_.policy, cursor.url, body, cursor.secret, options_.timeout, &status,
                        {{"X-Suanli-Event-Id", std::to_string(event.seq)}});
        plane_.NoteWebhookAttempt(cursor.id, {plane_.Now(), event.seq, event.kind, status,
                                              posted.ok() ? "" : posted.message()});
        if (!posted.ok()) {
          plane_.WebhookDelivered(cursor.id, through);
          backoff.wait =
              std::min(backoff.wait.count() == 0 ? options_.first_backoff : backoff.wait * 2,
                       options_.max_backoff);
          backoff.until = core::MonotonicNow() + backoff.wait;
          return;
        }
        backoff = {};
        // The cursor moves, durably, at each answer, not at the page's end: a kill -9 then sends
        // again only the event under way, not every event of the page (found by
        // EventWebhooksTest.DeliveriesSurviveAKillNineAtLeastOnceSignedAndInOrder).
        plane_.WebhookDelivered(cursor.id, event.seq);
      }
      through = event.seq;
    }
    plane_.WebhookDelivered(cursor.id, through);  // past the kinds it does not want
    cursor.delivered_seq = through;
    if (events->size() < kPage) return;
  }
}

}  // namespace suanli::server
