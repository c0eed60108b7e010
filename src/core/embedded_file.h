// A file compiled into the binary by suanli_embed_folder (cmake/suanli.cmake), so the binary
// serves it from any folder: its path under the embedded folder and its bytes.
#pragma once

#include <string_view>

namespace suanli::core {

struct EmbeddedFile {
  std::string_view path;   // relative to the folder, with '/': "pages/pods.js"
  std::string_view bytes;  // the file as it was at build time
};

}  // namespace suanli::core
