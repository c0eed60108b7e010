// A webhook receiver for tests: an HTTP server on a free port of 127.0.0.1 that records every
// request and answers 503 to the first `failures` of them, then 204, each `delay` after it came (a
// slow receiver, so that deliveries are under way when a test kills their sender). Header-only.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "net/http_server.h"

namespace suanli::testing {

class WebhookReceiver {
 public:
  explicit WebhookReceiver(int failures,
                           std::chrono::milliseconds delay = std::chrono::milliseconds(0))
      : failures_(failures) {
    net::HttpServerOptions options;
    options.port = 0;
    auto server = net::HttpServer::Start(
        options, [this, delay](net::HttpRequest&& request, net::Responder respond) {
          std::this_thread::sleep_for(delay);
          net::HttpResponse response;
          {
            core::MutexLock lock(mutex_);
            requests_.push_back(std::move(request));
            response.status = static_cast<int>(requests_.size()) <= failures_ ? 503 : 204;
          }
          respond(std::move(response));
        });
    EXPECT_TRUE(server.ok());
    server_ = std::move(*server);
  }

  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + "/hook?x=1";
  }
  std::vector<net::HttpRequest> requests() {
    core::MutexLock lock(mutex_);
    return requests_;
  }

 private:
  const int failures_;
  core::Mutex mutex_;
  std::vector<net::HttpRequest> requests_ GUARDED_BY(mutex_);
  std::unique_ptr<net::HttpServer> server_;
};

}  // namespace suanli::testing
