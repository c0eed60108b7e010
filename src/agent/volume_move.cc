#include "agent/volume_move.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

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

// Move ids are the server's "mv_" and hex; nothing else names a file here.
bool SafeMoveId(std::string_view id) {
  return id.size() > 3 && id.size() <= 64 && id.starts_with("mv_") &&
         id.substr(3).find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool SuanliVolume(std::string_view name) {
  return name.starts_with("suanli-pod_") || name.starts_with("suanli-vol_");
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
  const fs::path info_file = move_dir / (work.move_id + ".info");
  std::optional<Info> info;
  {
    core::MutexLock lock(export_mutex);
    info = ReadInfo(info_file);
    if (!info) {
      core::Result<std::string> dir = engine.VolumeDirectory(work.volume);
      if (!dir.ok()) {
        const int status = dir.status().code() == core::StatusCode::kNotFound ? 404 : 503;
        return Error(status, status == 404 ? "NOT_FOUND" : "UNAVAILABLE",
                     "volume " + work.volume + " on its node: " + dir.status().message());
      }
      std::error_code error;
      fs::create_directories(move_dir, error);
      RemoveOldArchives(move_dir);
      core::Result<ArchiveInfo> made = MakeVolumeArchive(*dir, archive);
      if (!made.ok()) return Error(503, "UNAVAILABLE", made.status().message());
      info = Info{*made, work.volume};
      if (!WriteWhole(info_file,
                      std::to_string(made->size) + " " + made->sha256 + " " + work.volume + "\n")) {
        return Error(503, "UNAVAILABLE", "cannot write " + info_file.string());
      }
    }
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

RelayAnswer RemoveVolumeHere(Engine& engine, const fs::path& move_dir, const RelayRequest& work) {
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
  const core::Status removed = engine.RemoveVolume(work.volume);
  if (!removed.ok() && removed.code() != core::StatusCode::kNotFound) {
    return Error(409, "FAILED_PRECONDITION", removed.message());
  }
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
