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

}  // namespace suanli::net
