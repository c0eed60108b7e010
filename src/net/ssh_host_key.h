// A pod's SSH host key: an Ed25519 key the control plane makes once per pod and keeps with it, so
// that the pod answers with the same host key after every stop, start, restart and move, and
// `suanli pods ssh` can check it from the first login instead of trusting whatever answers first
// (issue 34, item 9: each new container made new keys, and ssh refused the pod after a restart).
//
// The agent writes the key where the images' SSH servers look before their container starts:
// OpenSSH's file (RunPod's images; their `ssh-keygen -A` makes only the types that are missing)
// and Dropbear's (the demo image; its -R makes only the types that are missing). Both formats are
// written here by hand: they are a few length-prefixed fields, and no Debian library writes them.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace suanli::net {

inline constexpr size_t kSshHostKeySeedBytes = 32;  // RFC 8032's private key

struct SshHostKey {
  std::string seed;        // 32 bytes
  std::string public_key;  // 32 bytes
};

// The key of `seed`: INVALID_ARGUMENT when it is not 32 bytes.
core::Result<SshHostKey> SshHostKeyFromSeed(std::string_view seed);

// "ssh-ed25519 AAAA...": the key as known_hosts and authorized_keys lines give it.
std::string OpenSshPublicKey(const SshHostKey& key);

// The unencrypted private key file OpenSSH reads (/etc/ssh/ssh_host_ed25519_key).
std::string OpenSshPrivateKeyFile(const SshHostKey& key, std::string_view comment);

// The private key file Dropbear reads (/etc/dropbear/dropbear_ed25519_host_key).
std::string DropbearPrivateKeyFile(const SshHostKey& key);

}  // namespace suanli::net
