#include "cli/api_client.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "cli/files.h"

namespace suanli::cli {
namespace {

std::optional<std::string> Getenv(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read once at start
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// The JSON of a 2xx body, null for an empty one.
core::Result<boost::json::value> ParseBody(std::string_view body, std::string_view what) {
  if (body.empty()) return boost::json::value();
  boost::system::error_code error;
  boost::json::value json = boost::json::parse(body, error);
  if (error) {
    return core::InternalError(std::string(what) + " answered with a body that is not JSON: " +
                               std::string(body.substr(0, 80)));
  }
  return json;
}

void AppendPretty(const boost::json::value& json, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent) + 2, ' ');
  const std::string close(static_cast<size_t>(indent), ' ');
  if (json.is_object() && !json.as_object().empty()) {
    out += "{\n";
    bool first = true;
    for (const auto& field : json.as_object()) {
      if (!first) out += ",\n";
      first = false;
      out += pad + boost::json::serialize(boost::json::value(field.key())) + ": ";
      AppendPretty(field.value(), indent + 2, out);
    }
    out += "\n" + close + "}";
  } else if (json.is_array() && !json.as_array().empty()) {
    out += "[\n";
    bool first = true;
    for (const boost::json::value& element : json.as_array()) {
      if (!first) out += ",\n";
      first = false;
      out += pad;
      AppendPretty(element, indent + 2, out);
    }
    out += "\n" + close + "]";
  } else {
    out += boost::json::serialize(json);
  }
}

}  // namespace

ApiEnvironment ApiEnvironment::FromProcess() {
  static const core::SystemClock system_clock;
  ApiEnvironment env;
  env.suanli_url = Getenv("SUANLI_URL");
  env.suanli_token = Getenv("SUANLI_TOKEN");
  env.xdg_config_home = Getenv("XDG_CONFIG_HOME");
  env.home = Getenv("HOME");
  env.connect = [](std::string_view base_url) { return net::HttpClient::Create(base_url); };
  env.clock = &system_clock;
  env.sleep = [](std::chrono::milliseconds time) { std::this_thread::sleep_for(time); };
  return env;
}

std::string ConfigFilePath(const ApiEnvironment& env) {
  if (env.xdg_config_home) return *env.xdg_config_home + "/suanli/config.json";
  if (env.home) return *env.home + "/.config/suanli/config.json";
  return "";
}

core::Result<std::optional<ApiConfig>> ReadConfigFile(const std::string& path) {
  if (path.empty()) return std::optional<ApiConfig>();
  core::Result<std::string> text = ReadFile(path, 1 << 20);
  if (!text.ok()) {
    if (text.status().code() == core::StatusCode::kNotFound) return std::optional<ApiConfig>();
    return text.status();
  }
  boost::system::error_code error;
  const boost::json::value json = boost::json::parse(*text, error);
  const boost::json::object* object = error ? nullptr : json.if_object();
  const boost::json::value* url = object ? object->if_contains("url") : nullptr;
  const boost::json::value* token = object ? object->if_contains("token") : nullptr;
  if (url == nullptr || token == nullptr || !url->is_string() || !token->is_string()) {
    return core::InvalidArgumentError(
        path + ": not a suanli config (a JSON object with string \"url\" and \"token\"); run " +
        "`suanli login` again or delete it");
  }
  return std::optional<ApiConfig>(
      ApiConfig{std::string(url->as_string()), std::string(token->as_string())});
}

core::Status WriteConfigFile(const std::string& path, const ApiConfig& config) {
  if (path.empty()) {
    return core::FailedPreconditionError(
        "neither XDG_CONFIG_HOME nor HOME is set, so there is nowhere to save the login; set "
        "SUANLI_URL and SUANLI_TOKEN instead");
  }
  boost::json::object json;
  json["url"] = config.url;
  json["token"] = config.token;
  return WritePrivateFile(path, PrettyJson(json));
}

ApiConfig ResolveApiConfig(const std::string& flag_url, const std::string& flag_token,
                           const ApiEnvironment& env, const std::optional<ApiConfig>& file) {
  ApiConfig config;
  if (!flag_url.empty()) {
    config.url = flag_url;
  } else if (env.suanli_url) {
    config.url = *env.suanli_url;
  } else if (file && !file->url.empty()) {
    config.url = file->url;
  } else {
    config.url = std::string(kDefaultApiUrl);
  }
  while (config.url.size() > 1 && config.url.back() == '/') config.url.pop_back();
  if (!flag_token.empty()) {
    config.token = flag_token;
  } else if (env.suanli_token) {
    config.token = *env.suanli_token;
  } else if (file) {
    config.token = file->token;
  }
  return config;
}

std::optional<core::StatusCode> StatusCodeFromName(std::string_view name) {
  if (name == "PAYLOAD_TOO_LARGE") return core::StatusCode::kInvalidArgument;
  for (core::StatusCode code :
       {core::StatusCode::kInvalidArgument, core::StatusCode::kNotFound,
        core::StatusCode::kAlreadyExists, core::StatusCode::kFailedPrecondition,
        core::StatusCode::kResourceExhausted, core::StatusCode::kUnauthenticated,
        core::StatusCode::kPermissionDenied, core::StatusCode::kUnavailable,
        core::StatusCode::kInternal}) {
    if (core::StatusCodeName(code) == name) return code;
  }
  return std::nullopt;
}

