#include "wire/relay_protocol.h"

#include <gtest/gtest.h>

namespace suanli::wire {
namespace {

TEST(RelayProtocolTest, RequestsRoundTrip) {
  RelayRequest logs;
  logs.id = "rly_1";
  logs.pod_id = "pod_1";
  logs.kind = RelayRequest::Kind::kLogs;
  logs.tail = 100;
  logs.since = "2026-12-02T14:46:25.123Z";
  logs.timestamps = true;
  RelayRequest http;
  http.id = "rly_2";
  http.pod_id = "pod_1";
  http.kind = RelayRequest::Kind::kHttp;
  http.port = 8080;
  http.method = "POST";
  http.target = "/run?x=1";
  http.headers = {{"content-type", "application/json"}, {"x-probe", "1"}};
  http.body = std::string("\0binary\xff", 8);
  RelayRequest job = http;  // a serverless job posted to its worker, with its own wait
  job.id = "rly_3";
  job.timeout_ms = 600'000;
  RelayRequest chunk;
  chunk.id = "rly_4";
  chunk.pod_id = "pod_1";
  chunk.kind = RelayRequest::Kind::kVolumeArchive;
  chunk.volume = "suanli-pod_1";
  chunk.move_id = "mv_1";
  chunk.offset = int64_t{5} << 30;  // past 4 GiB
  chunk.length = kMaxVolumeChunkBytes;
  RelayRequest remove;
  remove.id = "rly_5";
  remove.pod_id = "pod_1";
  remove.kind = RelayRequest::Kind::kRemoveVolume;
  remove.volume = "suanli-vol_1";
  RelayRequest snapshot;
  snapshot.id = "rly_6";
  snapshot.pod_id = "vol_1";
  snapshot.kind = RelayRequest::Kind::kSnapshotVolume;
  snapshot.volume = "suanli-vol_1";
  snapshot.snapshot = "snap_1";
  RelayRequest restore = snapshot;
  restore.id = "rly_7";
  restore.kind = RelayRequest::Kind::kRestoreSnapshot;
  restore.volume = "suanli-vol_2";
  restore.sha256 = std::string(64, 'a');
  RelayRequest forget;
  forget.id = "rly_8";
  forget.pod_id = "snap_1";
  forget.kind = RelayRequest::Kind::kRemoveSnapshot;
  forget.snapshot = "snap_1";
  const std::vector<RelayRequest> requests{logs,   http,     job,     chunk,
                                           remove, snapshot, restore, forget};
  core::Result<RelayBatch> decoded = DecodeRelayRequests(EncodeRelayRequests(requests));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->requests, requests);
  EXPECT_TRUE(decoded->unreadable.empty());
}

TEST(RelayProtocolTest, AnswersRoundTrip) {
  const RelayAnswer answer{201, {{"content-type", "text/plain"}, {"x-pod", "echo"}}, "made\n"};
  core::Result<RelayAnswer> decoded = DecodeRelayAnswer(EncodeRelayAnswer(answer));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, answer);
}

TEST(RelayProtocolTest, AMalformedBatchIsRefusedAndAMalformedRequestIsSetAsideAlone) {
  EXPECT_TRUE(DecodeRelayRequests(R"({"requests":[],"later":1})").ok());
  for (const char* bad : {"", "{", R"({"requests":{}})", R"({})"}) {
    EXPECT_FALSE(DecodeRelayRequests(bad).ok()) << bad;
  }
  // Once one odd request cost the whole batch (issue 34, item 8): each is now read on its own,
  // beside a good one that is still served.
  constexpr std::string_view kGood = R"({"id":"good","pod_id":"p","kind":"logs"})";
  for (const std::string bad : {
           R"({"pod_id":"p","kind":"logs"})",
           R"({"id":"r","pod_id":"p","kind":"exec"})",
           R"({"id":"r","pod_id":"p","kind":"volume_archive","volume":"v",
               "move_id":"m","offset":-1,"length":1})",
           R"({"id":"r","pod_id":"p","kind":"volume_archive","volume":"v",
               "move_id":"m","offset":0,"length":99999999})",
           R"({"id":"r","pod_id":"p","kind":"remove_volume"})",
           R"({"id":"r","pod_id":"p","kind":"snapshot_volume","volume":"v"})",
           R"({"id":"r","pod_id":"p","kind":"restore_snapshot","volume":"v",
               "snapshot":"snap_1"})",
           R"({"id":"r","pod_id":"p","kind":"remove_snapshot"})",
           R"({"id":"r","pod_id":"p","kind":"http","method":"GET","target":"/"})",
           R"({"id":"r","pod_id":"p","kind":"http","port":80,"method":"GET",
               "target":"/","body_base64":"***"})",
           R"(7)",
       }) {
    const core::Result<RelayBatch> batch =
        DecodeRelayRequests(R"({"requests":[)" + bad + "," + std::string(kGood) + "]}");
    ASSERT_TRUE(batch.ok()) << bad << ": " << batch.status().message();
    ASSERT_EQ(batch->requests.size(), 1u) << bad;
    EXPECT_EQ(batch->requests[0].id, "good");
    ASSERT_EQ(batch->unreadable.size(), 1u) << bad;
    EXPECT_EQ(batch->unreadable[0].first, bad.find(R"("id":"r")") != std::string::npos ? "r" : "")
        << bad;
    EXPECT_FALSE(batch->unreadable[0].second.empty()) << bad;
  }
}

TEST(RelayProtocolTest, TheServerRefusesAnswersThatCouldSmuggleHeaders) {
  const struct {
    std::string body;
    std::string error;
  } cases[] = {
      {R"({"status":200,"headers":[["x-a","1\r\nset-cookie: stolen"]]})", "headers: each must be"},
      {R"({"status":200,"headers":[["bad name","1"]]})", "headers: each must be"},
      {R"({"status":200,"headers":[["x-a"]]})", "headers: each must be"},
      {R"({"status":99})", "status: must be an integer from 200 to 599"},
      {R"({"status":200,"body_base64":"@@"})", "body_base64: "},
      {R"({"status":200,"trailers":[]})", "unknown field 'trailers'"},
  };
  for (const auto& bad : cases) {
    core::Result<RelayAnswer> refused = DecodeRelayAnswer(bad.body);
    ASSERT_FALSE(refused.ok()) << bad.body;
    EXPECT_NE(refused.status().message().find(bad.error), std::string::npos)
        << bad.body << " -> " << refused.status().message();
  }
}

}  // namespace
}  // namespace suanli::wire
