// The two append-only records that say what happened, beside the ledger and the transitions
// (ledger_types.h): an Event tells a pod's owner (or an admin) about something the cloud did or
// saw; an AuditEntry records who called a mutating API route and how it ended.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/clock.h"

namespace suanli::core {

struct Event {
  int64_t seq = 0;  // the event's id: assigned by the control plane, strictly increasing
  TimePoint at;
  std::string kind;           // "pod.state", "pod.preempted", "node.unreachable", ... (docs/api.md)
  std::string object_id;      // the pod, node or user it is about
  std::string user_id;        // whose it is; empty: only admins see it (a node's)
  std::string message;        // for people
  std::string detail = "{}";  // a JSON object with the figures, for scripts
};

struct AuditEntry {
  int64_t seq = 0;  // assigned by the control plane, strictly increasing
  TimePoint at;
  std::string user_id;     // the caller; empty when it was not authenticated
  std::string token_id;    // the API token it used ("tok_..."); empty as user_id
  std::string action;      // the route: "POST /v1/pods/{id}/stop"
  std::string object_id;   // the {id} of the path, or the id a create answered with
  int status = 0;          // the HTTP status of the answer
  std::string error_code;  // "NOT_FOUND", ... for an error; empty on success
};

// A user's subscription to their events: each event is POSTed to `url`, signed with `secret`, in
// id order, at least once (server/event_webhooks.h).
struct EventWebhook {
  std::string id;  // "whk_..."
  std::string owner_id;
  std::string url;                 // http://HOST[:PORT][/PATH]
  std::string secret;              // HMAC-SHA256 key, 64 hex digits; shown to its owner
  std::vector<std::string> kinds;  // only these kinds; empty: every kind
  int64_t delivered_seq = 0;       // every event up to this id was delivered (or skipped)
  TimePoint created_at;

  friend bool operator==(const EventWebhook&, const EventWebhook&) = default;
};

}  // namespace suanli::core
