// The API's read path for pollers and for people with many pods: pages of the pod list, its
// compact view, and ETag / If-None-Match answered with 304.
#include <algorithm>
#include <string>
#include <vector>

#include "server/api_testing.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using suanli::testing::ApiReply;
using suanli::testing::Array;
using suanli::testing::Str;

class ApiReadPathTest : public ApiServerTest {
 protected:
  void SetUp() override {
    StartServer();
    node_ = RegisterNode("n1");  // one GPU: the first pod runs, the others wait for it
    alice_ = CreateUser("alice", kPlentyOfCredits);
    for (int i = 0; i < 5; ++i) pods_.push_back(CreatePod(alice_.token));
  }

  Account node_;
  Account alice_;
  std::vector<std::string> pods_;
};

TEST_F(ApiReadPathTest, ThePodListComesInPagesThatFollowOneAnother) {
  std::vector<std::string> seen;
  std::string after;
  int pages = 0;
  do {
    const ApiReply page =
        api().Get("/v1/pods?limit=2" + (after.empty() ? "" : "&after=" + after), alice_.token);
    ASSERT_EQ(page.status, 200) << page.Describe();
    const json::array& pods = Array(page.json, "pods");
    EXPECT_LE(pods.size(), 2u);
    for (const json::value& pod : pods) seen.push_back(Str(pod, "id"));
    after = Str(page.json, "next_after");
    if (!after.empty()) {
      EXPECT_EQ(after, seen.back());
    }
    ASSERT_LT(++pages, 10);
  } while (!after.empty());
  EXPECT_EQ(pages, 3);  // 2 + 2 + 1, and the last says no more
  std::vector<std::string> sorted = pods_;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(seen, sorted);  // in id order, each once

  // Without a limit, one bounded page holds all five.
  const ApiReply all = api().Get("/v1/pods", alice_.token);
  EXPECT_EQ(Array(all.json, "pods").size(), 5u);
  EXPECT_EQ(Str(all.json, "next_after"), "");
  // After the last id, nothing.
  EXPECT_TRUE(
      Array(api().Get("/v1/pods?after=" + sorted.back(), alice_.token).json, "pods").empty());
}

TEST_F(ApiReadPathTest, TheCompactViewHasWhatAListShowsAndNoSecrets) {
  const ApiReply compact = api().Get("/v1/pods?view=compact", alice_.token);
  ASSERT_EQ(compact.status, 200) << compact.Describe();
  const ApiReply full = api().Get("/v1/pods", alice_.token);
  ASSERT_EQ(Array(compact.json, "pods").size(), 5u);
  const json::object& pod = Array(compact.json, "pods").front().as_object();
  for (const char* field : {"id", "name", "state", "state_reason", "gpu_type", "gpu_count",
                            "gpu_milli", "node_id", "cost_micros", "uptime_s", "actions"}) {
    EXPECT_TRUE(pod.contains(field)) << field;
  }
  for (const char* field : {"env", "command", "jupyter_token", "link_token", "port_mappings"}) {
    EXPECT_FALSE(pod.contains(field)) << field;
  }
  EXPECT_LT(compact.text.size() * 2, full.text.size()) << "compact should be well under half";
}

TEST_F(ApiReadPathTest, ABadPageIsRefusedSayingWhatIsAllowed) {
  for (const char* query : {"limit=0", "limit=1001", "limit=two", "limit=-1"}) {
    const ApiReply reply = api().Get(std::string("/v1/pods?") + query, alice_.token);
    EXPECT_EQ(reply.status, 400) << query;
    EXPECT_EQ(reply.error_message().find("limit must be a whole number from 1 to 1000"), 0u)
        << reply.error_message();
  }
  const ApiReply view = api().Get("/v1/pods?view=tiny", alice_.token);
  EXPECT_EQ(view.status, 400);
  EXPECT_EQ(view.error_message(), "view must be full or compact, not 'tiny'");
}

