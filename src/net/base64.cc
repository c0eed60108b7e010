#include "net/base64.h"

#include <openssl/evp.h>

#include <climits>

namespace suanli::net {

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  // Encoded in slices: EVP_EncodeBlock takes an int length.
  constexpr size_t kSlice = 3 * (1 << 20);
  for (size_t at = 0; at < bytes.size(); at += kSlice) {
    const std::string_view slice = bytes.substr(at, kSlice);
    const size_t start = out.size();
    out.resize(start + 4 * ((slice.size() + 2) / 3) + 1);  // +1: the NUL it writes
    const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + start),
                                        reinterpret_cast<const unsigned char*>(slice.data()),
                                        static_cast<int>(slice.size()));
    out.resize(start + static_cast<size_t>(written));
  }
  return out;
}

core::Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0 || text.size() > INT_MAX) {
    return core::InvalidArgumentError("not base64: the length must be a multiple of 4");
  }
  if (text.empty()) return std::string();
  // EVP_DecodeBlock skips leading and trailing white space and does not check where '=' is: refuse
  // both here, so that only canonical text is accepted.
  const size_t padding = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    const char c = text[i];
    const bool valid = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '+' || c == '/';
    if (!valid) {
      return core::InvalidArgumentError("not base64: unexpected character at offset " +
                                        std::to_string(i));
    }
  }
  std::string out(text.size() / 4 * 3, '\0');
  const int written = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(text.data()),
                                      static_cast<int>(text.size()));
  if (written < 0) return core::InvalidArgumentError("not base64");
  // EVP_DecodeBlock counts the padding as zero bytes.
  out.resize(static_cast<size_t>(written) - padding);
  return out;
}

}  // namespace suanli::net
