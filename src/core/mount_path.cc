#include "core/mount_path.h"

#include <array>
#include <string>

namespace suanli::core {
namespace {

// The directories an image or the runtime owns: a volume over them, or below them, would break
// the container or reach the kernel's interfaces. /lib and its variants (/lib32, /lib64,
// /libx32) are refused too. /var/lib and /root stay allowed: images keep data there
// (/var/lib/postgresql) and people keep their home.
constexpr std::array<std::string_view, 10> kSystemDirectories = {
    "/proc", "/sys", "/dev", "/etc", "/bin", "/sbin", "/usr", "/boot", "/run", "/var/run"};

bool IsUnder(std::string_view path, std::string_view directory) {
  return path.starts_with(directory) &&
         (path.size() == directory.size() || path[directory.size()] == '/');
}

}  // namespace

Status CheckMountPath(std::string_view path, std::string_view field) {
  const std::string quoted = std::string(field) + " '" + std::string(path) + "'";
  const std::string fix = "; use a path of your own like /workspace or /data";
  if (path.empty() || path.front() != '/') {
    return InvalidArgumentError(quoted + " must be an absolute path" + fix);
  }
  if (path.size() > kMaxMountPathLength) {
    return InvalidArgumentError(std::string(field) + " is " + std::to_string(path.size()) +
                                " bytes; at most " + std::to_string(kMaxMountPathLength) +
                                " are allowed");
  }
  for (char c : path) {
    if (c == ':' || c == ',') {
      return InvalidArgumentError(quoted + " must not contain '" + std::string(1, c) +
                                  "' (the engine reads it as a mount option)" + fix);
    }
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\') {
      return InvalidArgumentError(quoted + " must not contain control characters or '\\'" + fix);
    }
  }
  if (path == "/") return InvalidArgumentError(quoted + " would hide the whole image" + fix);
  // Segments between slashes: none empty ("//", a trailing '/'), none "." or "..", so that the
  // path means what it says and cannot climb into a system directory.
  std::string_view rest = path.substr(1);
  while (true) {
    const size_t slash = rest.find('/');
    const std::string_view segment = rest.substr(0, slash);
    if (segment.empty() || segment == "." || segment == "..") {
      return InvalidArgumentError(quoted + " must be a clean path: no empty segment, '.' or '..'" +
                                  fix);
    }
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  const std::string_view first = path.substr(0, path.find('/', 1));
  const bool lib = first.starts_with("/lib") &&
                   first.find_first_not_of("0123456789x", 4) == std::string_view::npos;
  for (std::string_view directory : kSystemDirectories) {
    if (IsUnder(path, directory) || lib) {
      return InvalidArgumentError(quoted + " is in a system directory (" +
                                  std::string(lib ? first : directory) +
                                  ") that the image or the runtime needs" + fix);
    }
  }
  return Status::Ok();
}

}  // namespace suanli::core
