// RunCli: the whole `suanli` program, minus main(), so tests drive it in process.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/api_client.h"

namespace suanli::cli {

// `args` excludes the program name. Returns the process exit status: 0 on success, 2 for a usage
// error, else core::ExitCodeFor() of the failure. Errors are one line on `err`, starting "suanli:
// ".
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The same, with the environment, HTTP connections, clock and sleep of API commands given, so
// tests run them against a fake server.
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
           const ApiEnvironment& api_env);

}  // namespace suanli::cli
