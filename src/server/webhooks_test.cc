#include "server/webhooks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "net/http_server.h"
#include "testing/webhook_receiver.h"

namespace suanli::server {
namespace {

using Receiver = suanli::testing::WebhookReceiver;

net::OutboundPolicy AllowingLoopback() {
  return *net::OutboundPolicy::Allowing({"127.0.0.0/8", "::1"});
}

TEST(WebhooksTest, TheSignatureIsHmacSha256OfTheBody) {
  // RFC 4231 test case 2.
  EXPECT_EQ(WebhookSignature("Jefe", "what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(WebhooksTest, OnlyHttpUrlsAreTaken) {
  EXPECT_TRUE(CheckWebhookUrl("http://example.com/hook").ok());
  EXPECT_TRUE(CheckWebhookUrl("http://10.0.0.1:8080").ok());
  EXPECT_FALSE(CheckWebhookUrl("https://example.com/hook").ok());
  EXPECT_FALSE(CheckWebhookUrl("ftp://x").ok());
  EXPECT_FALSE(CheckWebhookUrl("http:///path").ok());
  EXPECT_FALSE(CheckWebhookUrl("http://a b").ok());
}

// Issue 34: a webhook to an internal address is refused when it is made, not only at delivery.
TEST(WebhooksTest, AWebhookToAnAddressThePolicyRefusesIsRefusedWhenMade) {
  const net::OutboundPolicy strict;  // the default: every internal address refused
  for (const char* url : {"http://10.1.2.3/hook", "http://169.254.169.254/latest/meta-data",
                          "http://127.0.0.1:7070/v1/users", "http://[::1]:80/x",
                          "http://localhost:7070/", "http://api.localhost/"}) {
    const core::Status refused = CheckWebhookTarget(strict, url);
    EXPECT_EQ(refused.code(), core::StatusCode::kInvalidArgument) << url;
    EXPECT_NE(refused.message().find("--webhook-allow"), std::string::npos) << refused.ToString();
  }
  // A name is resolved and checked at each delivery, since its answers may change.
  EXPECT_TRUE(CheckWebhookTarget(strict, "http://hooks.example.com/x").ok());
  EXPECT_TRUE(CheckWebhookTarget(strict, "http://93.184.215.14:8080/x").ok());
  EXPECT_FALSE(CheckWebhookTarget(strict, "https://hooks.example.com/x").ok())
      << "the URL's form is checked first";
  EXPECT_TRUE(CheckWebhookTarget(AllowingLoopback(), "http://127.0.0.1:9/hook").ok())
      << "an operator's allowed range is taken";
  EXPECT_TRUE(CheckWebhookTarget(AllowingLoopback(), "http://[::1]:9/hook").ok());
}

TEST(WebhooksTest, AFailedDeliveryIsRetriedWithBackoffThenDeliveredSigned) {
  Receiver receiver(/*failures=*/2);
  WebhookSender sender(WebhookOptions{.attempts = 5,
                                      .first_backoff = std::chrono::milliseconds(20),
                                      .timeout = std::chrono::milliseconds(2'000),
                                      .policy = AllowingLoopback()});
  sender.Send({receiver.url(), R"({"id":"job_1","status":"COMPLETED"})", "secret", 0});
  for (int i = 0; i < 500 && sender.delivered() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(sender.delivered(), 1);
  const std::vector<net::HttpRequest> requests = receiver.requests();
  ASSERT_EQ(requests.size(), 3u);  // two 503s, then the 204
  for (const net::HttpRequest& request : requests) {
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.target, "/hook?x=1");
    EXPECT_EQ(request.body, R"({"id":"job_1","status":"COMPLETED"})");
    EXPECT_EQ(request.Header("x-suanli-signature"), WebhookSignature("secret", request.body));
  }
}

TEST(WebhooksTest, ADeliveryThatAlwaysFailsIsGivenUpAfterItsAttempts) {
  Receiver receiver(/*failures=*/100);
  WebhookSender sender(WebhookOptions{.attempts = 3,
                                      .first_backoff = std::chrono::milliseconds(10),
                                      .timeout = std::chrono::milliseconds(2'000),
                                      .policy = AllowingLoopback()});
  sender.Send({receiver.url(), "{}", "secret", 0});
  for (int i = 0; i < 500 && sender.given_up() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(sender.given_up(), 1);
  EXPECT_EQ(receiver.requests().size(), 3u);
  EXPECT_EQ(sender.delivered(), 0);
}

// A user's webhook is no way into the server's own network: the receiver on loopback is never
// called (an adversary once made the server POST to its own /v1/users), under any spelling of
// loopback, and the answer says it was refused by policy, not what the port said.
TEST(WebhooksTest, ALoopbackReceiverIsRefusedByPolicyWithoutACall) {
  Receiver receiver(/*failures=*/0);
  const std::string after_colon = receiver.url().substr(receiver.url().rfind(':') + 1);
  const std::string port = after_colon.substr(0, after_colon.find('/'));
  net::OutboundPolicy policy;
  policy.WithOwnAddresses();
  for (const std::string host : {"127.0.0.1", "localhost", "127.1", "2130706433", "0.0.0.0"}) {
    int status = -1;
    const core::Status posted =
        PostWebhook(policy, "http://" + host + ":" + port + "/v1/users", "{}", "secret",
                    std::chrono::milliseconds(2'000), &status);
    EXPECT_EQ(posted.code(), core::StatusCode::kPermissionDenied) << host;
    EXPECT_NE(posted.message().find("refused by policy"), std::string::npos) << posted.message();
    EXPECT_EQ(status, 0);
  }
  WebhookSender sender(WebhookOptions{.attempts = 1, .policy = policy});
  sender.Send({receiver.url(), "{}", "secret", 0});
  for (int i = 0; i < 500 && sender.given_up() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(sender.given_up(), 1);
  EXPECT_TRUE(receiver.requests().empty());
  // The operator's allowed range reaches it, with the URL's own Host.
  EXPECT_TRUE(PostWebhook(AllowingLoopback(), "http://localhost:" + port + "/hook", "{}", "secret",
                          std::chrono::milliseconds(2'000))
                  .ok());
  ASSERT_EQ(receiver.requests().size(), 1u);
  EXPECT_EQ(receiver.requests()[0].Header("host"), "localhost:" + port);
}

}  // namespace
}  // namespace suanli::server
