// Engine: the Docker Engine API over its Unix socket, as the agent needs it.
//
// The same code drives Docker on production hosts and Podman's Docker-compatible service
// (`podman system service`) here. Only the calls the agent makes are wrapped, in our own types, so
// the rest of the agent never sees the API's JSON. Thread-safe: every call opens its own
// connection (a Unix socket connect costs microseconds, and a pull or a followed log may take
// minutes on its own connection).
//
// Errors: UNAVAILABLE when the engine cannot be reached (its message names the socket and how to
// start the engine), NOT_FOUND for an unknown container, image or volume, ALREADY_EXISTS when a
// container name is taken, INTERNAL with the engine's own message for anything else it refuses.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace suanli::agent {

struct PublishedPort {
  int container_port = 0;
  int host_port = 0;
  std::string protocol = "tcp";  // "tcp" or "udp" (the engine's terms; HTTP is TCP)
};

// How GPUs reach a container. Docker with the NVIDIA Container Toolkit takes DeviceRequests;
// Podman (and Docker 25+ with CDI) takes CDI names ("nvidia.com/gpu=0"; a bare id or UUID in
// gpu_ids gets the "nvidia.com/gpu=" prefix). Podman's Docker-compatible API silently drops
// DeviceRequests, so Create refuses kDeviceRequests on Podman (FAILED_PRECONDITION) and creates
// kCdi containers through Podman's own API (see engine.cc); on Docker kCdi is a "cdi" device
// request, which a Docker without CDI refuses rather than ignores.
enum class GpuAccess { kNone, kDeviceRequests, kCdi };

// The host uid and gid a remapped container's root becomes (ContainerSpec::remap_user_namespace),
// and how many ids follow it. One fixed range on every node, so that a volume's files keep their
// owners when it moves between nodes; far above the ids of people and of /etc/subuid's usual
// ranges (100000 up).
inline constexpr int64_t kRemappedRootId = 1'000'000'000;
inline constexpr int64_t kRemappedIdCount = 65'536;

struct ContainerSpec {
  std::string name;  // "suanli-pod_abc123"; the engine refuses a second container with it
  std::string image;
  std::vector<std::string> command;  // empty: the image's own
  std::vector<std::pair<std::string, std::string>> env;
  std::map<std::string, std::string> labels;
  std::vector<PublishedPort> ports;
  std::string publish_address;  // host address ports are bound to; empty: all
  // The network it joins (CreateIsolatedNetwork); empty: the engine's default one.
  std::string network;
  int64_t nano_cpus = 0;     // 0: no limit
  int64_t memory_bytes = 0;  // 0: no limit
  int64_t pids_limit = 0;    // processes and threads in the container; 0: the engine's default
  std::string volume_name;   // a named volume, created on first use; empty: none
  std::string volume_mount_path;
  // More volumes (a pod's volumes of their own): named ones, each created on first use, or, with
  // `host_path`, a directory of the host bound in (a volume on the shared backend).
  struct Volume {
    std::string name;
    std::string mount_path;
    bool read_only = false;
    std::string host_path;  // absolute; "": the named volume `name`
  };
  std::vector<Volume> more_volumes;
  GpuAccess gpu_access = GpuAccess::kNone;
  std::vector<std::string> gpu_ids;  // NVML UUIDs or indices, only the pod's
  // Run in a user namespace whose root is host id kRemappedRootId (65536 ids from it), so that a
  // process breaking out of the container is nobody on the host. Podman maps it per container;
  // Docker only daemon-wide (userns-remap), which Create then requires.
  bool remap_user_namespace = false;
  // Hardening is not optional: never privileged, no-new-privileges, capabilities limited to what a
  // dev container needs (see engine.cc for the list and why).
};

struct ContainerInfo {
  std::string id;
  std::string name;  // without the leading '/'
  std::string image;
  std::map<std::string, std::string> labels;
  std::string status;  // the engine's: "created", "running", "paused", "exited", "dead", ...
  bool running = false;
  int exit_code = 0;
  std::string error;                          // the engine's reason a start failed, if any
  std::optional<core::TimePoint> started_at;  // unset before the first start
  // Unset while it has never stopped. Podman may put it a few milliseconds before started_at
  // for a process that exits at once (it stamps the start after runc returns).
  std::optional<core::TimePoint> finished_at;
  std::vector<PublishedPort> ports;
};

