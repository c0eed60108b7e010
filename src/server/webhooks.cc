#include "server/webhooks.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <memory>
#include <utility>

#include "net/http_client.h"
#include "server/secrets.h"

namespace suanli::server {
namespace {

// "http://host:port/a?b" -> {"http://host:port", "/a?b"}.
std::pair<std::string, std::string> SplitUrl(std::string_view url) {
  const size_t path = url.find('/', std::string_view("http://").size());
  if (path == std::string_view::npos) return {std::string(url), "/"};
  return {std::string(url.substr(0, path)), std::string(url.substr(path))};
}

// "http://host:port" -> {"host", "port"}; "http://[::1]" -> {"[::1]", "80"}.
std::pair<std::string, std::string> SplitHostPort(std::string_view base) {
  const std::string_view authority = base.substr(std::string_view("http://").size());
  const size_t bracket = authority.rfind(']');
  const size_t colon = authority.rfind(':');
  if (colon == std::string_view::npos || (bracket != std::string_view::npos && colon < bracket)) {
    return {std::string(authority), "80"};
  }
  return {std::string(authority.substr(0, colon)), std::string(authority.substr(colon + 1))};
}

}  // namespace

std::string WebhookSignature(std::string_view secret, std::string_view body) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest, &length);
  return "sha256=" + HexEncode(std::string_view(reinterpret_cast<const char*>(digest), length));
}

core::Status CheckWebhookUrl(std::string_view url) {
  const bool valid = url.starts_with("http://") && url.size() > 7 && url.size() <= 2048 &&
                     url.find_first_of(" \r\n\t") == std::string_view::npos && url[7] != '/';
  if (valid) return core::Status::Ok();
  return core::InvalidArgumentError("webhook: '" + std::string(url.substr(0, 100)) +
                                    "' is not an http://HOST[:PORT]/PATH URL (https is not "
                                    "supported yet)");
}

core::Status CheckWebhookTarget(const net::OutboundPolicy& policy, std::string_view url) {
  SUANLI_RETURN_IF_ERROR(CheckWebhookUrl(url));
  std::string host = SplitHostPort(SplitUrl(url).first).first;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  // localhost is a name every resolver answers with loopback (RFC 6761).
  if (host == "localhost" || host.ends_with(".localhost")) host = "127.0.0.1";
  if (!net::ParseAddressRange(host).ok()) return core::Status::Ok();  // a name
  const core::Status allowed = policy.Check(host);
  if (allowed.ok()) return allowed;
  return core::InvalidArgumentError("webhook: " + std::string(url.substr(0, 100)) + " is " +
                                    allowed.message());
}

WebhookSender::WebhookSender(WebhookOptions options)
    : options_(options), thread_([this] { Loop(); }) {}

WebhookSender::~WebhookSender() {
  {
    core::MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  thread_.join();
}

void WebhookSender::Send(WebhookDelivery delivery) {
  {
    core::MutexLock lock(mutex_);
    due_.emplace(core::MonotonicNow(), std::move(delivery));
  }
  wake_.NotifyAll();
}

int64_t WebhookSender::delivered() const {
  core::MutexLock lock(mutex_);
  return delivered_;
}

int64_t WebhookSender::given_up() const {
  core::MutexLock lock(mutex_);
  return given_up_;
}

core::Status PostWebhook(const net::OutboundPolicy& policy, std::string_view url,
                         std::string_view body, std::string_view secret,
                         std::chrono::milliseconds timeout, int* status,
                         const std::vector<std::pair<std::string, std::string>>& extra) {
  if (status != nullptr) *status = 0;
  const auto [base, target] = SplitUrl(url);
  const auto [host, port] = SplitHostPort(base);
  // Resolved once and checked; the call goes to that address, with the URL's Host.
  core::Result<std::vector<std::string>> addresses = policy.Resolve(host);
  if (!addresses.ok()) return addresses.status();
  // Each address in turn, as the client tries replicas: the next only when no connection is made.
  std::string bases;
  for (const std::string& address : *addresses) {
    const bool v6 = address.find(':') != std::string::npos;
    bases += (bases.empty() ? "http://" : ",http://") + (v6 ? "[" + address + "]" : address) + ":" +
             port;
  }
  net::HttpClientOptions client_options;
  client_options.timeout = timeout;
  core::Result<std::unique_ptr<net::HttpClient>> client =
      net::HttpClient::Create(bases, client_options);
  if (!client.ok()) return client.status();
  net::Headers headers = {{"Host", base.substr(std::string_view("http://").size())},
                          {"Content-Type", "application/json"},
                          {"X-Suanli-Signature", WebhookSignature(secret, body)}};
  for (const auto& header : extra) headers.push_back(header);
  core::Result<net::HttpResponse> answer = (*client)->Send("POST", target, body, headers);
  if (!answer.ok()) return answer.status();
  if (status != nullptr) *status = answer->status;
  if (answer->status < 200 || answer->status > 299) {
    return core::UnavailableError("the webhook answered " + std::to_string(answer->status));
  }
  return core::Status::Ok();
}

core::Status WebhookSender::Post(const WebhookDelivery& delivery) const {
  return PostWebhook(options_.policy, delivery.url, delivery.body, delivery.secret,
                     options_.timeout);
}

void WebhookSender::Loop() {
  mutex_.Lock();
  while (true) {
    wake_.Wait(mutex_, [this]() REQUIRES(mutex_) { return stopping_ || !due_.empty(); });
    if (stopping_) break;
    const core::MonotonicTime first = due_.begin()->first;
    if (first > core::MonotonicNow()) {
      // Until it is due, or something due sooner is sent.
      wake_.WaitUntil(mutex_, first, [this, first]() REQUIRES(mutex_) {
        return stopping_ || due_.empty() || due_.begin()->first < first;
      });
      continue;
    }
    WebhookDelivery delivery = std::move(due_.begin()->second);
    due_.erase(due_.begin());
    mutex_.Unlock();  // the call takes up to options_.timeout
    const core::Status posted = Post(delivery);
    mutex_.Lock();
    ++delivery.attempt;
    if (posted.ok()) {
      ++delivered_;
    } else if (delivery.attempt >= options_.attempts) {
      ++given_up_;
    } else {
      const auto backoff = options_.first_backoff * (int64_t{1} << (delivery.attempt - 1));
      due_.emplace(core::MonotonicNow() + backoff, std::move(delivery));
    }
  }
  mutex_.Unlock();
}

}  // namespace suanli::server
