// PodList: GET /v1/pods as JSON text, {"pods": [...]}, from each pod's view cached per revision:
// the read a console polls, kept cheap. Only what depends on the time or the caller (cost,
// uptime, node address, secrets) is written on each call.
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
  core::Result<Written<std::string>> Json(const ControlPlane& plane, const Principal& caller,
                                          core::TimePoint now);

 private:
  core::Mutex mutex_;
  // Pod id -> {revision, its wire::PodViewWithoutTime without the closing brace}.
  std::unordered_map<std::string, std::pair<uint64_t, std::string>> views_ GUARDED_BY(mutex_);
};

}  // namespace suanli::server
