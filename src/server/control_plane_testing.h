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
