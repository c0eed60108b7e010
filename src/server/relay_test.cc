// The relay's queues, long polls and deadlines, with a ManualClock. The expiry thread checks every
// few milliseconds, so a passed deadline is seen within a short real wait.
#include "server/relay.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"

namespace suanli::server {
namespace {

using std::chrono::seconds;

// Collects one reply or one delivery, and lets the test wait for it in real time. The callback
// may outlive it (a relay destroyed last answers what still waits).
template <typename T>
class Once {
 public:
  std::function<void(T)> Callback() {
    return [promise = promise_](T value) { promise->set_value(std::move(value)); };
  }
  bool Arrived(std::chrono::milliseconds within = std::chrono::seconds(5)) {
    return future_.wait_for(within) == std::future_status::ready;
  }
  T Get() { return future_.get(); }

 private:
  std::shared_ptr<std::promise<T>> promise_ = std::make_shared<std::promise<T>>();
  std::future<T> future_ = promise_->get_future();
};

class RelayTest : public ::testing::Test {
 protected:
  RelayOptions Options() {
    RelayOptions options;
    options.answer_within = seconds(30);
    options.max_waiting_per_node = 3;
    options.check_every = std::chrono::milliseconds(5);
    return options;
  }
  std::unique_ptr<Relay> NewRelay() {
    return std::make_unique<Relay>(
        clock_, [this] { return "rly_" + std::to_string(++ids_); }, Options());
  }
  static RelayRequest Logs(std::string pod) {
    RelayRequest request;
    request.pod_id = std::move(pod);
    request.tail = 10;
    return request;
  }
  static net::HttpResponse Text(int status, std::string body) {
    net::HttpResponse response;
    response.status = status;
    response.content_type = "text/plain";
    response.body = std::move(body);
    return response;
  }

  core::ManualClock clock_{core::TimePoint(seconds(1'000'000))};
  std::atomic<int> ids_{0};
};

TEST_F(RelayTest, AQueuedRequestGoesToTheNextPollAndItsAnswerToTheUser) {
  auto relay = NewRelay();
  Once<net::HttpResponse> reply;
  ASSERT_TRUE(relay->Submit("node_a", "a", Logs("pod_1"), reply.Callback()).ok());
  Once<std::vector<RelayRequest>> poll;
  relay->Poll("node_a", clock_.Now() + seconds(10), 16, poll.Callback());
  ASSERT_TRUE(poll.Arrived());
  const std::vector<RelayRequest> requests = poll.Get();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].pod_id, "pod_1");
  EXPECT_EQ(requests[0].tail, 10);
  EXPECT_FALSE(reply.Arrived(std::chrono::milliseconds(20)));
  ASSERT_TRUE(relay->Answer("node_a", requests[0].id, Text(200, "hello\n")).ok());
  ASSERT_TRUE(reply.Arrived());
  EXPECT_EQ(reply.Get().body, "hello\n");
  EXPECT_EQ(relay->waiting(), 0u);
}

TEST_F(RelayTest, AWaitingPollIsAnsweredAsSoonAsARequestArrives) {
  auto relay = NewRelay();
  Once<std::vector<RelayRequest>> poll;
  relay->Poll("node_a", clock_.Now() + seconds(10), 16, poll.Callback());
  EXPECT_FALSE(poll.Arrived(std::chrono::milliseconds(30)));
  Once<net::HttpResponse> reply;
  ASSERT_TRUE(relay->Submit("node_a", "a", Logs("pod_1"), reply.Callback()).ok());
  ASSERT_TRUE(poll.Arrived());
  EXPECT_EQ(poll.Get().size(), 1u);
}

TEST_F(RelayTest, APollEndsEmptyWhenItsTimeIsUpAndOtherNodesRequestsAreNotItsOwn) {
  auto relay = NewRelay();
  Once<net::HttpResponse> reply;
  ASSERT_TRUE(relay->Submit("node_b", "b", Logs("pod_2"), reply.Callback()).ok());
  Once<std::vector<RelayRequest>> poll;
  relay->Poll("node_a", clock_.Now() + seconds(10), 16, poll.Callback());
  EXPECT_FALSE(poll.Arrived(std::chrono::milliseconds(30)));
  clock_.Advance(seconds(11));
  ASSERT_TRUE(poll.Arrived());
  EXPECT_TRUE(poll.Get().empty());
}

