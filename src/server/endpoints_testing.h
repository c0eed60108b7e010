// The fixture of the control plane's serverless tests (control_plane_endpoints_test.cc,
// control_plane_endpoint_push_test.cc): the control plane on each store (control_plane_testing.h)
// with a node of four RTX 4090s and a user with credits.
#pragma once

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog_file.h"
#include "server/control_plane.h"
#include "server/control_plane_testing.h"
#include "server/secrets.h"
#include "store/postgres_testing.h"
#include "testing/temp_dir.h"

namespace suanli::server {

using core::PodState;
using serverless::JobStatus;
using std::chrono::seconds;

class EndpointsTest : public ControlPlaneOnStoreTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ControlPlaneOnStoreTest::SetUp());
    auto user = plane_->CreateUser(admin_, "alice", core::Role::kUser,
                                   core::Money::FromMicros(1'000'000'000));
    ASSERT_TRUE(user.ok());
    Durable(user->sequence);
    alice_ = Principal{user->value.id, core::Role::kUser, "", ""};
    auto join = plane_->CreateJoinToken(admin_, "test");
    ASSERT_TRUE(join.ok());
    NodeReport report;
    report.name = "n1";
    for (int i = 0; i < 4; ++i)
      report.gpus.push_back(
          {i, "GPU-" + std::to_string(i), "RTX 4090", 24, true, 0, core::kMilliGpu, ""});
    report.vcpu = 64;
    report.memory_gb = 256;
    report.disk_gb = 2000;
    auto node = plane_->RegisterNode(join->value.second, report);
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    Durable(node->sequence);
    node_ = *plane_->Authenticate(node->value.second);
  }

  void Tick() { Durable(plane_->Tick()); }

  std::string CreateEndpoint(int min_workers = 0, int max_workers = 3) {
    EndpointSpec spec;
    spec.name = "echo";
    spec.image = "busybox";
    spec.gpu_type = "4090";
    spec.min_workers = min_workers;
    spec.max_workers = max_workers;
    auto endpoint = plane_->CreateEndpoint(alice_, spec);
    EXPECT_TRUE(endpoint.ok()) << endpoint.status().ToString();
    Durable(endpoint->sequence);
    return endpoint->value.endpoint.id;
  }

  std::string Submit(const std::string& endpoint_id, std::string input = R"({"n":1})") {
    auto job = plane_->SubmitJob(alice_, endpoint_id, JobRequest{std::move(input), "", {}, {}});
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    Durable(job->sequence);
    return job->value.id;
  }

  EndpointInfo Info(const std::string& endpoint_id) {
    return plane_->GetEndpoint(alice_, endpoint_id)->value;
  }

  serverless::Job Job(const std::string& endpoint_id, const std::string& job_id) {
    return plane_->GetJob(alice_, endpoint_id, job_id)->value;
  }

  // Reports the worker's pod as `state` from the node's agent.
  // `ready`: its ports answer (the agent's probe).
  void ReportWorker(const std::string& pod_id, PodState state,
                    std::optional<bool> ready = std::nullopt) {
    PodReport report;
    report.seq = ++report_seq_[pod_id];
    report.state = state;
    report.ready = ready;
    report.at = clock_.Now();
    auto result = plane_->ReportPod(node_, pod_id, report);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    Durable(result->sequence);
  }

  std::string TokenOf(const std::string& pod_id) {
    return plane_->GetPod(alice_, pod_id)->value.env.at("SUANLI_WORKER_TOKEN");
  }

  std::vector<std::string> Workers(const std::string& endpoint_id, std::string_view state = {}) {
    std::vector<std::string> out;
    for (const EndpointInfo::Worker& worker : Info(endpoint_id).workers) {
      if (state.empty() || worker.state == state) out.push_back(worker.pod_id);
    }
    return out;
  }

  std::optional<serverless::Job> Take(const std::string& endpoint_id, const std::string& pod_id) {
    auto taken = plane_->TakeJob(endpoint_id, pod_id, TokenOf(pod_id));
    EXPECT_TRUE(taken.ok()) << taken.status().ToString();
    if (!taken.ok()) return std::nullopt;
    Durable(taken->sequence);
    return taken->value;
  }

  core::Status Finish(const std::string& endpoint_id, const std::string& pod_id,
                      const std::string& job_id, std::string output, std::string error = "") {
    auto finished = plane_->FinishJob(endpoint_id, pod_id, TokenOf(pod_id), job_id,
                                      std::move(output), std::move(error));
    if (finished.ok()) Durable(finished->sequence);
    return finished.status();
  }

  Principal alice_;
  Principal node_;
  std::map<std::string, int64_t> report_seq_;
};

}  // namespace suanli::server
