// Helpers for the store's tests and benchmark: sample records (TempDir is testing/temp_dir.h).
//
// Test-only; nothing in the server includes this.
#pragma once

#include <chrono>
#include <string>

#include "core/ledger_types.h"
#include "store/store.h"

namespace suanli::store::testing {

// 2025-01-01T00:00:00Z plus `seconds`.
inline core::TimePoint At(int64_t seconds) {
  return core::TimePoint(std::chrono::seconds(1'735'689'600 + seconds));
}

inline core::Transition MakeTransition(int64_t seq, std::string pod_id, std::string user_id,
                                       int64_t at_seconds) {
  core::Transition transition;
  transition.seq = seq;
  transition.pod_id = std::move(pod_id);
  transition.user_id = std::move(user_id);
  transition.at = At(at_seconds);
  transition.from = core::PodState::kStarting;
  transition.to = core::PodState::kRunning;
  transition.node_id = "node-1";
  transition.gpu_type = "RTX 4090";
  transition.gpu_count = 2;
  transition.gpu_price_per_hour = core::Money::FromMicros(1'480'000);
  transition.reason = "the container started";
  return transition;
}

// A GPU charge for [from_seconds, to_seconds).
inline core::LedgerEntry MakeCharge(int64_t seq, std::string user_id, std::string pod_id,
                                    int64_t from_seconds, int64_t to_seconds) {
  core::LedgerEntry entry;
  entry.seq = seq;
  entry.user_id = std::move(user_id);
  entry.pod_id = std::move(pod_id);
  entry.kind = core::LedgerKind::kGpu;
  entry.amount = core::Money::FromMicros(-411 * (to_seconds - from_seconds));
  entry.from = At(from_seconds);
  entry.to = At(to_seconds);
  entry.at = At(to_seconds) + std::chrono::milliseconds(3);
  entry.note = "2 x RTX 4090";
  return entry;
}

// A pod document of about 600 bytes, like the control plane writes.
inline Document MakePodDocument(const std::string& id, int64_t version) {
  return {
      Collection::kPods, id,
      R"({"id":")" + id + R"(","version":)" + std::to_string(version) +
          R"(,"user_id":"u-7f3a9c2e","name":"llama-finetune","template_id":"pytorch-2.4-cuda12",)"
          R"("image":"docker.io/pytorch/pytorch:2.4.0-cuda12.4-cudnn9-devel","gpu_type":"RTX 4090",)"
          R"("gpu_count":2,"interruptible":false,"desired":"running","actual":"running",)"
          R"("node_id":"node-gpu-03","gpu_indexes":[2,3],"vcpu":16,"ram_mb":65536,"disk_gb":200,)"
          R"("volume_gb":500,"gpu_price_micros_per_hour":1480000,"env":{"HF_HOME":"/workspace/hf",)"
          R"("WANDB_PROJECT":"finetune"},"ports":[{"container":8888,"host":40123,"proto":"http"},)"
          R"({"container":22,"host":40124,"proto":"tcp"}],"created_at":"2025-01-01T00:00:00Z",)"
          R"("started_at":"2025-01-01T00:00:41Z","reason":""})"};
}

}  // namespace suanli::store::testing
