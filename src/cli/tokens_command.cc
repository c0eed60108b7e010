// suanli tokens: your API tokens; suanli ssh-keys: public keys your pods accept.
#include <memory>
#include <ostream>

#include "cli/api_command.h"
#include "cli/api_views.h"
#include "cli/files.h"

namespace suanli::cli {
namespace {

struct TokensFlags {
  bool json = false;
  std::string id;
  std::string name;
  std::string key;  // ssh-keys add: a file or the key itself
  bool read_only = false;
  std::string project;  // tokens create: the project it is scoped to
};

core::Status RunListTokens(const TokensFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json, (*api)->Get("/v1/tokens"),
      [](const boost::json::value& list) { return TokensTable(JsonArray(list, "tokens")); });
}

core::Status RunCreateToken(const TokensFlags& flags, CommandContext& context) {
  boost::json::object body;
  body["name"] = flags.name;
  if (flags.read_only) body["read_only"] = true;
  if (!flags.project.empty()) body["project"] = flags.project;
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Post("/v1/tokens", body),
                     [&flags](const boost::json::value& answer) {
                       // The secret alone on the first line, for scripts.
                       const boost::json::value* token = JsonField(answer, "token");
                       return JsonText(answer, "secret") + "\n" +
                              (flags.read_only ? "read-only token " : "token ") +
                              (token ? JsonText(*token, "id") : std::string()) +
                              (flags.project.empty() ? "" : " of project " + flags.project) +
                              " created; the secret is shown only now\n";
                     });
}

core::Status RunRemove(const TokensFlags& flags, CommandContext& context,
                       std::string_view collection, std::string_view what) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Delete(IdTarget(collection, flags.id)),
                     [&](const boost::json::value& /*answer*/) {
                       return std::string(what) + " " + flags.id + "\n";
                     });
}

core::Status RunListKeys(const TokensFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json, (*api)->Get("/v1/ssh-keys"),
      [](const boost::json::value& list) { return SshKeysTable(JsonArray(list, "ssh_keys")); });
}

bool LooksLikePublicKey(std::string_view text) {
  return text.starts_with("ssh-") || text.starts_with("ecdsa-") || text.starts_with("sk-");
}

core::Status RunAddKey(const TokensFlags& flags, CommandContext& context) {
  std::string key = flags.key;
  if (!LooksLikePublicKey(key)) {
    core::Result<std::string> text = ReadFile(key, 64 << 10);
    if (!text.ok()) {
      return text.status().WithContext("not a public key (ssh-ed25519 AAAA...) nor a file of one");
    }
    key = std::move(*text);
  }
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) {
    key.pop_back();
  }
  boost::json::object body;
  body["name"] = flags.name;
  body["public_key"] = key;
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Post("/v1/ssh-keys", body),
                     [](const boost::json::value& answer) {
                       const boost::json::value* nested = JsonField(answer, "ssh_key");
                       const boost::json::value& shown = nested ? *nested : answer;
                       return "added ssh key " + JsonText(shown, "id") + " " +
                              JsonText(shown, "fingerprint") + "\n";
                     });
}

}  // namespace

CommandRun DefineTokensCommand(CLI::App& command) {
  auto flags = std::make_shared<TokensFlags>();
  CommandGroup group(command);
  AddJsonFlag(command, flags->json);
  AddJsonFlag(
      group.Add("list", "List your API tokens (the default)",
                [flags](CommandContext& context) { return RunListTokens(*flags, context); }),
      flags->json);
  CLI::App& create =
      group.Add("create", "Create a token and print its secret once",
                [flags](CommandContext& context) { return RunCreateToken(*flags, context); });
  create.add_option("name", flags->name, "What it is for, e.g. laptop or ci")->required();
  create.add_flag("--read-only", flags->read_only,
                  "It may only read (GET): for a dashboard or a monitor; it cannot make tokens");
  create.add_option("--project", flags->project,
                    "It reaches only this project's pods (id or name), as your role there: for "
                    "a CI job or a teammate's machine");
  AddJsonFlag(create, flags->json);
  CLI::App& revoke = group.Add("revoke", "Revoke a token", [flags](CommandContext& context) {
    return RunRemove(*flags, context, "tokens", "revoked token");
  });
  revoke.add_option("id", flags->id, "Token ID")->required();
  AddJsonFlag(revoke, flags->json);
  return group.Build();
}

CommandRun DefineSshKeysCommand(CLI::App& command) {
  auto flags = std::make_shared<TokensFlags>();
  CommandGroup group(command);
  AddJsonFlag(command, flags->json);
  AddJsonFlag(group.Add("list", "List your SSH keys (the default)",
                        [flags](CommandContext& context) { return RunListKeys(*flags, context); }),
              flags->json);
  CLI::App& add =
      group.Add("add", "Add a public key, from a file or as text",
                [flags](CommandContext& context) { return RunAddKey(*flags, context); });
  add.add_option("name", flags->name, "A name for it, e.g. laptop")->required();
  add.add_option("key", flags->key, "~/.ssh/id_ed25519.pub, or the key itself")->required();
  AddJsonFlag(add, flags->json);
  CLI::App& remove = group.Add("rm", "Remove a key", [flags](CommandContext& context) {
    return RunRemove(*flags, context, "ssh-keys", "removed ssh key");
  });
  remove.add_option("id", flags->id, "Key ID")->required();
  AddJsonFlag(remove, flags->json);
  return group.Build();
}

}  // namespace suanli::cli
