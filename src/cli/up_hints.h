// What `suanli up` prints once it is up: where the API is and the next commands to type, written so
// that each line works as pasted (the binary's own path when `suanli` on PATH is not this binary, a
// URL a client can reach rather than the 0.0.0.0 it listens on).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace suanli::cli {

// "http://HOST:PORT" for a client on this machine of a server listening on `host`: 127.0.0.1 for
// all IPv4 addresses ("0.0.0.0" or ""), [::1] for all IPv6 ones ("::", "[::]"), else `host` itself.
std::string ReachableUrl(std::string_view host, uint16_t port);

// Whether `host` is a wildcard that listens on every address of the machine.
bool ListensOnAllAddresses(std::string_view host);

// How to call this binary in the hints: "suanli" when the first `suanli` on `path_env` (a PATH
// value) is `self` (this binary), else `self`, single-quoted if it has characters a shell splits.
std::string ProgramName(std::string_view path_env, const std::filesystem::path& self);

struct UpHints {
  std::string program;  // ProgramName()
  std::string url;      // ReachableUrl()
  bool all_addresses = false;
  std::filesystem::path token_file;  // the admin's API token
  bool no_other_user = true;         // only the admin exists: suggest making the first user
};

// The lines `suanli up` prints, each ending in '\n'.
std::string UpHintsText(const UpHints& hints);

}  // namespace suanli::cli
