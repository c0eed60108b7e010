// PodList: GET /v1/pods as JSON text, {"pods": [...], "next_after": ID}, a page at a time, from
// each pod's view cached per revision: the read a console polls, kept cheap. Only what depends on
// the time or the caller (cost, uptime, node address, secrets) is written on each call. The full
// view is the pod's as GET /v1/pods/ID shows it; the compact one has only what a list shows.
//
// The page's entity tag is made from what it shows (each pod's revision, its time fields, its
// node's address, which secrets the caller sees) before any of it is written, so a poller that
// already has the page is answered 304 for the cost of the walk alone.
//
// Internal to the API. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/mutex.h"
#include "core/status.h"
#include "server/control_plane.h"
#include "server/routes/entity_tag.h"

namespace suanli::server {

class PodList {
 public:
  enum class View { kFull, kCompact };

  // `process_nonce`: random per process (tags then differ across restarts, see below).
  explicit PodList(uint64_t process_nonce = 0);

  // The page and its tag; the page's text is left empty when `if_none_match` (the request's
  // header) names the tag.
  core::Result<Written<TaggedJson>> Json(const ControlPlane& plane, const Principal& caller,
                                         core::TimePoint now, const PodPage& page = {},
                                         View view = View::kFull,
                                         const std::optional<std::string>& if_none_match = {});

  // A pod's view at one revision, without what depends on the time or the caller (public for
  // pod_list.cc's page writer only). Immutable once cached: a new revision replaces it, and a page
  // being written keeps the one it read.
  struct CachedView {
    std::string id;
    uint64_t revision = 0;
    std::string text;           // without its closing brace: the per-call fields follow
    std::string jupyter_token;  // `,"jupyter_token":"…"` (the full view, for whom may see it)
    std::string link_token;     // `,"link_token":"…"`
  };

 private:
  using Cache = std::unordered_map<std::string, std::shared_ptr<const CachedView>>;

  // Tags differ across restarts (revisions start again from 0) and so across upgrades, whose
  // views may differ at the same revision.
  const uint64_t process_nonce_;
  // Held only to find (or make) each pod's view, not while the page is written: pollers on other
  // threads wait for the walk alone.
  core::Mutex mutex_;
  Cache full_ GUARDED_BY(mutex_);  // pod id -> its view; one cache per view
  Cache compact_ GUARDED_BY(mutex_);
};

}  // namespace suanli::server
