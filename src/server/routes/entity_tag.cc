#include "server/routes/entity_tag.h"

#include <fmt/format.h>

#include <functional>
#include <utility>

namespace suanli::server {

namespace {

// The body's hash: a change of any byte changes the tag. Not a defence against anyone (the tag
// only spares a poller the bytes of an answer it already has), so no cryptographic hash;
// libstdc++'s string hash (MurmurHash2, not randomized) reads 8 bytes a step, where FNV-1a's byte
// at a time cost a 120 KB list about a tenth of its answer time.
uint64_t BodyHash(std::string_view text) { return std::hash<std::string_view>()(text); }

}  // namespace

bool NamesEntityTag(const std::optional<std::string>& header, std::string_view tag) {
  if (!header) return false;
  std::string_view if_none_match = *header;
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    std::string_view item = if_none_match.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.starts_with("W/")) item.remove_prefix(2);
    if (item == tag || item == "*") return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

std::string EntityTag(uint64_t hash) { return fmt::format("\"{:016x}\"", hash); }

void AddEntityTag(const net::HttpRequest& request, net::HttpResponse& response) {
  AddEntityTag(request, response, EntityTag(BodyHash(response.body)));
}

void AddEntityTag(const net::HttpRequest& request, net::HttpResponse& response, std::string tag) {
  // Browsers keep the answer but ask again each time, with If-None-Match: the console's polls
  // then cost a 304 while nothing changed.
  response.headers.emplace_back("Cache-Control", "private, no-cache");
  if (NamesEntityTag(request.Header("if-none-match"), tag)) {
    response.status = 304;
    response.body.clear();
  }
  response.headers.emplace_back("ETag", std::move(tag));
}

}  // namespace suanli::server