TEST_F(RelayTest, ANewerPollOfTheSameNodeSupersedesTheWaitingOne) {
  auto relay = NewRelay();
  Once<std::vector<RelayRequest>> old_poll, new_poll;
  relay->Poll("node_a", clock_.Now() + seconds(10), 16, old_poll.Callback());
  relay->Poll("node_a", clock_.Now() + seconds(10), 16, new_poll.Callback());
  ASSERT_TRUE(old_poll.Arrived());
  EXPECT_TRUE(old_poll.Get().empty());
  Once<net::HttpResponse> reply;
  ASSERT_TRUE(relay->Submit("node_a", "a", Logs("pod_1"), reply.Callback()).ok());
  ASSERT_TRUE(new_poll.Arrived());
  EXPECT_EQ(new_poll.Get().size(), 1u);
}

TEST_F(RelayTest, OnlyTheNodeARequestWasQueuedForMayAnswerItAndOnlyOnce) {
  auto relay = NewRelay();
  Once<net::HttpResponse> reply;
  ASSERT_TRUE(relay->Submit("node_a", "a", Logs("pod_1"), reply.Callback()).ok());
  Once<std::vector<RelayRequest>> poll;
  relay->Poll("node_a", clock_.Now(), 16, poll.Callback());
  ASSERT_TRUE(poll.Arrived());
  const std::string id = poll.Get().at(0).id;
  EXPECT_EQ(relay->Answer("node_b", id, Text(200, "forged")).code(), core::StatusCode::kNotFound);
  EXPECT_EQ(relay->Answer("node_a", "rly_unknown", Text(200, "?")).code(),
            core::StatusCode::kNotFound);
  ASSERT_TRUE(relay->Answer("node_a", id, Text(200, "real")).ok());
  EXPECT_EQ(relay->Answer("node_a", id, Text(200, "again")).code(), core::StatusCode::kNotFound);
  ASSERT_TRUE(reply.Arrived());
  EXPECT_EQ(reply.Get().body, "real");
}

TEST_F(RelayTest, ARequestNotAnsweredInTimeGets504AndItsLateAnswerIsRefused) {
  auto relay = NewRelay();
  Once<net::HttpResponse> taken, never_taken;
  ASSERT_TRUE(relay->Submit("node_a", "a", Logs("pod_1"), taken.Callback()).ok());
  Once<std::vector<RelayRequest>> poll;
  relay->Poll("node_a", clock_.Now(), 1, poll.Callback());
  ASSERT_TRUE(poll.Arrived());
  const std::string id = poll.Get().at(0).id;
  ASSERT_TRUE(relay->Submit("node_a", "a", Logs("pod_1"), never_taken.Callback()).ok());
  clock_.Advance(seconds(29));
  EXPECT_FALSE(taken.Arrived(std::chrono::milliseconds(30)));
  clock_.Advance(seconds(2));
  ASSERT_TRUE(taken.Arrived());
  ASSERT_TRUE(never_taken.Arrived());
  const net::HttpResponse late = taken.Get();
  EXPECT_EQ(late.status, 504);
  EXPECT_NE(late.body.find("did not answer within 30 s"), std::string::npos) << late.body;
  const net::HttpResponse lost = never_taken.Get();
  EXPECT_EQ(lost.status, 504);
  EXPECT_NE(lost.body.find("did not pick this request up"), std::string::npos) << lost.body;
  EXPECT_EQ(relay->Answer("node_a", id, Text(200, "late")).code(), core::StatusCode::kNotFound);
  EXPECT_EQ(relay->waiting(), 0u);
}

TEST_F(RelayTest, TooManyWaitingRequestsForOneNodeAreRefusedAndOthersAreNot) {
  auto relay = NewRelay();
  std::vector<std::unique_ptr<Once<net::HttpResponse>>> replies;
  for (int i = 0; i < 3; ++i) {
    replies.push_back(std::make_unique<Once<net::HttpResponse>>());
    ASSERT_TRUE(relay->Submit("node_a", "a", Logs("pod_1"), replies.back()->Callback()).ok());
  }
  Once<net::HttpResponse> refused, other;
  const core::Status full = relay->Submit("node_a", "a", Logs("pod_1"), refused.Callback());
  EXPECT_EQ(full.code(), core::StatusCode::kResourceExhausted);
  EXPECT_TRUE(relay->Submit("node_b", "b", Logs("pod_2"), other.Callback()).ok());
}

TEST_F(RelayTest, StoppingAnswersEveryWaitingRequestAndPoll) {
  auto relay = NewRelay();
  Once<net::HttpResponse> reply;
  ASSERT_TRUE(relay->Submit("node_a", "a", Logs("pod_1"), reply.Callback()).ok());
  Once<std::vector<RelayRequest>> poll;
  relay->Poll("node_b", clock_.Now() + seconds(10), 16, poll.Callback());
  relay.reset();
  ASSERT_TRUE(reply.Arrived());
  EXPECT_EQ(reply.Get().status, 503);
  ASSERT_TRUE(poll.Arrived());
  EXPECT_TRUE(poll.Get().empty());
}

}  // namespace
}  // namespace suanli::server
