// Secrets: random bytes, hashes and SSH key fingerprints, on OpenSSL.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "server/control_plane.h"

namespace suanli::server {

class OpenSslEntropy final : public Entropy {
 public:
  std::string Bytes(size_t count) override;  // RAND_bytes; crashes if the RNG fails
};

std::string Sha256Hex(std::string_view data);
std::string HexEncode(std::string_view bytes);

// "SHA256:..." as `ssh-keygen -l` prints it, for one OpenSSH public key line ("ssh-ed25519 AAAA...
// comment"). INVALID_ARGUMENT for anything else, saying which line format is expected.
core::Result<std::string> SshKeyFingerprint(std::string_view public_key);

}  // namespace suanli::server
