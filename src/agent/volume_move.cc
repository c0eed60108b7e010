#include "agent/volume_move.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>
#include <vector>

#include "agent/volume_archive.h"
#include "core/mutex.h"
#include "net/http.h"
#include "net/http_client.h"
#include "net/proxy_headers.h"

namespace suanli::agent {
namespace {

namespace fs = std::filesystem;
using wire::RelayAnswer;
using wire::RelayRequest;

// Archives older than this are removed when a new one is made (a move that never finished).
constexpr auto kArchiveLifetime = std::chrono::hours(24);

// One archive made at a time on this node: two requests of one move must not both make it, and
// a few large tars at once would only slow each other on the same disk.
core::Mutex export_mutex;

RelayAnswer Error(int status, std::string_view code, const std::string& message) {
  net::HttpResponse error = net::ErrorResponse(status, code, message);
  return {status, {{"Content-Type", error.content_type}}, std::move(error.body)};
}

// Move and snapshot ids are the server's "mv_" or "snap_" and hex; nothing else names a file here.
bool SafeId(std::string_view id, std::string_view prefix) {
  return id.size() > prefix.size() && id.size() <= 64 && id.starts_with(prefix) &&
         id.substr(prefix.size()).find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool SafeMoveId(std::string_view id) { return SafeId(id, "mv_"); }
bool SafeSnapshotId(std::string_view id) { return SafeId(id, "snap_"); }

// A name the server gave, also used as a file name here: no '/' may take it elsewhere.
bool SuanliVolume(std::string_view name) {
  return (name.starts_with("suanli-pod_") || name.starts_with("suanli-vol_")) &&
         name.find('/') == std::string_view::npos;
}

bool WriteWhole(const fs::path& file, const std::string& text) {
  const fs::path partial = file.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << text;
    if (!out.flush()) return false;
  }
  std::error_code error;
  fs::rename(partial, file, error);
  return !error;
}

std::string ReadWhole(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "<size> <sha256> <volume>", the .info beside a source's archive.
struct Info {
  ArchiveInfo archive;
  std::string volume;
};

std::optional<Info> ReadInfo(const fs::path& file) {
  std::istringstream in(ReadWhole(file));
  Info info;
  if (!(in >> info.archive.size >> info.archive.sha256 >> info.volume)) return std::nullopt;
  return info;
}

std::optional<std::string> HeaderOf(const net::HttpResponse& response, std::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (net::LowerAscii(key) == net::LowerAscii(name)) return value;
  }
  return std::nullopt;
}

RelayAnswer ErrorOf(const core::Status& status) {
  switch (status.code()) {
    case core::StatusCode::kNotFound:
      return Error(404, "NOT_FOUND", status.message());
    case core::StatusCode::kFailedPrecondition:
      return Error(409, "FAILED_PRECONDITION", status.message());
    default:
      return Error(503, "UNAVAILABLE", status.message());
  }
}

// The archive `name`.tar in `dir` of engine volume `volume` with its .info, made now unless an
// earlier request made it (then it is read back: every request for it sees the same bytes).
// NOT_FOUND when the volume is not on this node. REQUIRES: export_mutex held.
core::Result<Info> ArchiveOnce(Engine& engine, const fs::path& dir, const std::string& name,
                               const std::string& volume) {
  const fs::path info_file = dir / (name + ".info");
  if (std::optional<Info> info = ReadInfo(info_file)) return *info;
  core::Result<std::string> volume_dir = engine.VolumeDirectory(volume);
  if (!volume_dir.ok()) {
    return core::Status(volume_dir.status().code(),
                        "volume " + volume + " on its node: " + volume_dir.status().message());
  }
  std::error_code error;
  fs::create_directories(dir, error);
  core::Result<ArchiveInfo> made = MakeVolumeArchive(*volume_dir, dir / (name + ".tar"));
  if (!made.ok()) return core::UnavailableError(made.status().message());
  if (!WriteWhole(info_file,
                  std::to_string(made->size) + " " + made->sha256 + " " + volume + "\n")) {
    return core::UnavailableError("cannot write " + info_file.string());
  }
  return Info{*made, volume};
}

void RemoveOldArchives(const fs::path& dir) {
  std::error_code error;
  const auto now = fs::file_time_type::clock::now();
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (now - entry.last_write_time(error) > kArchiveLifetime) fs::remove(entry.path(), error);
  }
}

}  // namespace