struct EngineVersion {
  std::string name;         // "Docker Engine - Community", "Podman Engine"
  std::string version;      // "28.2.2", "4.3.1"
  std::string api_version;  // "1.47"
};

struct PullProgress {
  std::string status;  // the engine's words: "Pulling fs layer", "Downloading", "Pull complete"
  int64_t current_bytes = 0;  // summed over the layers seen so far
  int64_t total_bytes = 0;    // 0 while unknown
};

struct LogOptions {
  int tail = -1;                         // the last N lines; -1: all
  std::optional<core::TimePoint> since;  // only lines after this
  bool timestamps = false;               // prefix each line with its RFC 3339 time
};

// A command run in a container (Engine::Exec) and how it ended.
struct ExecResult {
  int exit_code = 0;
  std::string output;  // stdout and stderr interleaved, at most the last 64 KiB
};

class Engine {
 public:
  // `socket_url` is "unix:///run/podman/podman.sock" or "unix:///var/run/docker.sock".
  // Connects lazily: a dead engine is an error of the first call, not of Connect.
  static core::Result<std::unique_ptr<Engine>> Connect(std::string_view socket_url);
  virtual ~Engine() = default;

  // Where the client says what it repaired on its own (a container record whose storage is gone,
  // which would fail every list); set once, before the engine is shared between threads.
  void SetNoticeHandler(std::function<void(const std::string&)> on_notice) {
    on_notice_ = std::move(on_notice);
  }

  virtual const std::string& socket_url() const = 0;
  virtual core::Result<EngineVersion> Version() = 0;

  virtual core::Result<bool> ImagePresent(std::string_view image) = 0;
  // Streams the engine's progress to `on_progress` (from this thread) until the pull ends.
  virtual core::Status Pull(std::string_view image,
                            const std::function<void(const PullProgress&)>& on_progress) = 0;

  // Returns the new container's id. ALREADY_EXISTS when `spec.name` is taken, NOT_FOUND when the
  // image is not on this host (Pull it first), INVALID_ARGUMENT for a malformed spec (GPU ids
  // without GPU access, or GPU access without ids, included: a GPU is never dropped silently).
  virtual core::Result<std::string> Create(const ContainerSpec& spec) = 0;
  virtual core::Status Start(std::string_view id_or_name) = 0;  // a running one: OK
  // SIGTERM, then SIGKILL after `grace`. A stopped one: OK.
  virtual core::Status Stop(std::string_view id_or_name, std::chrono::seconds grace) = 0;
  // Forced (a running one is killed). NOT_FOUND when it is gone already.
  virtual core::Status Remove(std::string_view id_or_name) = 0;
  virtual core::Result<ContainerInfo> Inspect(std::string_view id_or_name) = 0;
  // All containers (running or not) that carry `label_key`, inspected.
  virtual core::Result<std::vector<ContainerInfo>> ListLabelled(std::string_view label_key) = 0;
  // NOT_FOUND when absent; FAILED_PRECONDITION while a container (running or not) uses it.
  virtual core::Status RemoveVolume(std::string_view name) = 0;
  // Creates the named volume; OK when it exists already.
  virtual core::Status CreateVolume(std::string_view name) = 0;
  // Creates the bridge network `name` with `labels`, cut off from the engine's other networks: its
  // containers reach each other and the outside world, but no container of another network (nor
  // the host ports that one publishes). Podman isolates through its own API's "isolate" option;
  // Docker isolates user-defined bridges from each other by default. OK when it exists already.
  virtual core::Status CreateIsolatedNetwork(std::string_view name,
                                             const std::map<std::string, std::string>& labels) = 0;
  // The names of the networks that carry `label_key`.
  virtual core::Result<std::vector<std::string>> ListLabelledNetworks(
      std::string_view label_key) = 0;
  // NOT_FOUND when absent; FAILED_PRECONDITION while a container (running or not) is on it.
  virtual core::Status RemoveNetwork(std::string_view name) = 0;
  // The host directory that holds the named volume's files (the engine's "Mountpoint"), which a
  // volume move reads and writes directly: the agent runs beside the engine with its privileges.
  // NOT_FOUND for no such volume; FAILED_PRECONDITION when the engine keeps it elsewhere than in
  // a host directory (a volume driver).
  virtual core::Result<std::string> VolumeDirectory(std::string_view name) = 0;
  // Unpacks the tar archive `tar` (see tar.h) into the directory `path` of the container's
  // filesystem, volumes mounted there included, keeping the archive's modes and owners. Works on a
  // created container before it starts. NOT_FOUND for an unknown container; a missing `path` is
  // NOT_FOUND on Docker, and created by Podman.
  virtual core::Status PutArchive(std::string_view id_or_name, std::string_view path,
                                  const std::string& tar) = 0;

