// A stand-in for the suanli server in CLI tests: an HttpClient that hands each request to a
// handler the test writes, and records what was sent.
#pragma once

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli/api_client.h"
#include "core/clock.h"
#include "net/http_client.h"

namespace suanli::cli {

struct FakeRequest {
  std::string method;
  std::string target;
  std::string body;
  net::Headers headers;

  std::string Header(std::string_view name) const {
    for (const auto& header : headers) {
      if (header.first == name) return header.second;
    }
    return "";
  }
};

class FakeApiServer {
 public:
  using Handler = std::function<net::HttpResponse(const FakeRequest&)>;

  explicit FakeApiServer(Handler handler) : handler_(std::move(handler)) {}

  std::vector<FakeRequest>& requests() { return requests_; }

  // An environment whose connections reach this server; no variables set; a manual clock that
  // each sleep advances.
  ApiEnvironment Environment() {
    ApiEnvironment env;
    env.connect = [this](std::string_view /*base_url*/) {
      return core::Result<std::unique_ptr<net::HttpClient>>(
          std::unique_ptr<net::HttpClient>(new Client(this)));
    };
    env.clock = &clock_;
    env.sleep = [this](std::chrono::milliseconds time) {
      ++sleeps_;
      clock_.Advance(time);
    };
    env.suanli_token = "sl_test";
    return env;
  }

  int sleeps() const { return sleeps_; }

  static net::HttpResponse Json(int status, std::string_view body) {
    net::HttpResponse response;
    response.status = status;
    response.body = std::string(body);
    return response;
  }
  static net::HttpResponse Error(int status, std::string_view code, std::string_view message) {
    boost::json::object error;
    error["code"] = code;
    error["message"] = message;
    boost::json::object body;
    body["error"] = std::move(error);
    return Json(status, boost::json::serialize(body));
  }

 private:
  class Client : public net::HttpClient {
   public:
    explicit Client(FakeApiServer* server) : server_(server) {}
    core::Result<net::HttpResponse> Send(std::string_view method, std::string_view target,
                                         std::string_view body,
                                         const net::Headers& headers) override {
      FakeRequest request{std::string(method), std::string(target), std::string(body), headers};
      server_->requests_.push_back(request);
      return server_->handler_(request);
    }
    core::Result<net::HttpResponse> Stream(
        std::string_view /*method*/, std::string_view /*target*/, std::string_view /*body*/,
        const net::Headers& /*headers*/,
        const std::function<bool(std::string_view)>& /*on_data*/) override {
      return core::InternalError("not used by the CLI");
    }
    bool last_request_unsent() const override { return false; }

   private:
    FakeApiServer* server_;
  };

  Handler handler_;
  std::vector<FakeRequest> requests_;
  core::ManualClock clock_;
  int sleeps_ = 0;
};

}  // namespace suanli::cli
