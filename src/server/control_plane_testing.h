// The base of the control plane's tests: a ControlPlane on a real store, each test on both stores
// (a SQLite file, and a PostgreSQL database of its own on the test cluster: instantiate the suite
// with SUANLI_INSTANTIATE_ON_BOTH_STORES), with time that moves only when a test says so, and its
// admin.
#pragma once

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <optional>
#include <string>

#include "catalog/catalog_file.h"
#include "server/control_plane.h"
#include "server/secrets.h"
#include "store/commit_queue.h"
#include "store/postgres_testing.h"
#include "testing/temp_dir.h"

namespace suanli::server {

class ControlPlaneOnStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    clock_.Set(core::TimePoint(std::chrono::seconds(1'796'200'000)));  // 2026-12-02
    store_under_test_.emplace(GetParam(), dir_.File("suanli.db"));
    ASSERT_EQ(store_under_test_->error(), "");
    Open();
    admin_ = *plane_->Authenticate(admin_token_);
  }

  void Open() {
    store_ = store_under_test_->Open().value();
    queue_ = std::make_unique<store::CommitQueue>(*store_);
    std::string token;
    auto plane = ControlPlane::Open(*store_, *queue_, *catalog::LoadBuiltInCatalog(), clock_,
                                    entropy_, options_, &token);
    ASSERT_TRUE(plane.ok()) << plane.status().ToString();
    plane_ = std::move(*plane);
    if (!token.empty()) admin_token_ = token;
  }

  // Every test ends with the pod indexes what the pods make them: a pod written without
  // Change::Dirty would leave one stale.
  void TearDown() override {
    if (plane_ == nullptr) return;
    core::MutexLock lock(plane_->mutex_);
    const core::Status pods = plane_->pods_.CheckIndexes();
    EXPECT_TRUE(pods.ok()) << pods.ToString();
    const core::Status jobs = plane_->serverless_.CheckIndexes();
    EXPECT_TRUE(jobs.ok()) << jobs.ToString();
  }

  // A restart: the control plane loads again from what its store holds.
  void Reopen() {
    plane_.reset();
    queue_.reset();
    store_.reset();
    Open();
  }

  // Blocks until `sequence` is durable; a test never acts on a write that is not.
  void Durable(uint64_t sequence) {
    std::promise<core::Status> done;
    queue_->AfterDurable(sequence, [&done](const core::Status& status) { done.set_value(status); });
    ASSERT_TRUE(done.get_future().get().ok());
  }

  // The common steps of the rules' tests: a user with credits, a node of GPUs, a pod, reports.
  Principal NewUser(std::string name, std::string_view credits) {
    auto user = plane_->CreateUser(admin_, std::move(name), core::Role::kUser,
                                   *core::Money::ParseDollars(credits));
    EXPECT_TRUE(user.ok()) << user.status().ToString();
    Durable(user->sequence);
    return Principal{user->value.id, core::Role::kUser, "", ""};
  }

  Principal NewNode(std::string name, int gpus, std::string type = "RTX 4090", int vcpu = 64) {
    std::vector<core::GpuDevice> devices;
    for (int i = 0; i < gpus; ++i) {
      devices.push_back({i, "GPU-" + std::to_string(i), type, 24, true, 0, core::kMilliGpu, ""});
    }
    return NewNode(std::move(name), std::move(devices), vcpu);
  }

  // A node of `vcpu` vCPU, 256 GB and these GPUs, registered with a fresh join token.
  Principal NewNode(std::string name, std::vector<core::GpuDevice> gpus, int vcpu = 64) {
    auto join = plane_->CreateJoinToken(admin_, "test");
    EXPECT_TRUE(join.ok());
    NodeReport report;
    report.name = std::move(name);
    report.gpus = std::move(gpus);
    report.vcpu = vcpu;
    report.memory_gb = 256;
    report.disk_gb = 2000;
    auto node = plane_->RegisterNode(join->value.second, report);
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    Durable(node->sequence);
    return *plane_->Authenticate(node->value.second);
  }

  void Heartbeat(const Principal& node, int gpus) {
    NodeReport report;
    for (int i = 0; i < gpus; ++i)
      report.gpus.push_back(
          {i, "GPU-" + std::to_string(i), "RTX 4090", 24, true, 0, core::kMilliGpu, ""});
    report.vcpu = 64;
    report.memory_gb = 256;
    report.disk_gb = 2000;
    auto beat = plane_->Heartbeat(node, report);
    ASSERT_TRUE(beat.ok()) << beat.status().ToString();
    Durable(beat->sequence);
  }

  core::Pod CreatePod(const Principal& user, int gpus = 1, int volume_gb = 0,
                      bool interruptible = false) {
    PodSpec spec;
    spec.image = "busybox";
    spec.gpu_type = "4090";
    spec.gpu_count = gpus;
    spec.volume_gb = volume_gb;
    spec.interruptible = interruptible;
    spec.queue = true;  // tests make pods before their nodes join: queued on purpose
    auto pod = plane_->CreatePod(user, spec);
    EXPECT_TRUE(pod.ok()) << pod.status().ToString();
    Durable(pod->sequence);
    return pod->value;
  }

  core::Pod Get(const Principal& user, const std::string& id) {
    return plane_->GetPod(user, id)->value;
  }

  core::Status Report(const Principal& node, const std::string& pod_id, int64_t seq,
                      core::PodState state, core::TimePoint at) {
    PodReport report;
    report.seq = seq;
    report.state = state;
    report.at = at;
    auto result = plane_->ReportPod(node, pod_id, report);
    if (result.ok()) Durable(result->sequence);
    return result.status();
  }

  core::Money LedgerSum(const Principal& user, const std::string& pod_id) {
    core::Money sum;
    const std::vector<core::LedgerEntry> entries = plane_->Ledger(user, "").value();
    for (const core::LedgerEntry& entry : entries) {
      if (entry.pod_id == pod_id) sum = sum + entry.amount;
    }
    return sum;
  }

  suanli::testing::TempDir dir_;
  ControlPlaneOptions options_;  // a test may change them, then Reopen
  std::optional<store::testing::StoreUnderTest> store_under_test_;
  core::ManualClock clock_;
  OpenSslEntropy entropy_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<store::CommitQueue> queue_;
  std::unique_ptr<ControlPlane> plane_;
  std::string admin_token_;
  Principal admin_;
};

}  // namespace suanli::server