core::Status StatusFromErrorResponse(int http_status, std::string_view body) {
  core::StatusCode code = core::StatusCode::kInternal;
  switch (http_status) {
    case 400:
    case 413:
      code = core::StatusCode::kInvalidArgument;
      break;
    case 401:
      code = core::StatusCode::kUnauthenticated;
      break;
    case 402:
    case 429:
      code = core::StatusCode::kResourceExhausted;
      break;
    case 403:
      code = core::StatusCode::kPermissionDenied;
      break;
    case 404:
      code = core::StatusCode::kNotFound;
      break;
    case 409:
      code = core::StatusCode::kFailedPrecondition;
      break;
    case 502:
    case 503:
    case 504:
      code = core::StatusCode::kUnavailable;
      break;
    default:
      break;
  }
  boost::system::error_code error;
  const boost::json::value json = boost::json::parse(body, error);
  const boost::json::value* detail =
      !error && json.is_object() ? json.as_object().if_contains("error") : nullptr;
  if (detail != nullptr && detail->is_object()) {
    const boost::json::object& object = detail->as_object();
    const boost::json::value* name = object.if_contains("code");
    const boost::json::value* message = object.if_contains("message");
    if (name != nullptr && name->is_string()) {
      code = StatusCodeFromName(name->as_string()).value_or(code);
    }
    if (message != nullptr && message->is_string() && !message->as_string().empty()) {
      return {code, std::string(message->as_string())};
    }
  }
  std::string excerpt(body.substr(0, 120));
  for (char& c : excerpt) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return {code, "the server answered HTTP " + std::to_string(http_status) +
                    (excerpt.empty() ? std::string() : ": " + excerpt)};
}

core::Result<std::unique_ptr<ApiClient>> ApiClient::Create(const ApiConfig& config,
                                                           const ApiEnvironment& env,
                                                           bool require_token) {
  if (require_token && config.token.empty()) {
    return core::UnauthenticatedError(
        "no API token; run `suanli login --token ...` or set SUANLI_TOKEN");
  }
  if (!config.url.starts_with("http://")) {
    return core::InvalidArgumentError("'" + config.url +
                                      "' is not a suanli server URL; write http://HOST:PORT");
  }
  core::Result<std::unique_ptr<net::HttpClient>> http = env.connect(config.url);
  if (!http.ok()) return http.status();
  return std::unique_ptr<ApiClient>(new ApiClient(config, std::move(*http)));
}

core::Result<std::string> ApiClient::SendRaw(std::string_view method, std::string_view target,
                                             std::string_view body) {
  net::Headers headers = {{"Accept", "application/json"}};
  if (!config_.token.empty()) headers.emplace_back("Authorization", "Bearer " + config_.token);
  core::Result<net::HttpResponse> response = http_->Send(method, target, body, headers);
  if (!response.ok()) {
    const core::Status& failure = response.status();
    if (failure.code() != core::StatusCode::kUnavailable) return failure;
    return core::UnavailableError(failure.message() +
                                  "; is `suanli server` running? set SUANLI_URL or --url");
  }
  if (response->status < 200 || response->status > 299) {
    return StatusFromErrorResponse(response->status, response->body);
  }
  return std::move(response->body);
}

core::Result<boost::json::value> ApiClient::Send(std::string_view method, std::string_view target,
                                                 const boost::json::value* body) {
  core::Result<std::string> text =
      SendRaw(method, target, body == nullptr ? std::string() : boost::json::serialize(*body));
  if (!text.ok()) return text.status();
  return ParseBody(*text, config_.url);
}

core::Result<boost::json::value> ApiClient::Get(std::string_view target) {
  return Send("GET", target, nullptr);
}
core::Result<boost::json::value> ApiClient::GetEveryPage(std::string_view target,
                                                         std::string_view key) {
  boost::json::array all;
  std::string next(target);
  // Bounded, so that a server that never ends a list cannot keep the CLI forever.
  for (int page = 0; page < 100'000; ++page) {
    core::Result<boost::json::value> answer = Get(next);
    if (!answer.ok() || !answer->is_object()) return answer;
    const boost::json::object& object = answer->as_object();
    if (const boost::json::value* items = object.if_contains(key); items && items->is_array()) {
      for (const boost::json::value& item : items->as_array()) all.push_back(item);
    }
    const boost::json::value* after = object.if_contains("next_after");
    if (after == nullptr || !after->is_string() || after->as_string().empty()) break;
    next = std::string(target) + (target.find('?') == std::string_view::npos ? "?" : "&") +
           "after=" + net::PercentEncode(std::string_view(after->as_string()));
  }
  return boost::json::value(boost::json::object{{key, std::move(all)}});
}

core::Result<boost::json::value> ApiClient::Post(std::string_view target,
                                                 const boost::json::value& body) {
  return Send("POST", target, &body);
}
core::Result<boost::json::value> ApiClient::Put(std::string_view target,
                                                const boost::json::value& body) {
  return Send("PUT", target, &body);
}
core::Result<boost::json::value> ApiClient::Patch(std::string_view target,
                                                  const boost::json::value& body) {
  return Send("PATCH", target, &body);
}
core::Result<boost::json::value> ApiClient::Delete(std::string_view target) {
  return Send("DELETE", target, nullptr);
}

core::Result<std::string> ApiClient::GetText(std::string_view target) {
  return SendRaw("GET", target, "");
}

std::string PrettyJson(const boost::json::value& json) {
  std::string out;
  AppendPretty(json, 0, out);
  out += "\n";
  return out;
}

}  // namespace suanli::cli