RelayAnswer ServeVolumeArchive(Engine& engine, const fs::path& move_dir, const RelayRequest& work) {
  if (!SafeMoveId(work.move_id) || !SuanliVolume(work.volume)) {
    return Error(400, "INVALID_ARGUMENT", "not a move of a suanli volume: " + work.move_id);
  }
  const fs::path archive = move_dir / (work.move_id + ".tar");
  std::optional<Info> info;
  {
    core::MutexLock lock(export_mutex);
    RemoveOldArchives(move_dir);
    core::Result<Info> made = ArchiveOnce(engine, move_dir, work.move_id, work.volume);
    if (!made.ok()) return ErrorOf(made.status());
    info = *made;
  }
  if (work.offset > info->archive.size) {
    return Error(416, "OUT_OF_RANGE",
                 "offset " + std::to_string(work.offset) + " is past the archive's " +
                     std::to_string(info->archive.size) + " bytes");
  }
  const int64_t length = std::min(work.length, info->archive.size - work.offset);
  std::string bytes(static_cast<size_t>(length), '\0');
  const int fd = ::open(archive.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(503, "UNAVAILABLE", "cannot open " + archive.string());
  int64_t done = 0;
  while (done < length) {
    const ssize_t got = ::pread(fd, bytes.data() + done, static_cast<size_t>(length - done),
                                static_cast<off_t>(work.offset + done));
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      ::close(fd);
      return Error(503, "UNAVAILABLE", "cannot read " + archive.string());
    }
    done += got;
  }
  ::close(fd);
  return {200,
          {{"Content-Type", "application/x-tar"},
           {std::string(wire::kArchiveSizeHeader), std::to_string(info->archive.size)},
           {std::string(wire::kArchiveSha256Header), info->archive.sha256}},
          std::move(bytes)};
}

RelayAnswer RemoveVolumeHere(Engine& engine, const fs::path& move_dir, const fs::path& shared_dir,
                             const RelayRequest& work) {
  if (!SuanliVolume(work.volume)) {
    return Error(400, "INVALID_ARGUMENT", "not a suanli volume: " + work.volume);
  }
  {
    core::MutexLock lock(export_mutex);
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(move_dir, error)) {
      if (entry.path().extension() != ".info") continue;
      const std::optional<Info> info = ReadInfo(entry.path());
      if (!info || info->volume != work.volume) continue;
      fs::path archive = entry.path();
      fs::remove(archive.replace_extension(".tar"), error);
      fs::remove(entry.path(), error);
    }
  }
  // A volume on the shared backend is a directory there (named as the engine volume would be);
  // the server asks a node that has the backend.
  if (!shared_dir.empty()) {
    std::error_code error;
    fs::remove_all(shared_dir / work.volume, error);
    if (error) return Error(409, "FAILED_PRECONDITION", error.message());
  }
  const core::Status removed = engine.RemoveVolume(work.volume);
  if (!removed.ok() && removed.code() != core::StatusCode::kNotFound) {
    return Error(409, "FAILED_PRECONDITION", removed.message());
  }
  return {204, {}, ""};
}

BackgroundJobs::~BackgroundJobs() {
  std::vector<std::thread> running;
  {
    core::MutexLock lock(mutex_);
    for (auto& [key, job] : jobs_) running.push_back(std::move(job->thread));
  }
  for (std::thread& thread : running) {
    if (thread.joinable()) thread.join();
  }
}

RelayAnswer BackgroundJobs::RunOrAsk(const std::string& key,
                                     std::function<wire::RelayAnswer()> work) {
  const RelayAnswer accepted{202, {}, ""};
  core::MutexLock lock(mutex_);
  if (const auto found = jobs_.find(key); found != jobs_.end()) {
    if (!found->second->done) return accepted;
    found->second->thread.join();
    RelayAnswer answer = std::move(found->second->answer);
    jobs_.erase(found);
    return answer;
  }
  Job* job = jobs_.emplace(key, std::make_unique<Job>()).first->second.get();
  // The job stores its answer under the lock, which is held until its thread is recorded.
  job->thread = std::thread([this, job, work = std::move(work)] {
    RelayAnswer answer = work();
    core::MutexLock done(mutex_);
    job->answer = std::move(answer);
    job->done = true;
  });
  return accepted;
}

