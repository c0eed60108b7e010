// Credentials: the secrets that let a caller in: users' API tokens, nodes' tokens, and the join
// tokens with which a new node registers. Only their SHA-256 hashes are kept; a secret is returned
// once, when it is issued.
//
// Thread-compatible: the control plane holds its lock around every call (LevelDB's VersionSet
// under DBImpl's mutex). The control plane owns users and nodes and decides who may issue what;
// this class only keeps and matches secrets.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/domain.h"
#include "core/entropy.h"
#include "core/status.h"

namespace suanli::server {

class Credentials {
 public:
  explicit Credentials(core::Entropy& entropy) : entropy_(entropy) {}

  // Whose secret is the one with this hash (SecretHash): a user's (by an API token) or a node's;
  // nullopt when it is unknown or revoked. The hash is taken apart so that a caller holding a lock
  // need not hash under it.
  struct Holder {
    std::string user_id;   // empty for a node
    std::string node_id;   // empty for a person
    std::string token_id;  // the API token's id; empty for a node
    bool read_only = false;
    std::string project_id{};  // a project token's project
  };
  static std::string SecretHash(std::string_view secret);
  std::optional<Holder> FindByHash(const std::string& secret_hash) const;

  // --- API tokens. Issue returns the token and its secret ("sl_...").
  // `scope`: its read_only and project_id are the new token's.
  std::pair<core::ApiToken, std::string> IssueApiToken(std::string id, std::string user_id,
                                                       std::string name, core::TimePoint now,
                                                       const core::ApiToken& scope = {});
  void AddApiToken(core::ApiToken token);  // as loaded from the store
  size_t ApiTokenCount(std::string_view user_id) const;
  std::vector<core::ApiToken> ApiTokensOf(std::string_view user_id) const;
  const core::ApiToken* FindApiToken(std::string_view id) const;
  void RevokeApiToken(std::string_view id);
  const std::map<std::string, core::ApiToken>& api_tokens() const { return api_tokens_; }

  // --- Nodes' tokens. Issue returns the secret ("sln_...") and its hash, for the node's record.
  std::pair<std::string, std::string> IssueNodeSecret(const std::string& node_id);
  void AddNode(const std::string& node_id, const std::string& token_hash);  // as loaded
  void RemoveNode(const std::string& token_hash);

  // --- Join tokens. Issue returns the token and its secret ("slj_...").
  std::pair<core::JoinToken, std::string> IssueJoinToken(std::string id, std::string note,
                                                         core::TimePoint now,
                                                         core::Duration lifetime);
  void AddJoinToken(core::JoinToken token);  // as loaded
  // The token removed, or nullopt when there is none with that id.
  std::optional<core::JoinToken> RemoveJoinToken(std::string_view id);
  // OK, or UNAUTHENTICATED for a secret that matches no join token unexpired at `now`.
  core::Status CheckJoinToken(std::string_view secret, core::TimePoint now) const;
  const std::map<std::string, core::JoinToken>& join_tokens() const { return join_tokens_; }

 private:
  std::string NewSecret(std::string_view prefix);

  core::Entropy& entropy_;
  std::map<std::string, core::ApiToken> api_tokens_;            // by id
  std::unordered_map<std::string, std::string> token_by_hash_;  // secret hash -> API token id
  std::unordered_map<std::string, std::string> node_by_hash_;   // secret hash -> node id
  std::map<std::string, core::JoinToken> join_tokens_;          // by id
};

}  // namespace suanli::server
