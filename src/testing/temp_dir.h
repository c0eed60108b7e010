// TempDir: a fresh folder for one test, removed with everything in it when the TempDir goes.
//
// The one place tests make temporary folders (scripts/lint.sh allows mkdtemp only in src/testing),
// so every test cleans up the same way. For tests and benchmarks only.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace suanli::testing {

// Not copyable: one owner removes the folder. Not thread-safe to destroy while in use.
class TempDir {
 public:
  // Creates <system temporary folder>/<prefix>-XXXXXX (mkdtemp: unique, mode 0700). A folder that
  // cannot be created is a broken test machine, so it is a SUANLI_CHECK, not a Status. The path
  // stays short enough for a Unix socket inside it under /tmp.
  explicit TempDir(std::string_view prefix = "suanli-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // `name` inside the folder (not created).
  std::filesystem::path File(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace suanli::testing
