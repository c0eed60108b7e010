// Webhooks: a finished serverless job's status POSTed to the URL its request named, signed and
// retried.
//
// The body is the job's status as GET /v2/{endpoint}/status/{job} answers it. The header
// `X-Suanli-Signature: sha256=<hex>` is HMAC-SHA256 of the body with the endpoint's webhook secret
// (shown to its owner in the endpoint's view), so a receiver can check the call came from suanli.
// A delivery that fails (a transport error or a status other than 2xx) is tried again after 1 s,
// 2 s, 4 s, ... up to `attempts` tries in all. Deliveries live in memory: a restart of the server
// loses those not yet made. Only http:// URLs (the HTTP client has no TLS yet).
//
// Thread-safe: Send may be called from any thread; one thread of its own makes the calls, in the
// order they are due, so a slow receiver delays the others by at most `timeout` per try.
//
// Every call goes through a net::OutboundPolicy: a URL whose host resolves to a loopback, private,
// link-local or the server's own address is refused ("refused by policy"), never called.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"
#include "net/outbound_policy.h"

namespace suanli::server {

struct WebhookDelivery {
  std::string url;  // http://host:port/path
  std::string body;
  std::string secret;
  int attempt = 0;  // tries made so far
};

// "sha256=" and the hex HMAC-SHA256 of `body` with `secret`.
std::string WebhookSignature(std::string_view secret, std::string_view body);

// INVALID_ARGUMENT unless `url` is http://HOST[:PORT][/PATH], for the job API to refuse at once.
core::Status CheckWebhookUrl(std::string_view url);

// CheckWebhookUrl, and INVALID_ARGUMENT where HOST is an address (or localhost) that `policy`
// refuses: a webhook to an internal address is refused when it is made, not only at each delivery.
// A name is not resolved here: its answers may change, so each delivery resolves and checks it.
core::Status CheckWebhookTarget(const net::OutboundPolicy& policy, std::string_view url);

// One signed POST of `body` to `url`, at an address `policy` allows (its host resolved once, and
// that address called): OK for a 2xx answer; PERMISSION_DENIED "refused by policy: ..." without a
// call. `*status` (when given) gets the answer's status, 0 when none came. `extra` headers go with
// it.
core::Status PostWebhook(const net::OutboundPolicy& policy, std::string_view url,
                         std::string_view body, std::string_view secret,
                         std::chrono::milliseconds timeout, int* status = nullptr,
                         const std::vector<std::pair<std::string, std::string>>& extra = {});

struct WebhookOptions {
  int attempts = 5;
  std::chrono::milliseconds first_backoff{1'000};  // doubled after each failed try
  std::chrono::milliseconds timeout{10'000};       // for one try
  net::OutboundPolicy policy;                      // which addresses it may call
};

class WebhookSender {
 public:
  explicit WebhookSender(WebhookOptions options = {});
  ~WebhookSender();  // drops what is not yet delivered
  WebhookSender(const WebhookSender&) = delete;
  WebhookSender& operator=(const WebhookSender&) = delete;

  void Send(WebhookDelivery delivery) EXCLUDES(mutex_);
  int64_t delivered() const EXCLUDES(mutex_);
  int64_t given_up() const EXCLUDES(mutex_);  // failed every try

 private:
  void Loop() EXCLUDES(mutex_);
  // One try: OK for a 2xx answer.
  core::Status Post(const WebhookDelivery& delivery) const;

  const WebhookOptions options_;
  mutable core::Mutex mutex_;
  core::CondVar wake_;
  std::multimap<core::MonotonicTime, WebhookDelivery> due_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  int64_t delivered_ GUARDED_BY(mutex_) = 0;
  int64_t given_up_ GUARDED_BY(mutex_) = 0;
  std::thread thread_;  // last: started once the fields are
};

}  // namespace suanli::server