TEST_F(ApiReadPathTest, APollerThatHasTheAnswerGetsA304UntilItChanges) {
  const std::string pod = "/v1/pods/" + pods_.back();  // pending: nothing in it moves with time
  const ApiReply first = api().Get(pod, alice_.token);
  ASSERT_EQ(first.status, 200) << first.Describe();
  const std::string tag = first.Header("etag");
  ASSERT_EQ(tag.size(), 18u) << tag;  // a quoted 64-bit hash
  EXPECT_EQ(first.Header("cache-control"), "private, no-cache");

  const ApiReply same = api().Send("GET", pod, alice_.token, {}, {{"If-None-Match", tag}});
  EXPECT_EQ(same.status, 304);
  EXPECT_EQ(same.text, "");
  EXPECT_EQ(same.Header("etag"), tag);
  // A list of tags, or a weak one, is matched too; another tag is not.
  EXPECT_EQ(api().Send("GET", pod, alice_.token, {}, {{"If-None-Match", "\"x\", W/" + tag}}).status,
            304);
  EXPECT_EQ(api().Send("GET", pod, alice_.token, {}, {{"If-None-Match", "\"x\""}}).status, 200);

  // Once the pod changes, the old tag gets the new answer.
  ASSERT_EQ(api().Post(pod + "/stop", alice_.token).status, 200);
  const ApiReply changed = api().Send("GET", pod, alice_.token, {}, {{"If-None-Match", tag}});
  EXPECT_EQ(changed.status, 200);
  EXPECT_NE(changed.Header("etag"), tag);
  EXPECT_EQ(Str(changed.json, "desired_state"), "stopped");

  // The list has its tag too, and another user's list another.
  const ApiReply list = api().Get("/v1/pods", alice_.token);
  EXPECT_EQ(api()
                .Send("GET", "/v1/pods", alice_.token, {}, {{"If-None-Match", list.Header("etag")}})
                .status,
            304);
  const Account bob = CreateUser("bob", kPlentyOfCredits);
  EXPECT_EQ(
      api().Send("GET", "/v1/pods", bob.token, {}, {{"If-None-Match", list.Header("etag")}}).status,
      200);
}

TEST_F(ApiReadPathTest, TheListsTagFollowsWhatMovesWithTimeAndEachPage) {
  // The first pod holds the node's GPU; once it runs, its uptime and cost grow each second.
  std::string placed;
  const ApiReply pending = api().Get("/v1/pods", alice_.token);
  for (const json::value& pod : Array(pending.json, "pods")) {
    if (!Str(pod, "node_id").empty()) placed = Str(pod, "id");
  }
  ASSERT_NE(placed, "");
  ASSERT_EQ(Report(node_.token, placed, 1, "running").status, 200);
  const ApiReply running = api().Get("/v1/pods", alice_.token);
  const std::string tag = running.Header("etag");
  ASSERT_EQ(tag.size(), 18u) << tag;
  EXPECT_EQ(api().Send("GET", "/v1/pods", alice_.token, {}, {{"If-None-Match", tag}}).status, 304);
  // Still standing: a second later the same tag names a different answer.
  clock_.Advance(core::Duration(std::chrono::seconds(1)));
  const ApiReply later = api().Send("GET", "/v1/pods", alice_.token, {}, {{"If-None-Match", tag}});
  ASSERT_EQ(later.status, 200);
  EXPECT_NE(later.Header("etag"), tag);
  EXPECT_NE(later.text, running.text);
  // The same pods in the compact view, or in another page, have another tag.
  const std::string compact = api().Get("/v1/pods?view=compact", alice_.token).Header("etag");
  const std::string first_two = api().Get("/v1/pods?limit=2", alice_.token).Header("etag");
  EXPECT_NE(compact, later.Header("etag"));
  EXPECT_NE(first_two, later.Header("etag"));
  EXPECT_NE(first_two, compact);
  // A 304 of the list carries the tag it matched, and no body.
  const ApiReply same =
      api().Send("GET", "/v1/pods?limit=2", alice_.token, {}, {{"If-None-Match", first_two}});
  EXPECT_EQ(same.status, 304);
  EXPECT_EQ(same.text, "");
  EXPECT_EQ(same.Header("etag"), first_two);
}

TEST_F(ApiReadPathTest, TheListIsTheSameTextAsEachPodsOwnView) {
  // The list writes each pod from cached pieces; GET /v1/pods/ID writes it whole. Both must say
  // the same, secrets included, for the owner.
  const ApiReply list = api().Get("/v1/pods", alice_.token);
  ASSERT_EQ(list.status, 200);
  for (const json::value& pod : Array(list.json, "pods")) {
    const ApiReply one = api().Get("/v1/pods/" + Str(pod, "id"), alice_.token);
    ASSERT_EQ(one.status, 200);
    EXPECT_TRUE(pod.as_object().contains("jupyter_token"));
    EXPECT_EQ(pod, one.json) << Str(pod, "id");
  }
}

}  // namespace
}  // namespace suanli::server