RelayAnswer SnapshotVolumeHere(Engine& engine, const fs::path& snapshot_dir,
                               const RelayRequest& work) {
  if (!SafeSnapshotId(work.snapshot) || !SuanliVolume(work.volume)) {
    return Error(400, "INVALID_ARGUMENT", "not a snapshot of a suanli volume: " + work.snapshot);
  }
  core::MutexLock lock(export_mutex);
  core::Result<Info> made = ArchiveOnce(engine, snapshot_dir, work.snapshot, work.volume);
  if (!made.ok()) return ErrorOf(made.status());
  return {200,
          {{std::string(wire::kArchiveSizeHeader), std::to_string(made->archive.size)},
           {std::string(wire::kArchiveSha256Header), made->archive.sha256}},
          ""};
}

RelayAnswer RestoreSnapshotHere(Engine& engine, const fs::path& snapshot_dir,
                                const RelayRequest& work) {
  if (!SafeSnapshotId(work.snapshot) || !work.volume.starts_with("suanli-vol_")) {
    return Error(400, "INVALID_ARGUMENT",
                 "not a snapshot restored into a suanli volume: " + work.snapshot);
  }
  // One restore at a time: a retried request must not unpack into a volume a first one fills.
  static core::Mutex restore_mutex;
  core::MutexLock lock(restore_mutex);
  const fs::path archive = snapshot_dir / (work.snapshot + ".tar");
  const std::optional<Info> info = ReadInfo(snapshot_dir / (work.snapshot + ".info"));
  if (!info) return Error(404, "NOT_FOUND", "no snapshot " + work.snapshot + " on this node");
  // The archive must be the one the server recorded, byte for byte: a disk that rotted or a
  // file someone replaced must not become a user's data.
  core::Result<ArchiveInfo> digest = DigestFile(archive);
  if (!digest.ok()) return ErrorOf(digest.status());
  if (digest->sha256 != work.sha256 || digest->sha256 != info->archive.sha256) {
    return Error(409, "FAILED_PRECONDITION",
                 "snapshot " + work.snapshot + "'s archive on this node has SHA-256 " +
                     digest->sha256 + ", not the " + work.sha256 + " recorded when it was made");
  }
  if (core::Status created = engine.CreateVolume(work.volume); !created.ok()) {
    return ErrorOf(created);
  }
  core::Result<std::string> dir = engine.VolumeDirectory(work.volume);
  if (!dir.ok()) return ErrorOf(dir.status());
  if (core::Status unpacked = UnpackVolumeArchive(archive, *dir); !unpacked.ok()) {
    return ErrorOf(unpacked);
  }
  return {204, {}, ""};
}

RelayAnswer RemoveSnapshotHere(const fs::path& snapshot_dir, const RelayRequest& work) {
  if (!SafeSnapshotId(work.snapshot)) {
    return Error(400, "INVALID_ARGUMENT", "not a suanli snapshot: " + work.snapshot);
  }
  core::MutexLock lock(export_mutex);
  std::error_code error;
  // The .info first: without it the archive is never taken for a whole snapshot.
  fs::remove(snapshot_dir / (work.snapshot + ".info"), error);
  fs::remove(snapshot_dir / (work.snapshot + ".tar"), error);
  if (error) return Error(503, "UNAVAILABLE", "cannot remove snapshot " + work.snapshot);
  return {204, {}, ""};
}

