// Test helpers for the REST API over real HTTP: a client that sends one request with a bearer token
// and parses the JSON answer, and checks of the API's error shape. For tests only (the in-process
// API tests in src/server, the agent's relay test and the process tests in tests/); it speaks HTTP
// through net, so a test that uses it links no server code.
#pragma once

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "net/http_client.h"

namespace suanli::testing {

struct ApiReply {
  int status = 0;           // 0 when the server could not be reached
  std::string text;         // the body as sent
  boost::json::value json;  // the body parsed; null when it is not JSON
  net::Headers headers;     // names in lower case
  std::string transport_error;

  // The first value of header `name` (lower case), or "".
  std::string Header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return "";
  }

  bool ok() const { return status >= 200 && status < 300; }
  // The "error" object's fields, or "" when the body has none.
  std::string error_code() const { return ErrorField("code"); }
  std::string error_message() const { return ErrorField("message"); }
  // The answer of the router itself: no route for the path, or not for this method.
  bool router_refused() const {
    return status == 405 || (status == 404 && error_message().starts_with("no route"));
  }
  const boost::json::object& object() const {
    static const boost::json::object kEmpty;
    return json.is_object() ? json.as_object() : kEmpty;
  }
  std::string Describe() const {
    return std::to_string(status) + " " + (transport_error.empty() ? text : transport_error);
  }

 private:
  std::string ErrorField(std::string_view name) const {
    const boost::json::value* error =
        json.is_object() ? json.as_object().if_contains("error") : nullptr;
    if (error == nullptr || !error->is_object()) return "";
    const boost::json::value* field = error->as_object().if_contains(name);
    return field != nullptr && field->is_string() ? std::string(field->as_string()) : "";
  }
};

// One keep-alive connection to a server; not thread-safe (one per thread).
class ApiClient {
 public:
  explicit ApiClient(std::string base_url,
                     std::chrono::milliseconds timeout = std::chrono::seconds(30))
      : base_url_(std::move(base_url)) {
    net::HttpClientOptions options;
    options.timeout = timeout;
    auto client = net::HttpClient::Create(base_url_, options);
    if (client.ok()) client_ = std::move(*client);
  }

  // `token` empty: no Authorization header.
  ApiReply Send(std::string_view method, std::string_view target, std::string_view token = {},
                std::string_view body = {}, net::Headers headers = {}) {
    ApiReply reply;
    if (!client_) {
      reply.transport_error = "bad base URL " + base_url_;
      return reply;
    }
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + std::string(token));
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    core::Result<net::HttpResponse> response = client_->Send(method, target, body, headers);
    if (!response.ok()) {
      reply.transport_error = response.status().ToString();
      return reply;
    }
    reply.status = response->status;
    reply.text = std::move(response->body);
    reply.headers = std::move(response->headers);
    boost::system::error_code error;
    boost::json::value parsed = boost::json::parse(reply.text, error);
    if (!error) reply.json = std::move(parsed);
    return reply;
  }
  ApiReply Get(std::string_view target, std::string_view token = {}) {
    return Send("GET", target, token);
  }
  ApiReply Post(std::string_view target, std::string_view token, std::string_view body = "{}") {
    return Send("POST", target, token, body);
  }
  ApiReply PostJson(std::string_view target, std::string_view token,
                    const boost::json::value& body) {
    return Send("POST", target, token, boost::json::serialize(body));
  }

 private:
  std::string base_url_;
  std::unique_ptr<net::HttpClient> client_;
};

// A string field of an object ("" when missing or not a string).
inline std::string Str(const boost::json::value& value, std::string_view key) {
  if (!value.is_object()) return "";
  const boost::json::value* field = value.as_object().if_contains(key);
  return field != nullptr && field->is_string() ? std::string(field->as_string()) : "";
}

// An integer field of an object (`fallback` when missing or not an integer).
inline int64_t Int(const boost::json::value& value, std::string_view key, int64_t fallback = -1) {
  if (!value.is_object()) return fallback;
  const boost::json::value* field = value.as_object().if_contains(key);
  if (field == nullptr) return fallback;
  if (field->is_int64()) return field->as_int64();
  if (field->is_uint64()) return static_cast<int64_t>(field->as_uint64());
  return fallback;
}

// An array field of an object (empty when missing).
inline const boost::json::array& Array(const boost::json::value& value, std::string_view key) {
  static const boost::json::array kEmpty;
  if (!value.is_object()) return kEmpty;
  const boost::json::value* field = value.as_object().if_contains(key);
  return field != nullptr && field->is_array() ? field->as_array() : kEmpty;
}

// Asserts the API's error shape, {"error": {"code", "message"}}, with a non-empty message and,
// when given, the expected status and code.
inline ::testing::AssertionResult IsApiError(const ApiReply& reply, int status,
                                             std::string_view code = {}) {
  if (reply.status != status) {
    return ::testing::AssertionFailure()
           << "expected status " << status << ", got " << reply.Describe();
  }
  if (reply.error_code().empty() || reply.error_message().empty()) {
    return ::testing::AssertionFailure()
           << "expected {\"error\":{\"code\",\"message\"}} with a message, got " << reply.text;
  }
  if (!code.empty() && reply.error_code() != code) {
    return ::testing::AssertionFailure() << "expected code " << code << ", got " << reply.text;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace suanli::testing
