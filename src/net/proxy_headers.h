// Proxy headers: what an HTTP proxy passes on of a message's header fields, and which names and
// values it accepts from the party it relays for.
//
// A field such as Connection or Transfer-Encoding describes one connection, not the message (RFC
// 9110 7.6.1): a proxy drops it, together with every field the Connection header lists, and frames
// the message anew on its own connection. The server uses these rules in both directions of the
// pod proxy: a user's request on its way to a pod, and the pod's answer (sent by its node's agent)
// on its way back.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "net/http.h"

namespace suanli::net {

// `headers` without the hop-by-hop ones (also those the Connection header names) and without those
// in `also_drop` (lower case). Names come out in lower case; order and values are kept.
Headers EndToEndHeaders(const Headers& headers, std::initializer_list<std::string_view> also_drop);

// An HTTP field name (RFC 9110 5.1: a token) of reasonable length (at most 256 bytes).
bool IsHeaderName(std::string_view name);

// A field value that cannot end the header early or smuggle another one in: no CR, LF or NUL, at
// most 8 KiB.
bool IsHeaderValue(std::string_view value);

// A Set-Cookie value from a site served under `path_prefix` of a shared origin (a pod behind the
// proxy), confined to that prefix: its Path is kept when it lies inside the prefix and becomes the
// prefix otherwise (or when it has none), and its Domain is dropped (host only), so the site can
// set cookies for itself alone, never for the origin's other paths (another pod, the console).
// nullopt (drop it) for a cookie that cannot be confined (the __Host- prefix needs Path=/), one
// named in `reserved` (the proxy's own), or one with no name=value. `path_prefix` ends with '/'.
std::optional<std::string> ConfinedSetCookie(std::string_view set_cookie,
                                             std::string_view path_prefix,
                                             std::initializer_list<std::string_view> reserved);

// `text` with A-Z turned into a-z; other bytes as they are.
std::string LowerAscii(std::string_view text);

}  // namespace suanli::net
