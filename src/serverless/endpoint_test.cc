#include "serverless/endpoint.h"

#include <gtest/gtest.h>

namespace suanli::serverless {
namespace {

TEST(EndpointTest, DefaultsAreRunPodsAndValid) {
  const Endpoint endpoint;
  EXPECT_EQ(endpoint.min_workers, 0);
  EXPECT_EQ(endpoint.max_workers, 3);
  EXPECT_EQ(endpoint.idle_timeout.count(), 5);
  EXPECT_EQ(endpoint.execution_timeout.count(), 600);
  EXPECT_TRUE(CheckEndpoint(endpoint).ok());
}

TEST(EndpointTest, ASettingOutOfBoundsIsRefusedByName) {
  Endpoint endpoint;
  endpoint.min_workers = 4;
  core::Status status = CheckEndpoint(endpoint);
  EXPECT_EQ(status.code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("min_workers"), std::string::npos);
  endpoint = Endpoint();
  endpoint.idle_timeout = std::chrono::seconds(0);
  EXPECT_NE(CheckEndpoint(endpoint).message().find("idle_timeout_s"), std::string::npos);
  endpoint = Endpoint();
  endpoint.max_workers = kMaxWorkersLimit + 1;
  EXPECT_FALSE(CheckEndpoint(endpoint).ok());
}

TEST(EndpointTest, ScalerKindsHaveNames) {
  EXPECT_EQ(ParseScalerKind(ScalerKindName(ScalerKind::kRequestCount)), ScalerKind::kRequestCount);
  EXPECT_EQ(ParseScalerKind("queue_delay"), ScalerKind::kQueueDelay);
  EXPECT_EQ(ParseScalerKind("fast"), std::nullopt);
}

TEST(EndpointTest, HttpModeNeedsAPortAndAPathThatStartsWithSlash) {
  Endpoint endpoint;
  endpoint.worker_mode = WorkerMode::kHttp;
  EXPECT_NE(CheckEndpoint(endpoint).message().find("http_port"), std::string::npos);
  endpoint.http_port = 70'000;
  EXPECT_NE(CheckEndpoint(endpoint).message().find("http_port"), std::string::npos);
  endpoint.http_port = 8000;
  EXPECT_TRUE(CheckEndpoint(endpoint).ok());
  endpoint.http_path = "v1/completions";
  EXPECT_NE(CheckEndpoint(endpoint).message().find("http_path"), std::string::npos);
  endpoint.http_path = "/v1/a b";
  EXPECT_NE(CheckEndpoint(endpoint).message().find("http_path"), std::string::npos);
  endpoint.http_path = "/v1/completions?x=1";
  EXPECT_TRUE(CheckEndpoint(endpoint).ok());
  endpoint.http_concurrency = 0;
  EXPECT_NE(CheckEndpoint(endpoint).message().find("http_concurrency"), std::string::npos);
  endpoint.http_concurrency = kMaxHttpConcurrency + 1;
  EXPECT_NE(CheckEndpoint(endpoint).message().find("http_concurrency"), std::string::npos);
}

TEST(EndpointTest, QueueModeIgnoresTheHttpSettings) {
  Endpoint endpoint;
  endpoint.http_port = 0;
  endpoint.http_path = "not checked";
  EXPECT_TRUE(CheckEndpoint(endpoint).ok());
  EXPECT_EQ(ParseWorkerMode(WorkerModeName(WorkerMode::kHttp)), WorkerMode::kHttp);
  EXPECT_EQ(ParseWorkerMode("push"), std::nullopt);
}

}  // namespace
}  // namespace suanli::serverless
