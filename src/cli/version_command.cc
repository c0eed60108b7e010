// suanli version (and suanli --version): the release from CMake's project() and, for a build from a
// git checkout, the commit it was configured at (CMakeLists.txt passes both to this file only).
#include <ostream>
#include <string>

#include "cli/command.h"

#ifndef SUANLI_VERSION
#define SUANLI_VERSION "unknown"
#endif
#ifndef SUANLI_GIT_COMMIT
#define SUANLI_GIT_COMMIT ""
#endif

namespace suanli::cli {

std::string VersionText() {
  std::string text = "suanli " SUANLI_VERSION;
  if (const std::string commit = SUANLI_GIT_COMMIT; !commit.empty()) {
    text += " (git " + commit + ")";
  }
  return text;
}

CommandRun DefineVersionCommand(CLI::App& /*command*/) {
  return [](CommandContext& context) {
    context.out << VersionText() << "\n";
    return core::Status::Ok();
  };
}

}  // namespace suanli::cli
