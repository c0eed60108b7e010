#include "server/secrets.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <array>
#include <sstream>
#include <vector>

#include "core/check.h"

namespace suanli::server {

std::string OpenSslEntropy::Bytes(size_t count) {
  std::string bytes(count, '\0');
  SUANLI_CHECK(
      RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(count)) == 1,
      "the system's random number generator failed; secrets cannot be made safely");
  return bytes;
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const char byte : bytes) {
    const auto value = static_cast<unsigned char>(byte);
    hex += kDigits[value >> 4];
    hex += kDigits[value & 15];
  }
  return hex;
}

std::string Sha256Hex(std::string_view data) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest.data());
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

core::Result<std::string> SshKeyFingerprint(std::string_view public_key) {
  static constexpr std::string_view kTypes[] = {"ssh-ed25519",
                                                "ssh-rsa",
                                                "ecdsa-sha2-nistp256",
                                                "ecdsa-sha2-nistp384",
                                                "ecdsa-sha2-nistp521",
                                                "sk-ssh-ed25519@openssh.com",
                                                "sk-ecdsa-sha2-nistp256@openssh.com"};
  const auto bad = [] {
    return core::InvalidArgumentError(
        "not an OpenSSH public key; paste one line such as the content of ~/.ssh/id_ed25519.pub "
        "(\"ssh-ed25519 AAAA... you@host\")");
  };
  std::istringstream words{std::string(public_key)};
  std::string type, blob;
  if (!(words >> type >> blob) || public_key.find('\n') != std::string_view::npos) return bad();
  bool known = false;
  for (std::string_view candidate : kTypes) known = known || candidate == type;
  if (!known || blob.size() % 4 != 0 || blob.size() > 16384) return bad();
  std::vector<unsigned char> decoded(blob.size() / 4 * 3);
  const int length =
      EVP_DecodeBlock(decoded.data(), reinterpret_cast<const unsigned char*>(blob.data()),
                      static_cast<int>(blob.size()));
  if (length < 0) return bad();
  size_t size = static_cast<size_t>(length);
  if (blob.ends_with("==")) {
    size -= 2;
  } else if (blob.ends_with("=")) {
    size -= 1;
  }
  // The blob starts with the key type as an SSH string: a 4-byte length, then the name.
  if (size < 4 + type.size() ||
      std::string_view(reinterpret_cast<const char*>(decoded.data()) + 4, type.size()) != type) {
    return bad();
  }
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(decoded.data(), size, digest.data());
  std::array<unsigned char, 4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1> encoded{};
  const int encoded_length = EVP_EncodeBlock(encoded.data(), digest.data(), SHA256_DIGEST_LENGTH);
  std::string fingerprint(reinterpret_cast<const char*>(encoded.data()),
                          static_cast<size_t>(encoded_length));
  while (!fingerprint.empty() && fingerprint.back() == '=') fingerprint.pop_back();
  return "SHA256:" + fingerprint;
}

}  // namespace suanli::server
