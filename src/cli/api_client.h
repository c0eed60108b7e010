// ApiClient: the CLI's side of the suanli REST API (JSON over HTTP under /v1, bearer tokens).
//
// Where the server is and who the caller is come, first found first used, from the command line
// (--url, --token), the environment (SUANLI_URL, SUANLI_TOKEN), then the config file that
// `suanli login` writes ($XDG_CONFIG_HOME/suanli/config.json, else ~/.config/suanli/config.json;
// mode 0600 in a 0700 directory); the URL defaults to http://127.0.0.1:7070.
//
// An error answer, {"error": {"code": "NOT_FOUND", "message": "..."}}, becomes a Status with that
// code and the server's message, so the CLI exits with core::ExitCodeFor(code). Not thread-safe:
// one per thread, like the HttpClient inside it.
#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"
#include "net/http_client.h"

namespace suanli::cli {

inline constexpr std::string_view kDefaultApiUrl = "http://127.0.0.1:7070";

// Everything API commands take from outside the process, so tests can replace it whole.
struct ApiEnvironment {
  std::optional<std::string> suanli_url;       // $SUANLI_URL
  std::optional<std::string> suanli_token;     // $SUANLI_TOKEN
  std::optional<std::string> xdg_config_home;  // $XDG_CONFIG_HOME
  std::optional<std::string> home;             // $HOME
  // Opens a connection to `base_url`; tests answer with a fake server.
  std::function<core::Result<std::unique_ptr<net::HttpClient>>(std::string_view base_url)> connect;
  const core::Clock* clock = nullptr;  // for `--wait` deadlines; not owned
  std::function<void(std::chrono::milliseconds)> sleep;

  // The process's environment variables, real HTTP, the system clock and a real sleep.
  static ApiEnvironment FromProcess();
};

// What `suanli login` saves and the other commands read.
struct ApiConfig {
  std::string url;
  std::string token;
};

// The config file's path: $XDG_CONFIG_HOME/suanli/config.json, else $HOME/.config/...; empty when
// neither variable is set (then nothing is read or written).
std::string ConfigFilePath(const ApiEnvironment& env);

// Reads the config file. nullopt when it does not exist; INVALID_ARGUMENT (naming the file) when it
// is not a JSON object with string "url" and "token".
core::Result<std::optional<ApiConfig>> ReadConfigFile(const std::string& path);

// Writes the config file atomically (temporary file, then rename), mode 0600, creating its
// directory with mode 0700. INTERNAL with the path and errno text when the disk refuses.
core::Status WriteConfigFile(const std::string& path, const ApiConfig& config);

// Flag, then environment, then file, then the default URL; the token may stay empty. A trailing
// '/' on the URL is dropped.
ApiConfig ResolveApiConfig(const std::string& flag_url, const std::string& flag_token,
                           const ApiEnvironment& env, const std::optional<ApiConfig>& file);

// "NOT_FOUND" -> kNotFound; an unknown name -> nullopt.
std::optional<core::StatusCode> StatusCodeFromName(std::string_view name);

// The Status for a non-2xx answer: the code and message of the API's error body, or, for a body
// that is not one (a proxy's HTML page), a code from the HTTP status and a message quoting it.
core::Status StatusFromErrorResponse(int http_status, std::string_view body);

class ApiClient {
 public:
  // `config.url` must be http://HOST:PORT (INVALID_ARGUMENT otherwise). With `require_token`, an
  // empty token is UNAUTHENTICATED with how to get one.
  static core::Result<std::unique_ptr<ApiClient>> Create(const ApiConfig& config,
                                                         const ApiEnvironment& env,
                                                         bool require_token = true);
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // `target` is "/v1/pods?force=true". The parsed JSON body of a 2xx answer (null when it has no
  // body); an error answer becomes its Status; UNAVAILABLE when the server cannot be reached, with
  // a hint to start it or set SUANLI_URL; INTERNAL when a 2xx body is not JSON.
  core::Result<boost::json::value> Get(std::string_view target);
  // A list the server pages ({"pods": [...], "next_after": ID}), every page of it, as one
  // {"<key>": [...]}: `target` first, then `target?after=ID` while the answer has a next_after.
  core::Result<boost::json::value> GetEveryPage(std::string_view target, std::string_view key);
  core::Result<boost::json::value> Post(std::string_view target, const boost::json::value& body);
  core::Result<boost::json::value> Put(std::string_view target, const boost::json::value& body);
  core::Result<boost::json::value> Patch(std::string_view target, const boost::json::value& body);
  core::Result<boost::json::value> Delete(std::string_view target);

  // GET of a body that is not JSON (CSV), returned as it came.
  core::Result<std::string> GetText(std::string_view target);

  const ApiConfig& config() const { return config_; }

 private:
  ApiClient(ApiConfig config, std::unique_ptr<net::HttpClient> http)
      : config_(std::move(config)), http_(std::move(http)) {}

  core::Result<std::string> SendRaw(std::string_view method, std::string_view target,
                                    std::string_view body);
  core::Result<boost::json::value> Send(std::string_view method, std::string_view target,
                                        const boost::json::value* body);

  ApiConfig config_;
  std::unique_ptr<net::HttpClient> http_;
};

// Pretty JSON for --json: two-space indents, one document, a newline at the end.
std::string PrettyJson(const boost::json::value& json);

}  // namespace suanli::cli
