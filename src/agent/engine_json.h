// The Docker Engine API's JSON as Engine speaks it (engine.cc): the create bodies (the
// Docker-compatible API's, and Podman's libpod one for CDI devices), the inspect answer read into
// ContainerInfo, the checks on what goes into a request, and readers of the engine's answers that
// never throw (those answers are outside input). Part of suanli_engine; engine.cc and its tests use
// it, the rest of the agent sees only engine.h's types.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "agent/engine.h"
#include "core/status.h"

namespace suanli::agent::engine_json {

// Member `key` of `object`, or nullptr, "", 0 or false when `object` is null or the member is
// missing or of another type. IntAt takes any JSON number (a double truncated).
const boost::json::object* ObjectAt(const boost::json::object* object, std::string_view key);
std::string StringAt(const boost::json::object* object, std::string_view key);
int64_t IntAt(const boost::json::object* object, std::string_view key);
bool BoolAt(const boost::json::object* object, std::string_view key);
// `text` parsed, or nullopt when it is not JSON.
std::optional<boost::json::value> ParseJson(std::string_view text);

// The Status of an engine's error answer (HTTP `http_status`, its `message`); `what` names the
// call. NOT_FOUND for a 404, and for a 500 that says "no such container": Podman answers that when
// a container is removed between its listing and its inspection (another client's remove), and a
// container that is gone is an answer, not a failure of the engine. INTERNAL otherwise.
core::Status EngineErrorStatus(int http_status, std::string_view message, std::string_view what);

// The id in Podman's `getting container from store "ID": container not known`, or "" for any
// other message. Podman says that for a container whose record outlived its storage (its service
// was killed while removing it); every list of containers or networks then fails on it until the
// record goes, so the engine client removes it (the container can never run again).
std::string GhostContainerId(std::string_view message);

// Names, ids and image references go into the URL path unescaped (as the docker CLI sends them),
// so anything outside their alphabets ([A-Za-z0-9_.-], and / : @ when `image`) is refused before
// it can change the request: INVALID_ARGUMENT, naming `what`.
core::Status CheckReference(std::string_view text, std::string_view what, bool image);
// INVALID_ARGUMENT for a spec that must not reach the engine: a bad name, image, env name, port,
// volume or limit, or GPU ids that do not match its gpu_access.
core::Status CheckSpec(const ContainerSpec& spec);

// The Docker Engine API's create body (Docker, and Podman without GPUs or remapping); a remapped
// user namespace is the Docker daemon's (userns-remap), not the body's. REQUIRES: CheckSpec(spec).
std::string CompatCreateBody(const ContainerSpec& spec);
// Podman's own create body, for CDI devices and remapped user namespaces, with the same hardening
// and limits.
// REQUIRES: CheckSpec(spec).
std::string LibpodCreateBody(const ContainerSpec& spec);

// A container from the engine's inspect answer (or a list entry of the same shape); INTERNAL when
// it has no Id.
core::Result<ContainerInfo> ParseContainer(const boost::json::object& root);

// Adds up a pull's per-layer progress lines (the engine's stream of JSON objects, one a line), and
// hands each sum to `on_progress`. Only "Downloading" counts bytes: the engines report extraction
// against the same totals, which would count each layer twice. Not thread-safe.
class PullTracker {
 public:
  explicit PullTracker(const std::function<void(const PullProgress&)>& on_progress)
      : on_progress_(on_progress) {}

  // Feeds the next bytes of the stream; a line may be split across pieces anywhere.
  void Feed(std::string_view piece);
  // The stream ended: its last line, if it had no newline.
  void Finish();
  // The engine's "error" line, if one came: the pull failed.
  const std::string& error() const { return error_; }

 private:
  void Line(std::string_view line);

  struct Layer {
    int64_t current = 0;
    int64_t total = 0;
  };
  const std::function<void(const PullProgress&)>& on_progress_;
  std::string pending_;
  std::map<std::string, Layer> layers_;
  std::string error_;
};

}  // namespace suanli::agent::engine_json
