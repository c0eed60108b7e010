// RunCli: the whole `suanli` program, minus main(), so tests drive it in process.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace suanli::cli {

// `args` excludes the program name. Returns the process exit status: 0 on success, 2 for a usage
// error, else core::ExitCodeFor() of the failure. Errors are one line on `err`, starting "suanli:
// ".
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace suanli::cli
