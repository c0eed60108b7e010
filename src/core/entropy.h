// Entropy: where ids and secrets get their random bytes, injected like the Clock (STYLE.md rule 6)
// so tests can make them repeatable. OpenSSL's RAND_bytes in production (server/secrets.h).
#pragma once

#include <cstddef>
#include <string>

namespace suanli::core {

// Thread-safe in every implementation.
class Entropy {
 public:
  virtual ~Entropy() = default;
  virtual std::string Bytes(size_t count) = 0;  // `count` random bytes
};

}  // namespace suanli::core
