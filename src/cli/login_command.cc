// suanli login: check a URL and token against the server, then save them for later commands.
#include <memory>
#include <ostream>

#include "cli/api_command.h"
#include "cli/api_views.h"

namespace suanli::cli {
namespace {

struct LoginFlags {
  std::string url;
  std::string token;
  bool json = false;
};

core::Status RunLogin(const LoginFlags& flags, CommandContext& context) {
  const std::string path = ConfigFilePath(*context.api_env);
  // A broken file must not stop the login that replaces it.
  core::Result<std::optional<ApiConfig>> file = ReadConfigFile(path);
  const std::optional<ApiConfig> saved = file.ok() ? *file : std::nullopt;
  const ApiConfig config = ResolveApiConfig(flags.url.empty() ? context.api_url : flags.url,
                                            flags.token.empty() ? context.api_token : flags.token,
                                            *context.api_env, saved);
  core::Result<std::unique_ptr<ApiClient>> api = ApiClient::Create(config, *context.api_env);
  if (!api.ok()) return api.status();
  core::Result<boost::json::value> me = (*api)->Get("/v1/users/me");
  if (!me.ok()) return me.status().WithContext("not saved");
  SUANLI_RETURN_IF_ERROR(WriteConfigFile(path, config));
  return PrintResult(context, flags.json, me, [&](const boost::json::value& user) {
    return "logged in to " + config.url + " as " + JsonText(user, "name") + " (" +
           JsonText(user, "role") + ", " + JsonText(user, "id") + "); balance " +
           MoneyText(user, "balance_micros") + "\nsaved to " + path + "\n";
  });
}

}  // namespace

CommandRun DefineLoginCommand(CLI::App& command) {
  auto flags = std::make_shared<LoginFlags>();
  command.add_option(
      "--url", flags->url,
      "The server, http://HOST:PORT (else $SUANLI_URL or " + std::string(kDefaultApiUrl) + ")");
  command.add_option("--token", flags->token,
                     "Your API token, sl_... (else $SUANLI_TOKEN); an admin's is in "
                     "DATA-DIR/admin-token");
  AddJsonFlag(command, flags->json);
  return [flags](CommandContext& context) { return RunLogin(*flags, context); };
}

}  // namespace suanli::cli
