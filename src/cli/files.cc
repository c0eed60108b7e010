#include "cli/files.h"

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

}  // namespace suanli::cli