core::Result<wire::MoveProgress> FetchVolume(Engine& engine, core::Clock& clock,
                                             const FetchOptions& options,
                                             const core::VolumeMove& move) {
  if (!SafeMoveId(move.id) || !SuanliVolume(move.volume)) {
    return core::InvalidArgumentError("not a move of a suanli volume: " + move.id);
  }
  std::error_code error;
  fs::create_directories(options.move_dir, error);
  const fs::path part = options.move_dir / (move.id + ".part");
  const fs::path meta = options.move_dir / (move.id + ".meta");
  // "<began, ms since the epoch> <restarts> <sha256 or ->": what the fetch knew before a restart.
  int64_t began_ms = 0;
  int restarts = 0;
  std::string sha = "-";
  {
    std::istringstream in(ReadWhole(meta));
    if (!(in >> began_ms >> restarts >> sha)) {
      began_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now().time_since_epoch())
              .count();
      restarts = 0;
      sha = "-";
      fs::remove(part, error);  // a part file without its meta is of unknown origin
    }
  }
  const auto save_meta = [&] {
    return WriteWhole(meta,
                      std::to_string(began_ms) + " " + std::to_string(restarts) + " " + sha + "\n");
  };
  if (!save_meta()) return core::UnavailableError("cannot write " + meta.string());
  wire::MoveProgress progress;
  progress.move_id = move.id;
  const auto elapsed = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now().time_since_epoch())
               .count() -
           began_ms;
  };
  core::Result<std::unique_ptr<net::HttpClient>> client =
      net::HttpClient::Create(options.server_url, {std::chrono::seconds(60)});
  if (!client.ok()) return client.status();
  for (;;) {
    int64_t offset = fs::exists(part, error) ? static_cast<int64_t>(fs::file_size(part, error)) : 0;
    int64_t size = -1;
    while (size < 0 || offset < size) {
      if (options.stopping()) return core::UnavailableError("the agent is stopping");
      const net::Headers auth = {{"Authorization", "Bearer " + options.node_token()}};
      core::Result<net::HttpResponse> got = (*client)->Send(
          "GET",
          "/v1/agent/moves/" + move.id + "/archive?offset=" + std::to_string(offset) +
              "&length=" + std::to_string(options.chunk_bytes),
          "", auth);
      if (!got.ok() || got->status >= 500) {
        std::this_thread::sleep_for(options.retry_after);  // the source or the server is away
        continue;
      }
      if (got->status == 404) {
        return core::NotFoundError("move " + move.id + ": " + got->body.substr(0, 300));
      }
      if (got->status == 416) {  // the part file is longer than the archive: begin again
        fs::remove(part, error);
        offset = 0;
        continue;
      }
      if (got->status != 200) {
        return core::InternalError("move " + move.id + ": HTTP " + std::to_string(got->status) +
                                   " " + got->body.substr(0, 300));
      }
      const std::optional<std::string> size_text = HeaderOf(*got, wire::kArchiveSizeHeader);
      const std::optional<std::string> sha_text = HeaderOf(*got, wire::kArchiveSha256Header);
      const char* size_end = size_text ? size_text->data() + size_text->size() : nullptr;
      if (!size_text || !sha_text || sha_text->size() != 64 ||
          std::from_chars(size_text->data(), size_end, size).ptr != size_end || size < 0) {
        return core::InternalError("move " + move.id +
                                   ": the archive's size or checksum is missing or malformed");
      }
      if (sha != *sha_text) {
        // Another archive than the one the part file began (the source made it again): restart.
        if (sha != "-" && offset > 0) ++restarts;
        sha = *sha_text;
        if (!save_meta()) return core::UnavailableError("cannot write " + meta.string());
        if (offset > 0) {
          fs::remove(part, error);
          offset = 0;
          continue;
        }
      }
      if (got->body.empty() && offset < size) {
        return core::InternalError("move " + move.id + ": the source sent no bytes at " +
                                   std::to_string(offset));
      }
      const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fd < 0) return core::UnavailableError("cannot write " + part.string());
      size_t written = 0;
      while (written < got->body.size()) {
        const ssize_t put = ::write(fd, got->body.data() + written, got->body.size() - written);
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) break;
        written += static_cast<size_t>(put);
      }
      ::close(fd);
      if (written < got->body.size())
        return core::UnavailableError("cannot write " + part.string());
      offset += static_cast<int64_t>(written);
      progress.bytes = offset;
      progress.total_bytes = size;
      progress.elapsed_ms = elapsed();
      progress.restarts = restarts;
      if (options.progress) options.progress(progress);
    }
    core::Result<ArchiveInfo> digest = DigestFile(part);
    if (!digest.ok()) return digest.status();
    if (digest->sha256 == sha && digest->size == size) break;
    fs::remove(part, error);
    if (++restarts > 3) {
      return core::InternalError("move " + move.id + ": the archive's checksum did not match " +
                                 std::to_string(restarts) + " times");
    }
    if (!save_meta()) return core::UnavailableError("cannot write " + meta.string());
  }
  SUANLI_RETURN_IF_ERROR(engine.CreateVolume(move.volume));
  core::Result<std::string> dir = engine.VolumeDirectory(move.volume);
  if (!dir.ok()) return dir.status();
  SUANLI_RETURN_IF_ERROR(UnpackVolumeArchive(part, *dir));
  progress.total_bytes = static_cast<int64_t>(fs::file_size(part, error));
  progress.bytes = progress.total_bytes;
  progress.elapsed_ms = elapsed();
  progress.restarts = restarts;
  progress.sha256 = sha;
  progress.done = true;
  fs::remove(part, error);
  fs::remove(meta, error);
  return progress;
}

}  // namespace suanli::agent
