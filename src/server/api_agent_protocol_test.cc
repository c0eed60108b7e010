// The agent's protocol over real HTTP: the times an agent reports, and its long polls.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "billing/meter.h"
#include "catalog/catalog_file.h"
#include "core/clock.h"
#include "core/status.h"
#include "net/base64.h"
#include "server/api.h"
#include "server/api_testing.h"
#include "server/server.h"

namespace suanli::server {
namespace {

using core::FormatTime;
using core::ParseTime;

namespace json = boost::json;
using testing::ApiClient;
using testing::ApiReply;
using testing::Array;
using testing::Int;
using testing::IsApiError;
using testing::Str;

// --- The agent's protocol: times it reports, and long polls --------------------------------------

using ApiAgentProtocolTest = ApiBadInputTest;

int64_t GpuCharges(ApiClient& api, std::string_view token, std::string_view pod) {
  const ApiReply ledger = api.Get("/v1/billing/ledger", token);
  EXPECT_EQ(ledger.status, 200) << ledger.Describe();
  int64_t sum = 0;
  for (const json::value& entry : Array(ledger.json, "entries")) {
    if (Str(entry, "pod_id") == pod && Str(entry, "kind") == "gpu") {
      sum -= Int(entry, "amount_micros");
    }
  }
  return sum;
}

TEST_F(ApiAgentProtocolTest, AReportFromTheFutureIsTakenAsNowSoNoUnlivedSecondIsBilled) {
  const ApiReply pod = api().Get("/v1/pods/" + running_, a_.token);
  const core::Money price = core::Money::FromMicros(Int(pod.json, "gpu_price_per_hour_micros"));
  ASSERT_GT(price.micros(), 0);
  const core::TimePoint since = clock_.Now();
  ASSERT_EQ(Str(pod.json, "running_since"), FormatTime(since));
  clock_.Advance(std::chrono::seconds(100));
  const ApiReply stopped =
      api().PostJson("/v1/agent/pods/" + running_ + "/status", node_.token,
                     json::object{{"seq", 2},
                                  {"state", "stopped"},
                                  {"at", FormatTime(clock_.Now() + std::chrono::hours(5))}});
  ASSERT_EQ(stopped.status, 200) << stopped.Describe();
  EXPECT_EQ(Str(stopped.json, "state_since"), Now());
  EXPECT_EQ(GpuCharges(api(), a_.token, running_),
            billing::ChargeBetween(price, since, since, clock_.Now()).micros());
  EXPECT_EQ(GpuCharges(api(), a_.token, running_), price.micros() * 100 / 3600);
}

TEST_F(ApiAgentProtocolTest, AReportFromBeforeTheLastChangeIsTakenAsThatChange) {
  clock_.Advance(std::chrono::seconds(100));
  const ApiReply stopped =
      api().PostJson("/v1/agent/pods/" + running_ + "/status", node_.token,
                     json::object{{"seq", 2},
                                  {"state", "stopped"},
                                  {"at", FormatTime(clock_.Now() - std::chrono::hours(5))}});
  ASSERT_EQ(stopped.status, 200) << stopped.Describe();
  EXPECT_EQ(Str(stopped.json, "state_since"), FormatTime(clock_.Now() - std::chrono::seconds(100)));
  EXPECT_EQ(GpuCharges(api(), a_.token, running_), 0) << "no second ran after it stopped";
}

TEST_F(ApiAgentProtocolTest, ALongPollWakesWhenThePodsDesiredStateChanges) {
  const ApiReply now = api().Get("/v1/agent/pods", node_.token);
  ASSERT_EQ(now.status, 200) << now.Describe();
  const int64_t generation = Int(now.json, "generation");
  const std::string url = "http://127.0.0.1:" + std::to_string(server_->port());
  std::future<ApiReply> poll = std::async(std::launch::async, [url, generation, this] {
    ApiClient agent(url);
    return agent.Get("/v1/agent/pods?after=" + std::to_string(generation) + "&wait_s=60",
                     node_.token);
  });
  // It waits: nothing changed (the clock stands still, so its 60 s never pass).
  EXPECT_EQ(poll.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  ASSERT_EQ(api().Post("/v1/pods/" + running_ + "/stop", a_.token).status, 200);
  ASSERT_EQ(poll.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const ApiReply woke = poll.get();
  ASSERT_EQ(woke.status, 200) << woke.Describe();
  EXPECT_GT(Int(woke.json, "generation"), generation);
  ASSERT_EQ(Array(woke.json, "pods").size(), 1u) << woke.text;
  EXPECT_EQ(Str(Array(woke.json, "pods").front(), "desired_state"), "stopped");
}

TEST_F(ApiAgentProtocolTest, ALongPollAnswersUnchangedOnceItsTimeIsUp) {
  const ApiReply now = api().Get("/v1/agent/pods", node_.token);
  const int64_t generation = Int(now.json, "generation");
  const std::string url = "http://127.0.0.1:" + std::to_string(server_->port());
  std::future<ApiReply> poll = std::async(std::launch::async, [url, generation, this] {
    ApiClient agent(url);
    return agent.Get("/v1/agent/pods?after=" + std::to_string(generation) + "&wait_s=5",
                     node_.token);
  });
  EXPECT_EQ(poll.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  clock_.Advance(std::chrono::seconds(6));  // the server's ticker notices within a tick
  ASSERT_EQ(poll.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const ApiReply answered = poll.get();
  ASSERT_EQ(answered.status, 200) << answered.Describe();
  EXPECT_EQ(Int(answered.json, "generation"), generation);
}

}  // namespace
}  // namespace suanli::server
