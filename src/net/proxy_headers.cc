#include "net/proxy_headers.h"

#include <iterator>
#include <set>

namespace suanli::net {
namespace {

// Headers that describe one connection, not the message (RFC 9110 7.6.1): a proxy never passes
// them on.
constexpr std::string_view kHopByHopHeaders[] = {"connection",
                                                 "keep-alive",
                                                 "proxy-authenticate",
                                                 "proxy-authorization",
                                                 "proxy-connection",
                                                 "te",
                                                 "trailer",
                                                 "transfer-encoding",
                                                 "upgrade"};

}  // namespace

std::string LowerAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

Headers EndToEndHeaders(const Headers& headers, std::initializer_list<std::string_view> also_drop) {
  std::set<std::string, std::less<>> dropped(std::begin(kHopByHopHeaders),
                                             std::end(kHopByHopHeaders));
  dropped.insert(also_drop.begin(), also_drop.end());
  for (const auto& [name, value] : headers) {
    if (LowerAscii(name) != "connection") continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      std::string_view token = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) {
        token.remove_prefix(1);
      }
      while (!token.empty() && (token.back() == ' ' || token.back() == '\t'))
        token.remove_suffix(1);
      if (!token.empty()) dropped.insert(LowerAscii(token));
    }
  }
  Headers kept;
  for (const auto& [name, value] : headers) {
    std::string lower = LowerAscii(name);
    if (!dropped.contains(lower)) kept.emplace_back(std::move(lower), value);
  }
  return kept;
}

bool IsHeaderName(std::string_view name) {
  constexpr std::string_view kTokenPunctuation = "!#$%&'*+-.^_`|~";
  if (name.empty() || name.size() > 256) return false;
  for (char c : name) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && kTokenPunctuation.find(c) == std::string_view::npos) return false;
  }
  return true;
}

bool IsHeaderValue(std::string_view value) {
  return value.size() <= 8192 &&
         value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

namespace {

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Whether cookie path `path` only matches paths under `prefix` (RFC 6265 5.1.4: a path matches
// its own subpaths).
bool InsidePrefix(std::string_view path, std::string_view prefix) {
  return path.starts_with(prefix) || path == prefix.substr(0, prefix.size() - 1);
}

}  // namespace

std::optional<std::string> ConfinedSetCookie(std::string_view set_cookie,
                                             std::string_view path_prefix,
                                             std::initializer_list<std::string_view> reserved) {
  size_t semicolon = set_cookie.find(';');
  const std::string_view pair = Trimmed(set_cookie.substr(0, semicolon));
  const size_t equals = pair.find('=');
  if (equals == std::string_view::npos || Trimmed(pair.substr(0, equals)).empty()) {
    return std::nullopt;
  }
  const std::string_view name = Trimmed(pair.substr(0, equals));
  // Browsers match the prefixes without regard to case.
  if (LowerAscii(name.substr(0, 7)) == "__host-") return std::nullopt;
  for (std::string_view taken : reserved) {
    if (name == taken) return std::nullopt;
  }
  std::string confined(pair);
  bool has_path = false;
  while (semicolon != std::string_view::npos) {
    set_cookie.remove_prefix(semicolon + 1);
    semicolon = set_cookie.find(';');
    const std::string_view attribute = Trimmed(set_cookie.substr(0, semicolon));
    const size_t attribute_equals = attribute.find('=');
    const std::string key = LowerAscii(Trimmed(attribute.substr(0, attribute_equals)));
    const std::string_view value = attribute_equals == std::string_view::npos
                                       ? std::string_view()
                                       : Trimmed(attribute.substr(attribute_equals + 1));
    if (key.empty() || key == "domain") continue;
    // The last Path counts (RFC 6265 5.3 step 7): only the one kept is written.
    if (key == "path") {
      has_path = has_path || InsidePrefix(value, path_prefix);
      if (!InsidePrefix(value, path_prefix)) continue;
    }
    confined += "; ";
    confined += attribute;
  }
  if (!has_path) {
    confined += "; Path=";
    confined += path_prefix;
  }
  return confined;
}

}  // namespace suanli::net
