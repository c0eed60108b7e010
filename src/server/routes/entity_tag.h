// Entity tags (ETag / If-None-Match) for the API's reads: a poller that already has an answer
// gets 304 and no body.
//
// Internal to the API (routes/*.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "net/http.h"

namespace suanli::server {

// A read's JSON text and its entity tag, made from what the answer shows (revisions, the time
// fields) rather than hashed from its bytes, so that a poller whose If-None-Match names the tag
// costs no body at all: `json` is then empty (NamesEntityTag said so before it was written).
struct TaggedJson {
  std::string json;
  std::string etag;  // quoted, as the ETag header carries it
};

// A successful GET's answer gets an ETag (a hash of its body); when the request's If-None-Match
// names it, the answer becomes 304 Not Modified with no body. Every JSON read has it, so a poller
// (the console, `--wait`) pays for the bytes of an answer only when it changed.
void AddEntityTag(const net::HttpRequest& request, net::HttpResponse& response);
// The same with a tag the handler made (TaggedJson).
void AddEntityTag(const net::HttpRequest& request, net::HttpResponse& response, std::string tag);
// Whether the request's If-None-Match ("\"a\", W/\"b\"" or "*") names `tag`.
bool NamesEntityTag(const std::optional<std::string>& if_none_match, std::string_view tag);
// `hash` as an entity tag: 16 hex digits, quoted.
std::string EntityTag(uint64_t hash);

}  // namespace suanli::server
