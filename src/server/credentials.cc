#include "server/credentials.h"

#include <algorithm>

#include "server/secrets.h"

namespace suanli::server {

std::string Credentials::NewSecret(std::string_view prefix) {
  return std::string(prefix) + HexEncode(entropy_.Bytes(24));
}

std::string Credentials::SecretHash(std::string_view secret) { return Sha256Hex(secret); }

std::optional<Credentials::Holder> Credentials::FindByHash(const std::string& hash) const {
  if (const auto token = token_by_hash_.find(hash); token != token_by_hash_.end()) {
    const core::ApiToken& found = api_tokens_.at(token->second);
    return Holder{found.user_id, "", token->second, found.read_only, found.project_id};
  }
  if (const auto node = node_by_hash_.find(hash); node != node_by_hash_.end()) {
    return Holder{"", node->second, ""};
  }
  return std::nullopt;
}

std::pair<core::ApiToken, std::string> Credentials::IssueApiToken(std::string id,
                                                                  std::string user_id,
                                                                  std::string name,
                                                                  core::TimePoint now,
                                                                  const core::ApiToken& scope) {
  std::string secret = NewSecret("sl_");
  core::ApiToken token;
  token.id = std::move(id);
  token.user_id = std::move(user_id);
  token.name = std::move(name);
  token.secret_hash = SecretHash(secret);
  token.secret_prefix = secret.substr(0, 10);
  token.created_at = now;
  token.read_only = scope.read_only;
  token.project_id = scope.project_id;
  AddApiToken(token);
  return {std::move(token), std::move(secret)};
}

void Credentials::AddApiToken(core::ApiToken token) {
  token_by_hash_[token.secret_hash] = token.id;
  api_tokens_[token.id] = std::move(token);
}

size_t Credentials::ApiTokenCount(std::string_view user_id) const {
  return static_cast<size_t>(
      std::count_if(api_tokens_.begin(), api_tokens_.end(),
                    [&](const auto& entry) { return entry.second.user_id == user_id; }));
}

std::vector<core::ApiToken> Credentials::ApiTokensOf(std::string_view user_id) const {
  std::vector<core::ApiToken> tokens;
  for (const auto& entry : api_tokens_) {
    if (entry.second.user_id == user_id) tokens.push_back(entry.second);
  }
  return tokens;
}

const core::ApiToken* Credentials::FindApiToken(std::string_view id) const {
  const auto it = api_tokens_.find(std::string(id));
  return it == api_tokens_.end() ? nullptr : &it->second;
}

void Credentials::RevokeApiToken(std::string_view id) {
  const auto it = api_tokens_.find(std::string(id));
  if (it == api_tokens_.end()) return;
  token_by_hash_.erase(it->second.secret_hash);
  api_tokens_.erase(it);
}

std::pair<std::string, std::string> Credentials::IssueNodeSecret(const std::string& node_id) {
  std::string secret = NewSecret("sln_");
  std::string hash = SecretHash(secret);
  AddNode(node_id, hash);
  return {std::move(secret), std::move(hash)};
}

void Credentials::AddNode(const std::string& node_id, const std::string& token_hash) {
  node_by_hash_[token_hash] = node_id;
}

void Credentials::RemoveNode(const std::string& token_hash) { node_by_hash_.erase(token_hash); }

std::pair<core::JoinToken, std::string> Credentials::IssueJoinToken(std::string id,
                                                                    std::string note,
                                                                    core::TimePoint now,
                                                                    core::Duration lifetime) {
  std::string secret = NewSecret("slj_");
  core::JoinToken token;
  token.id = std::move(id);
  token.secret_hash = SecretHash(secret);
  token.secret_prefix = secret.substr(0, 11);
  token.note = std::move(note);
  token.created_at = now;
  token.expires_at = now + lifetime;
  AddJoinToken(token);
  return {std::move(token), std::move(secret)};
}

void Credentials::AddJoinToken(core::JoinToken token) { join_tokens_[token.id] = std::move(token); }

std::optional<core::JoinToken> Credentials::RemoveJoinToken(std::string_view id) {
  const auto it = join_tokens_.find(std::string(id));
  if (it == join_tokens_.end()) return std::nullopt;
  core::JoinToken token = std::move(it->second);
  join_tokens_.erase(it);
  return token;
}

core::Status Credentials::CheckJoinToken(std::string_view secret, core::TimePoint now) const {
  const std::string hash = SecretHash(secret);
  const bool valid = std::any_of(join_tokens_.begin(), join_tokens_.end(), [&](const auto& entry) {
    return entry.second.secret_hash == hash && entry.second.expires_at > now;
  });
  if (valid) return core::Status::Ok();
  return core::UnauthenticatedError(
      "the join token is unknown or expired; an admin creates one with `suanli nodes "
      "join-token`");
}

}  // namespace suanli::server
