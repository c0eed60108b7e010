#include "agent/tar.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

namespace suanli::agent {
namespace {

using ArchivePtr = std::unique_ptr<archive, int (*)(archive*)>;
using EntryPtr = std::unique_ptr<archive_entry, void (*)(archive_entry*)>;

core::Status ArchiveError(archive* handle, std::string_view doing) {
  const char* reason = archive_error_string(handle);
  return core::InternalError(std::string(doing) + ": " + (reason ? reason : "libarchive failed"));
}

la_ssize_t AppendTo(archive* /*handle*/, void* out, const void* bytes, size_t size) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(bytes), size);
  return static_cast<la_ssize_t>(size);
}

bool SafePath(const std::string& path) {
  if (path.empty() || path.front() == '/') return false;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part(path.data() + start, end - start);
    if (part.empty() || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

core::Result<std::string> MakeTar(const std::vector<TarEntry>& entries) {
  for (const TarEntry& entry : entries) {
    if (!SafePath(entry.path)) {
      return core::InvalidArgumentError("tar entry path '" + entry.path +
                                        "' must be relative, without empty or '..' parts");
    }
  }
  std::string out;
  ArchivePtr writer(archive_write_new(), archive_write_free);
  if (!writer) return core::InternalError("libarchive could not allocate a writer");
  if (archive_write_set_format_ustar(writer.get()) != ARCHIVE_OK ||
      archive_write_add_filter_none(writer.get()) != ARCHIVE_OK ||
      archive_write_set_bytes_in_last_block(writer.get(), 1) != ARCHIVE_OK ||
      archive_write_open(writer.get(), &out, nullptr, AppendTo, nullptr) != ARCHIVE_OK) {
    return ArchiveError(writer.get(), "starting a tar archive");
  }
  for (const TarEntry& entry : entries) {
    EntryPtr header(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(header.get(), entry.path.c_str());
    archive_entry_set_filetype(header.get(), entry.directory ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(header.get(), static_cast<mode_t>(entry.mode & 07777));
    archive_entry_set_uid(header.get(), entry.uid);
    archive_entry_set_gid(header.get(), entry.gid);
    archive_entry_set_size(header.get(),
                           entry.directory ? 0 : static_cast<la_int64_t>(entry.content.size()));
    if (archive_write_header(writer.get(), header.get()) != ARCHIVE_OK) {
      return ArchiveError(writer.get(), "adding " + entry.path + " to a tar archive");
    }
    if (!entry.directory && !entry.content.empty() &&
        archive_write_data(writer.get(), entry.content.data(), entry.content.size()) !=
            static_cast<la_ssize_t>(entry.content.size())) {
      return ArchiveError(writer.get(), "writing " + entry.path + " into a tar archive");
    }
  }
  if (archive_write_close(writer.get()) != ARCHIVE_OK) {
    return ArchiveError(writer.get(), "finishing a tar archive");
  }
  return out;
}

core::Result<std::vector<TarEntry>> ReadTar(const std::string& bytes) {
  ArchivePtr reader(archive_read_new(), archive_read_free);
  if (!reader) return core::InternalError("libarchive could not allocate a reader");
  if (archive_read_support_format_tar(reader.get()) != ARCHIVE_OK ||
      archive_read_open_memory(reader.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    return ArchiveError(reader.get(), "opening a tar archive");
  }
  std::vector<TarEntry> entries;
  archive_entry* header = nullptr;
  int status = ARCHIVE_OK;
  while ((status = archive_read_next_header(reader.get(), &header)) == ARCHIVE_OK) {
    TarEntry entry;
    entry.path = archive_entry_pathname(header);
    if (!entry.path.empty() && entry.path.back() == '/') entry.path.pop_back();
    entry.directory = archive_entry_filetype(header) == AE_IFDIR;
    entry.mode = static_cast<int>(archive_entry_perm(header));
    entry.uid = static_cast<int>(archive_entry_uid(header));
    entry.gid = static_cast<int>(archive_entry_gid(header));
    char buffer[16 * 1024];
    la_ssize_t read = 0;
    while ((read = archive_read_data(reader.get(), buffer, sizeof buffer)) > 0) {
      entry.content.append(buffer, static_cast<size_t>(read));
    }
    if (read < 0) return ArchiveError(reader.get(), "reading " + entry.path);
    entries.push_back(std::move(entry));
  }
  if (status != ARCHIVE_EOF) return ArchiveError(reader.get(), "reading a tar archive");
  return entries;
}

}  // namespace suanli::agent