  // stdout and stderr interleaved as text (the engine's multiplexed frames undone). Their order
  // across the two streams is the engine's: Podman groups lines within the same instant by stream.
  // At most 64 MiB (RESOURCE_EXHAUSTED beyond): ask for a tail.
  virtual core::Result<std::string> Logs(std::string_view id_or_name,
                                         const LogOptions& options) = 0;
  // Follows the logs until `on_text` returns false or the container stops. `on_text` is called
  // only when text arrives, so a silent container holds the call (up to 24 h, then UNAVAILABLE);
  // to end a follow early, stop the container or wait for its next line.
  virtual core::Status FollowLogs(std::string_view id_or_name, const LogOptions& options,
                                  const std::function<bool(std::string_view)>& on_text) = 0;

  // Runs `argv` in the running container and waits for it to end, at most `timeout`
  // (UNAVAILABLE then; the command may still run). FAILED_PRECONDITION when the container
  // is not running, NOT_FOUND when it is gone. A command that fails is an OK result with its
  // exit code. Attached, not detached: Podman keeps a detached exec "Running" after it ended.
  virtual core::Result<ExecResult> Exec(std::string_view id_or_name,
                                        const std::vector<std::string>& argv,
                                        std::chrono::seconds timeout) = 0;
  // The bytes the container wrote to its own filesystem, outside its volumes (the writable layer:
  // the engine's SizeRw, which it computes by walking the layer, so not for every second).
  virtual core::Result<int64_t> WritableLayerBytes(std::string_view id_or_name) = 0;
  // The CPU time the container has used since it started, in nanoseconds (the stats API's
  // cpu_stats.cpu_usage.total_usage): two readings apart give its CPU use in between.
  virtual core::Result<uint64_t> CpuUsage(std::string_view id_or_name) = 0;

 protected:
  void Notice(const std::string& line) const {
    if (on_notice_) on_notice_(line);
  }

 private:
  std::function<void(const std::string&)> on_notice_;
};

// Undoes the Docker Engine API's multiplexed log framing: each frame is an 8-byte header (stream
// type: 0 stdin, 1 stdout, 2 stderr, 3 the engine's own error; 3 zero bytes; the payload length,
// big-endian uint32) and then the payload. A container with a TTY has no framing (`framed` false).
// Pieces may split a header or a payload anywhere (a followed log arrives as the network delivers
// it). Payload bytes are handed on as soon as they arrive. Exposed for its tests; not thread-safe.
class LogDemuxer {
 public:
  explicit LogDemuxer(bool framed) : framed_(framed) {}

  // Appends the stdout and stderr text in `piece` to `text`. Returns false once the stream is
  // malformed or the engine sent an error frame; error() says why, and later pieces are ignored.
  bool Feed(std::string_view piece, std::string& text);
  // True when the bytes so far ended exactly at a frame boundary (a cut stream does not).
  bool AtFrameBoundary() const { return !framed_ || (header_.empty() && payload_left_ == 0); }
  const std::string& error() const { return error_; }

 private:
  const bool framed_;
  std::string header_;  // the bytes of a header split across pieces, fewer than 8
  uint32_t payload_left_ = 0;
  int stream_ = 0;
  std::string engine_error_;  // the payload of a type-3 frame, collected until it ends
  std::string error_;
};

// The engine's time text as a time point: RFC 3339 with up to nanoseconds, "Z" (Docker) or a
// "+08:00" offset (Podman writes the host's zone). nullopt for Docker's zero time
// "0001-01-01T00:00:00Z" (never happened) and for text it cannot read: one odd field must not
// hide a container from the reconcile loop.
std::optional<core::TimePoint> ParseEngineTime(std::string_view text);

// Where an engine listens on this host, in the order the agent tries them: $DOCKER_HOST if it is
// unix://, Docker's socket, rootful Podman's, then the user's Podman socket. Empty when none
// exists.
std::string FindEngineSocket();

}  // namespace suanli::agent
