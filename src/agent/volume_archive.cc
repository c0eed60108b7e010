#include "agent/volume_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <system_error>

namespace suanli::agent {
namespace {

namespace fs = std::filesystem;
using ArchivePtr = std::unique_ptr<archive, int (*)(archive*)>;

core::Status ArchiveError(archive* handle, const std::string& doing) {
  const char* reason = archive_error_string(handle);
  return core::UnavailableError(doing + ": " + (reason ? reason : "libarchive failed"));
}

std::string Hex(const unsigned char* bytes, unsigned size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < size; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

// A SHA-256 over bytes as they pass.
class Sha256 {
 public:
  Sha256() : context_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr);
  }
  void Update(const void* bytes, size_t size) { EVP_DigestUpdate(context_.get(), bytes, size); }
  std::string Hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned size = 0;
    EVP_DigestFinal_ex(context_.get(), digest.data(), &size);
    return agent::Hex(digest.data(), size);
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context_;
};

// Where libarchive writes the archive: a file, hashed and counted as it is written.
struct Sink {
  int fd = -1;
  Sha256 sha;
  int64_t size = 0;
};

la_ssize_t WriteToSink(archive* handle, void* data, const void* bytes, size_t size) {
  auto* sink = static_cast<Sink*>(data);
  const char* next = static_cast<const char*>(bytes);
  size_t left = size;
  while (left > 0) {
    const ssize_t written = ::write(sink->fd, next, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      archive_set_error(handle, errno, "cannot write the archive");
      return -1;
    }
    next += written;
    left -= static_cast<size_t>(written);
  }
  sink->sha.Update(bytes, size);
  sink->size += static_cast<int64_t>(size);
  return static_cast<la_ssize_t>(size);
}

// True for a relative path with no empty, "." or ".." part.
bool SafeEntry(std::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  size_t start = 0;
  while (start < path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

core::Result<ArchiveInfo> MakeVolumeArchive(const fs::path& dir, const fs::path& archive_path) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    return core::NotFoundError("no volume directory " + dir.string());
  }
  const fs::path partial = archive_path.string() + ".partial";
  Sink sink;
  sink.fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (sink.fd < 0) {
    return core::UnavailableError("cannot create " + partial.string() + ": " +
                                  std::generic_category().message(errno));
  }
  struct CloseFd {
    int fd;
    ~CloseFd() { ::close(fd); }
  } close_fd{sink.fd};
  ArchivePtr writer(archive_write_new(), archive_write_free);
  ArchivePtr disk(archive_read_disk_new(), archive_read_free);
  archive_write_set_format_pax_restricted(writer.get());
  archive_write_set_bytes_in_last_block(writer.get(), 1);  // no padding after the end
  if (archive_write_open(writer.get(), &sink, nullptr, WriteToSink, nullptr) != ARCHIVE_OK) {
    return ArchiveError(writer.get(), "cannot start the archive");
  }
  archive_read_disk_set_standard_lookup(disk.get());
  archive_read_disk_set_symlink_physical(disk.get());  // a symlink is archived, never followed
  if (archive_read_disk_open(disk.get(), dir.c_str()) != ARCHIVE_OK) {
    return ArchiveError(disk.get(), "cannot read " + dir.string());
  }
  const std::string prefix = dir.string() + (dir.string().ends_with('/') ? "" : "/");
  std::array<char, 1 << 16> buffer{};
  for (;;) {
    std::unique_ptr<archive_entry, void (*)(archive_entry*)> entry(archive_entry_new(),
                                                                   archive_entry_free);
    const int read = archive_read_next_header2(disk.get(), entry.get());
    if (read == ARCHIVE_EOF) break;
    if (read != ARCHIVE_OK && read != ARCHIVE_WARN) {
      return ArchiveError(disk.get(), "cannot walk " + dir.string());
    }
    archive_read_disk_descend(disk.get());
    const std::string full = archive_entry_pathname(entry.get());
    if (!full.starts_with(prefix)) continue;  // the directory itself
    archive_entry_copy_pathname(entry.get(), full.substr(prefix.size()).c_str());
    if (archive_write_header(writer.get(), entry.get()) != ARCHIVE_OK) {
      return ArchiveError(writer.get(), "cannot archive " + full);
    }
    if (archive_entry_filetype(entry.get()) != AE_IFREG || archive_entry_size(entry.get()) == 0) {
      continue;
    }
    for (;;) {
      const la_ssize_t got = archive_read_data(disk.get(), buffer.data(), buffer.size());
      if (got == 0) break;
      if (got < 0) return ArchiveError(disk.get(), "cannot read " + full);
      if (archive_write_data(writer.get(), buffer.data(), static_cast<size_t>(got)) < 0) {
        return ArchiveError(writer.get(), "cannot archive " + full);
      }
    }
  }
  if (archive_write_close(writer.get()) != ARCHIVE_OK) {
    return ArchiveError(writer.get(), "cannot finish the archive");
  }
  if (::fsync(sink.fd) != 0) {
    return core::UnavailableError("cannot sync " + partial.string());
  }
  fs::rename(partial, archive_path, error);
  if (error) {
    return core::UnavailableError("cannot rename " + partial.string() + ": " + error.message());
  }
  return ArchiveInfo{sink.size, sink.sha.Hex()};
}

core::Status UnpackVolumeArchive(const fs::path& archive_path, const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  for (const fs::directory_entry& child : fs::directory_iterator(dir, error)) {
    fs::remove_all(child.path(), error);
    if (error)
      return core::UnavailableError("cannot empty " + dir.string() + ": " + error.message());
  }
  if (error) return core::UnavailableError("cannot list " + dir.string() + ": " + error.message());
  ArchivePtr reader(archive_read_new(), archive_read_free);
  ArchivePtr writer(archive_write_disk_new(), archive_write_free);
  archive_read_support_format_tar(reader.get());
  archive_write_disk_set_options(
      writer.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_OWNER |
                        ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  // Entries are checked to be relative (SafeEntry) and then put below `dir`, an absolute path:
  // libarchive's own check for absolute paths would refuse them all.
  archive_write_disk_set_standard_lookup(writer.get());
  if (archive_read_open_filename(reader.get(), archive_path.c_str(), 1 << 16) != ARCHIVE_OK) {
    return ArchiveError(reader.get(), "cannot open " + archive_path.string());
  }
  const std::string prefix = dir.string() + (dir.string().ends_with('/') ? "" : "/");
  for (;;) {
    archive_entry* entry = nullptr;
    const int read = archive_read_next_header(reader.get(), &entry);
    if (read == ARCHIVE_EOF) break;
    if (read != ARCHIVE_OK && read != ARCHIVE_WARN) {
      return ArchiveError(reader.get(), "cannot read " + archive_path.string());
    }
    const std::string path = archive_entry_pathname(entry);
    const char* link = archive_entry_hardlink(entry);
    if (!SafeEntry(path) || (link != nullptr && !SafeEntry(link))) {
      return core::InvalidArgumentError("the archive's entry '" + path +
                                        "' leaves the volume; refused");
    }
    archive_entry_copy_pathname(entry, (prefix + path).c_str());
    if (link != nullptr) archive_entry_copy_hardlink(entry, (prefix + link).c_str());
    if (archive_write_header(writer.get(), entry) != ARCHIVE_OK) {
      const std::string message = archive_error_string(writer.get());
      if (message.find("symlink") != std::string::npos || message.find("..") != std::string::npos) {
        return core::InvalidArgumentError("the archive's entry '" + path + "': " + message);
      }
      return ArchiveError(writer.get(), "cannot unpack " + path);
    }
    const void* block = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    for (;;) {
      const int got = archive_read_data_block(reader.get(), &block, &size, &offset);
      if (got == ARCHIVE_EOF) break;
      if (got != ARCHIVE_OK) return ArchiveError(reader.get(), "cannot read " + path);
      if (archive_write_data_block(writer.get(), block, size, offset) != ARCHIVE_OK) {
        return ArchiveError(writer.get(), "cannot write " + path);
      }
    }
    if (archive_write_finish_entry(writer.get()) != ARCHIVE_OK) {
      return ArchiveError(writer.get(), "cannot finish " + path);
    }
  }
  if (archive_write_close(writer.get()) != ARCHIVE_OK) {
    return ArchiveError(writer.get(), "cannot finish unpacking into " + dir.string());
  }
  return core::Status::Ok();
}

core::Result<ArchiveInfo> DigestFile(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return core::NotFoundError("cannot open " + file.string() + ": " +
                               std::generic_category().message(errno));
  }
  struct CloseFd {
    int fd;
    ~CloseFd() { ::close(fd); }
  } close_fd{fd};
  Sha256 sha;
  int64_t size = 0;
  std::array<char, 1 << 16> buffer{};
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return core::UnavailableError("cannot read " + file.string());
    }
    sha.Update(buffer.data(), static_cast<size_t>(got));
    size += got;
  }
  return ArchiveInfo{size, sha.Hex()};
}

}  // namespace suanli::agent
