#include "testing/temp_dir.h"

#include <stdlib.h>

#include <system_error>

#include "core/check.h"

namespace suanli::testing {

TempDir::TempDir(std::string_view prefix) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
  SUANLI_CHECK(::mkdtemp(pattern.data()) != nullptr, "cannot create a temporary folder");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace suanli::testing
