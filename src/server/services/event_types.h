// What callers of the control plane send and get back about event webhooks and their deliveries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/event.h"

namespace suanli::server {

// One try of an event webhook's delivery, for its delivery log.
struct WebhookAttempt {
  core::TimePoint at;
  int64_t event_id = 0;
  std::string kind;
  int status = 0;     // the receiver's HTTP status; 0 when it could not be reached
  std::string error;  // "" for a 2xx
};

// An event webhook as its owner sees it: the subscription and its last tries (newest last; kept
// in memory, the last 20).
struct EventWebhookInfo {
  core::EventWebhook hook;
  std::vector<WebhookAttempt> deliveries;
};

}  // namespace suanli::server
