#include "net/http.h"

#include <boost/json.hpp>

#include "net/http_client.h"

namespace suanli::net {
namespace {

char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

// -1 for a character that is not a hex digit.
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsUnreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

}  // namespace

std::optional<std::string> HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return std::nullopt;
}

std::optional<std::string> HttpRequest::QueryValue(std::string_view name) const {
  for (const auto& [key, value] : query) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::string WithoutQueryParameter(std::string_view target, std::string_view name) {
  const size_t question = target.find('?');
  if (question == std::string_view::npos) return std::string(target);
  std::string out(target.substr(0, question));
  std::string_view query = target.substr(question + 1);
  char separator = '?';
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty() || PercentDecode(pair.substr(0, pair.find('=')), true) == name) continue;
    out += separator;
    out += pair;
    separator = '&';
  }
  return out;
}

namespace {

// Calls `each(name, value, piece)` for each "name=value" of a Cookie header (RFC 6265 5.4: pairs
// separated by "; "), names and values trimmed.
template <typename Each>
void ForEachCookie(std::string_view header, Each each) {
  while (!header.empty()) {
    const size_t semicolon = header.find(';');
    std::string_view piece = header.substr(0, semicolon);
    header =
        semicolon == std::string_view::npos ? std::string_view() : header.substr(semicolon + 1);
    while (!piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
    while (!piece.empty() && piece.back() == ' ') piece.remove_suffix(1);
    if (piece.empty()) continue;
    const size_t equals = piece.find('=');
    each(piece.substr(0, equals),
         equals == std::string_view::npos ? std::string_view() : piece.substr(equals + 1), piece);
  }
}

}  // namespace

std::optional<std::string> CookieValue(std::string_view cookie_header, std::string_view name) {
  std::optional<std::string> found;
  ForEachCookie(cookie_header, [&](std::string_view key, std::string_view value, std::string_view) {
    if (!found && key == name) found = std::string(value);
  });
  return found;
}

std::string WithoutCookie(std::string_view cookie_header, std::string_view name) {
  std::string out;
  ForEachCookie(cookie_header, [&](std::string_view key, std::string_view, std::string_view piece) {
    if (key == name) return;
    if (!out.empty()) out += "; ";
    out += piece;
  });
  return out;
}

HttpResponse ErrorResponse(int status, std::string_view code, std::string_view message) {
  boost::json::object error;
  error["code"] = code;
  error["message"] = message;
  boost::json::object root;
  root["error"] = std::move(error);
  HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = boost::json::serialize(root);
  return response;
}

// A '%' not followed by two hex digits is kept as it is: lenient, like browsers, rather than
// refusing a request over a stray percent sign.
std::string PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      int high = HexValue(text[i + 1]);
      int low = HexValue(text[i + 2]);
      if (high >= 0 && low >= 0) {
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (IsUnreserved(c)) {
      out.push_back(c);
      continue;
    }
    auto byte = static_cast<unsigned char>(c);
    out.push_back('%');
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0x0F]);
  }
  return out;
}

}  // namespace suanli::net
