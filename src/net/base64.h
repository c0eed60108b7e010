// Base64 (RFC 4648, with padding, no line breaks), for bytes carried inside JSON: the bodies that
// the relay moves between a user, the server and a node's agent.
//
// On OpenSSL's EVP_EncodeBlock / EVP_DecodeBlock (already a dependency) rather than our own tables.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace suanli::net {

std::string Base64Encode(std::string_view bytes);

// INVALID_ARGUMENT for text that is not base64 (a wrong character, a length that is not a
// multiple of 4, padding in the middle).
core::Result<std::string> Base64Decode(std::string_view text);

}  // namespace suanli::net
