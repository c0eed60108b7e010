#include "cli/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace suanli::cli {

core::Result<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) return core::NotFoundError(path + ": no such file");
  if (std::filesystem::is_directory(status)) {
    return core::InvalidArgumentError(path + ": is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::InvalidArgumentError(path + ": cannot read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return core::InvalidArgumentError(path + ": read failed");
  std::string content = std::move(text).str();
  if (content.size() > max_bytes) {
    return core::InvalidArgumentError(path + ": larger than " + std::to_string(max_bytes) +
                                      " bytes; is it the right file?");
  }
  return content;
}

namespace {

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

core::Status WritePrivateFile(const std::string& path, const std::string& text) {
  const std::filesystem::path file(path);
  std::error_code error;
  std::filesystem::create_directories(file.parent_path(), error);
  if (error) {
    return core::InternalError("cannot create " + file.parent_path().string() + ": " +
                               error.message());
  }
  if (::chmod(file.parent_path().c_str(), 0700) != 0) {
    return core::InternalError("cannot chmod " + file.parent_path().string() + ": " + ErrnoText());
  }
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return core::InternalError("cannot write " + temporary + ": " + ErrnoText());
  bool written = ::fchmod(fd, 0600) == 0;  // an older file may have had a wider mode
  size_t done = 0;
  while (written && done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    written = n > 0;
    if (written) done += static_cast<size_t>(n);
  }
  written = written && ::fsync(fd) == 0;
  const std::string write_error = ErrnoText();
  ::close(fd);
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = written ? ErrnoText() : write_error;
    ::unlink(temporary.c_str());
    return core::InternalError("cannot write " + path + ": " + reason);
  }
  return core::Status::Ok();
}

}  // namespace suanli::cli
