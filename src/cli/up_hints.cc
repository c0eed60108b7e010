#include "cli/up_hints.h"

#include <unistd.h>

#include <system_error>

namespace suanli::cli {

bool ListensOnAllAddresses(std::string_view host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

std::string ReachableUrl(std::string_view host, uint16_t port) {
  std::string reachable(host);
  if (host.empty() || host == "0.0.0.0") reachable = "127.0.0.1";
  if (host == "::" || host == "[::]") reachable = "[::1]";
  return "http://" + reachable + ":" + std::to_string(port);
}

std::string ProgramName(std::string_view path_env, const std::filesystem::path& self) {
  std::error_code error;
  const std::filesystem::path me = std::filesystem::weakly_canonical(self, error);
  size_t start = 0;
  while (start <= path_env.size()) {
    size_t end = path_env.find(':', start);
    if (end == std::string_view::npos) end = path_env.size();
    const std::string_view dir = path_env.substr(start, end - start);
    start = end + 1;
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / "suanli";
    if (::access(candidate.c_str(), X_OK) != 0 || std::filesystem::is_directory(candidate, error))
      continue;
    // The shell runs the first one it finds; only this binary makes "suanli" right.
    const std::filesystem::path found = std::filesystem::weakly_canonical(candidate, error);
    if (!error && found == me) return "suanli";
    break;
  }
  const std::string path = self.string();
  if (path.find_first_of(" \t\"'$`\\!*?;&|<>()[]{}#~") == std::string::npos) return path;
  std::string quoted = "'";
  for (char c : path) quoted += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string UpHintsText(const UpHints& hints) {
  const std::string& suanli = hints.program;
  const std::string token = hints.token_file.string();
  std::string text = "suanli is up: the API and console are at " + hints.url +
                     "/ (Ctrl-C stops both; pods keep running)\n";
  if (hints.all_addresses) {
    text +=
        "It listens on every address of this machine: other machines reach it at this "
        "machine's address, on the same port.\n";
  }
  text += "The admin's API token is in " + token + ". Next:\n";
  text += "  export SUANLI_URL=" + hints.url + " SUANLI_TOKEN=$(cat " + token + ")\n";
  if (hints.no_other_user) {
    text += "  " + suanli + " users create alice --credits 20   # prints alice's token\n";
    text += "  export SUANLI_TOKEN=<alice's token>\n";
  } else {
    text += "  " + suanli + " users list   # the users and their credits\n";
  }
  text += "  " + suanli + " pods create --template demo-http --gpu 4090 --wait\n";
  text += "  " + suanli + " pods logs <pod id>; " + suanli + " pods stop <pod id>; " + suanli +
          " billing usage\n";
  if (suanli != "suanli") {
    text += "(" + suanli + " is this binary: `suanli` on your PATH is not, or there is none)\n";
  }
  return text;
}

}  // namespace suanli::cli
