#include "net/ssh_host_key.h"

#include <openssl/evp.h>

#include <cstdint>
#include <memory>

#include "net/base64.h"

namespace suanli::net {
namespace {

constexpr std::string_view kKeyType = "ssh-ed25519";

// SSH's wire encoding (RFC 4251): a big-endian uint32, and a string as its length then its bytes.
void PutUint32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

void PutString(std::string& out, std::string_view bytes) {
  PutUint32(out, static_cast<uint32_t>(bytes.size()));
  out.append(bytes);
}

std::string PublicKeyBlob(const SshHostKey& key) {
  std::string blob;
  PutString(blob, kKeyType);
  PutString(blob, key.public_key);
  return blob;
}

}  // namespace

core::Result<SshHostKey> SshHostKeyFromSeed(std::string_view seed) {
  if (seed.size() != kSshHostKeySeedBytes) {
    return core::InvalidArgumentError("an SSH host key's seed is " +
                                      std::to_string(kSshHostKeySeedBytes) + " bytes, not " +
                                      std::to_string(seed.size()));
  }
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> pkey(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                   reinterpret_cast<const unsigned char*>(seed.data()),
                                   seed.size()),
      &EVP_PKEY_free);
  std::string public_key(32, '\0');
  size_t length = public_key.size();
  if (pkey == nullptr ||
      EVP_PKEY_get_raw_public_key(pkey.get(), reinterpret_cast<unsigned char*>(public_key.data()),
                                  &length) != 1 ||
      length != public_key.size()) {
    return core::InternalError("libcrypto could not derive an Ed25519 public key");
  }
  return SshHostKey{std::string(seed), std::move(public_key)};
}

std::string OpenSshPublicKey(const SshHostKey& key) {
  return std::string(kKeyType) + " " + Base64Encode(PublicKeyBlob(key));
}

// PROTOCOL.key in OpenSSH's sources: the magic, no cipher and no KDF, one public key, then the
// private section (a check number twice, the key, a comment) padded to the cipher's block of 8.
std::string OpenSshPrivateKeyFile(const SshHostKey& key, std::string_view comment) {
  std::string private_section;
  // The check number only has to repeat; taken from the public key, the file is the same each
  // time it is written.
  const uint32_t check =
      (static_cast<uint32_t>(static_cast<unsigned char>(key.public_key[0])) << 24) |
      (static_cast<uint32_t>(static_cast<unsigned char>(key.public_key[1])) << 16) |
      (static_cast<uint32_t>(static_cast<unsigned char>(key.public_key[2])) << 8) |
      static_cast<uint32_t>(static_cast<unsigned char>(key.public_key[3]));
  PutUint32(private_section, check);
  PutUint32(private_section, check);
  PutString(private_section, kKeyType);
  PutString(private_section, key.public_key);
  PutString(private_section, key.seed + key.public_key);
  PutString(private_section, comment);
  for (char pad = 1; private_section.size() % 8 != 0; ++pad) private_section.push_back(pad);

  std::string blob("openssh-key-v1");
  blob.push_back('\0');
  PutString(blob, "none");  // cipher
  PutString(blob, "none");  // KDF
  PutString(blob, "");      // KDF options
  PutUint32(blob, 1);       // keys
  PutString(blob, PublicKeyBlob(key));
  PutString(blob, private_section);

  const std::string encoded = Base64Encode(blob);
  std::string file = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
  for (size_t at = 0; at < encoded.size(); at += 70) file += encoded.substr(at, 70) + "\n";
  file += "-----END OPENSSH PRIVATE KEY-----\n";
  return file;
}

// Dropbear's signkey.c: the key type, then the private and public halves as one string.
std::string DropbearPrivateKeyFile(const SshHostKey& key) {
  std::string file;
  PutString(file, kKeyType);
  PutString(file, key.seed + key.public_key);
  return file;
}

}  // namespace suanli::net
