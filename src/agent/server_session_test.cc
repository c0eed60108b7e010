#include "agent/server_session.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "testing/agent_fixture.h"

namespace suanli::agent {
namespace {

using testing::AgentFixture;

// A client of a server that is not there: a session that needs no server makes no request with it.
std::unique_ptr<net::HttpClient> NowhereClient() {
  core::Result<std::unique_ptr<net::HttpClient>> client =
      net::HttpClient::Create("http://127.0.0.1:1", {std::chrono::milliseconds(200)});
  EXPECT_TRUE(client.ok());
  return std::move(client).value();
}

class ServerSessionTest : public ::testing::Test {
 protected:
  AgentFixture fixture_;
  StatusReporter reporter_{fixture_.context()};
  GpuInventory gpus_;
  std::vector<core::GpuMeasurement> measurements_;
  ServerSession session_{fixture_.context(), reporter_, gpus_, nullptr,
                         [this] { return measurements_; }};
};

TEST_F(ServerSessionTest, TheSavedCredentialIsTheNodesIdentityWithoutAskingTheServer) {
  ASSERT_TRUE(fixture_.state().Set("node_token", "sln_saved").ok());
  ASSERT_TRUE(fixture_.state().Set("node_id", "node_saved").ok());
  std::unique_ptr<net::HttpClient> client = NowhereClient();
  EXPECT_TRUE(session_.EnsureRegistered(*client));
  EXPECT_EQ(fixture_.context().node_id(), "node_saved");
  EXPECT_EQ(fixture_.context().node_token(), "sln_saved");
  EXPECT_TRUE(fixture_.context().failure().ok());
}

TEST_F(ServerSessionTest, WithoutCredentialOrJoinTokenTheAgentGivesUpSayingHowToJoin) {
  std::unique_ptr<net::HttpClient> client = NowhereClient();
  EXPECT_FALSE(session_.EnsureRegistered(*client));
  const core::Status failure = fixture_.context().failure();
  EXPECT_EQ(failure.code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(failure.message().find("--join-token"), std::string::npos);
  EXPECT_TRUE(fixture_.context().node_id().empty());
}

TEST_F(ServerSessionTest, TheCachedDesiredPodsAreKnownBeforeTheServerAnswers) {
  EXPECT_FALSE(fixture_.context().HaveDesired());
  wire::DesiredPods desired;
  desired.generation = 7;
  desired.pods.push_back({AgentFixture::MakePod("pod_a"), {"ssh-ed25519 AAAA owner"}});
  ASSERT_TRUE(
      fixture_.state().Set("desired", wire::EncodeDesiredPods(desired, AgentFixture::kStart)).ok());
  session_.LoadCachedDesired();
  ASSERT_TRUE(fixture_.context().HaveDesired());
  ASSERT_EQ(fixture_.context().Desired().size(), 1u);
  EXPECT_EQ(fixture_.context().Desired()[0].pod.id, "pod_a");
}

TEST_F(ServerSessionTest, TheNodeReportOffersCatalogGpusAndCarriesTheMeasurements) {
  Gpu known;
  known.index = 0;
  known.uuid = "GPU-1111";
  known.type = "H100 SXM";
  known.memory_gb = 79.1;
  Gpu unknown = known;
  unknown.index = 1;
  unknown.uuid = "GPU-2222";
  unknown.type = "";  // not in the catalog: nothing to price it by
  gpus_.gpus = {known, unknown};
  measurements_ = {{0, 3000, 700, std::nullopt, std::nullopt}};

  core::Result<wire::NodeReport> report =
      wire::DecodeNodeReport(session_.NodeReportBody(wire::NodeReportFor::kRegistration),
                             wire::NodeReportFor::kRegistration);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->gpus.size(), 1u);
  EXPECT_EQ(report->gpus[0].uuid, "GPU-1111");
  EXPECT_EQ(report->name, "test-node");
  EXPECT_EQ(report->agent_version, kAgentVersion);
  EXPECT_EQ(report->gpu_measurements, measurements_);
}

TEST_F(ServerSessionTest, AReportTheServerCannotReachIsKeptForLater) {
  PodReportFields report("pod_a", core::PodState::kStopped, fixture_.clock().Now());
  reporter_.Queue(report);
  std::unique_ptr<net::HttpClient> client = NowhereClient();
  EXPECT_EQ(reporter_.Send([&](const PendingReport& pending) {
    return session_.SendReport(*client, pending);
  }),
            -1);
  EXPECT_EQ(fixture_.Reports().size(), 1u);
  EXPECT_NE(fixture_.log().find("cannot reach the server"), std::string::npos);
}

}  // namespace
}  // namespace suanli::agent
