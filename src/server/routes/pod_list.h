// PodList: GET /v1/pods as JSON text, {"pods": [...], "next_after": ID}, a page at a time, from
// each pod's view cached per revision: the read a console polls, kept cheap. Only what depends on
// the time or the caller (cost, uptime, node address, secrets) is written on each call. The full
// view is the pod's as GET /v1/pods/ID shows it; the compact one has only what a list shows.
//
// Internal to the API. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/mutex.h"
#include "core/status.h"
#include "server/control_plane.h"

namespace suanli::server {

class PodList {
 public:
  enum class View { kFull, kCompact };

  core::Result<Written<std::string>> Json(const ControlPlane& plane, const Principal& caller,
                                          core::TimePoint now, const PodPage& page = {},
                                          View view = View::kFull);

 private:
  using Cache = std::unordered_map<std::string, std::pair<uint64_t, std::string>>;
  core::Mutex mutex_;
  // Pod id -> {revision, its view without what depends on the time, and without the closing
  // brace}: one cache per view.
  Cache full_ GUARDED_BY(mutex_);
  Cache compact_ GUARDED_BY(mutex_);
};

}  // namespace suanli::server
