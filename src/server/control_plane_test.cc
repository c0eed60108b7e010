#include "server/control_plane.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <future>
#include <optional>
#include <thread>

#include "advisor/model_zoo.h"
#include "billing/meter.h"
#include "billing/spend.h"
#include "catalog/catalog_file.h"
#include "server/control_plane_testing.h"
#include "server/event_webhooks.h"
#include "server/routes/pod_list.h"
#include "server/secrets.h"
#include "server/webhooks.h"
#include "store/postgres_testing.h"
#include "testing/temp_dir.h"
#include "testing/webhook_receiver.h"

namespace suanli::server {
namespace {

using core::Money;
using core::PodState;
using std::chrono::seconds;

Money Dollars(std::string_view text) { return *Money::ParseDollars(text); }

class ControlPlaneTest : public ControlPlaneOnStoreTest {};

// What a restart must find again runs on both stores; the rest of the suite, rules that a store
// cannot change, on SQLite only.
class ControlPlaneTestRestart : public ControlPlaneTest {};
SUANLI_INSTANTIATE_ON_BOTH_STORES(ControlPlaneTestRestart);
SUANLI_INSTANTIATE_ON_SQLITE(ControlPlaneTest);

TEST_P(ControlPlaneTestRestart, CreditsThatWouldPassTheBalanceLimitAreRefusedNotWrapped) {
  const Principal user = NewUser("ann", "0");
  const Money big = Money::FromMicros(Money::kMaxMicros / 4);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(plane_->AddCredits(admin_, user.user_id, big, "").ok());
  const auto over = plane_->AddCredits(admin_, user.user_id, Money::FromMicros(1), "");
  ASSERT_EQ(over.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(over.status().message().find("limit"), std::string::npos) << over.status().message();
  EXPECT_EQ(plane_->GetUser(admin_, user.user_id)->value.balance.micros(), Money::kMaxMicros);
  // The largest balance either way is read back after a restart, on both stores: a balance the
  // store's reader refused once made every restart fail for every tenant.
  const Principal debtor = NewUser("dee", "0");
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(plane_->AddCredits(admin_, debtor.user_id, Money() - big, "").ok());
  }
  Reopen();
  EXPECT_TRUE(plane_->UnreadableRecords().empty());
  EXPECT_EQ(plane_->GetUser(admin_, user.user_id)->value.balance.micros(), Money::kMaxMicros);
  EXPECT_EQ(plane_->GetUser(admin_, debtor.user_id)->value.balance.micros(), -Money::kMaxMicros);
  // A debit within the limit still works from the top.
  EXPECT_TRUE(plane_->AddCredits(admin_, user.user_id, Money() - big, "").ok());
}

TEST_P(ControlPlaneTestRestart, FirstStartCreatesTheAdminOnceAndItSurvivesARestart) {
  ASSERT_TRUE(admin_.is_admin());
  const std::string first_token = admin_token_;
  Reopen();
  EXPECT_EQ(admin_token_, first_token);  // no second admin, no new token
  auto again = plane_->Authenticate(first_token);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->user_id, admin_.user_id);
  EXPECT_EQ(plane_->ListUsers(admin_)->value.size(), 1u);
}

TEST_P(ControlPlaneTest, UnknownOrRevokedTokensAreUnauthenticated) {
  EXPECT_EQ(plane_->Authenticate("sl_nope").status().code(), core::StatusCode::kUnauthenticated);
  EXPECT_EQ(plane_->Authenticate("").status().code(), core::StatusCode::kUnauthenticated);
  const Principal alice = NewUser("alice", "5");
  auto token = plane_->CreateToken(alice, "laptop");
  ASSERT_TRUE(token.ok());
  ASSERT_TRUE(plane_->Authenticate(token->value.second).ok());
  ASSERT_TRUE(plane_->RevokeToken(alice, token->value.first.id).ok());
  EXPECT_EQ(plane_->Authenticate(token->value.second).status().code(),
            core::StatusCode::kUnauthenticated);
}

TEST_P(ControlPlaneTest, PodIsBilledPerSecondFromRunningToStoppedToTheMicroDollar) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 2);
  core::Pod pod = CreatePod(alice);
  EXPECT_EQ(pod.state, PodState::kStarting);  // placed at once on the idle node
  EXPECT_EQ(pod.node_id, node.node_id);
  auto desired = plane_->DesiredFor(node);
  ASSERT_EQ(desired->pods.size(), 1u);

  const core::TimePoint started = clock_.Now() + std::chrono::milliseconds(250);
  clock_.Advance(seconds(1));
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, started).ok());
  pod = Get(alice, pod.id);
  EXPECT_EQ(pod.state, PodState::kRunning);
  EXPECT_EQ(pod.gpu_price_per_hour, plane_->GpuPrice("RTX 4090"));

  // The meter charges slices while it runs; the slices must add up exactly.
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(std::chrono::milliseconds(61'700));
    Durable(plane_->Tick());
  }
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStop).ok());
  clock_.Advance(seconds(2));
  const core::TimePoint stopped = clock_.Now() - std::chrono::milliseconds(600);
  ASSERT_TRUE(Report(node, pod.id, 2, PodState::kStopped, stopped).ok());

  const Money expected =
      billing::ChargeBetween(plane_->GpuPrice("RTX 4090"), started, started, stopped);
  EXPECT_GT(expected.micros(), 0);
  EXPECT_EQ(Money() - LedgerSum(alice, pod.id), expected);
  auto user = plane_->GetUser(alice, "me");
  EXPECT_EQ(user->value.balance, Dollars("10") - expected);
  pod = Get(alice, pod.id);
  EXPECT_EQ(pod.state, PodState::kStopped);
  EXPECT_TRUE(pod.node_id.empty());  // the GPU is free again
  EXPECT_EQ(pod.cost, expected);
}

TEST_P(ControlPlaneTest, UsageCountsTheRunningSegmentThatTheBalanceAlreadySubtracts) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice, 1, 20);  // GPU time and a volume's storage
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, clock_.Now()).ok());
  clock_.Advance(std::chrono::milliseconds(61'700));
  Durable(plane_->Tick());      // a slice in the ledger
  clock_.Advance(seconds(40));  // and 40 s the meter has not charged yet
  const auto usage = [&](ControlPlane::UsageBy by) {
    auto rows = plane_->Usage(alice, "me", by);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? std::move(*rows) : std::vector<UsageRow>();
  };
  const auto total = [&](ControlPlane::UsageBy by) {
    Money sum;
    for (const UsageRow& row : usage(by)) sum = sum + row.gpu + row.storage;
    return sum;
  };
  const Money balance = plane_->GetUser(alice, "me")->value.balance;
  const Money charged = Dollars("10") + LedgerSum(alice, pod.id);  // the ledger's charges are < 0
  EXPECT_LT(balance, charged) << "the balance counts the 40 s";
  EXPECT_EQ(Dollars("10") - total(ControlPlane::UsageBy::kPod), balance);
  EXPECT_EQ(Dollars("10") - total(ControlPlane::UsageBy::kDay), balance);
  const std::vector<UsageRow> rows = usage(ControlPlane::UsageBy::kPod);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key, pod.id);
  EXPECT_EQ(rows[0].gpu_seconds, 61 + 40);
  EXPECT_EQ(rows[0].unbilled, charged - balance);
  // Once the meter charges it (a minute after the last slice), it is in the ledger, counted once.
  clock_.Advance(seconds(20));
  Durable(plane_->Tick());
  EXPECT_EQ(Dollars("10") - total(ControlPlane::UsageBy::kPod),
            plane_->GetUser(alice, "me")->value.balance);
  const std::vector<UsageRow> after = usage(ControlPlane::UsageBy::kPod);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].unbilled, Money());
}

TEST_P(ControlPlaneTestRestart, TheLedgerCanBeRecomputedFromTheTransitions) {
  const Principal alice = NewUser("alice", "50");
  const Principal node = NewNode("n1", 8);
  std::vector<std::string> pods;
  int64_t seq = 0;
  for (int round = 0; round < 3; ++round) {
    Heartbeat(node, 8);
    core::Pod pod = CreatePod(alice, 1 + round, 10);
    pods.push_back(pod.id);
    clock_.Advance(std::chrono::milliseconds(1'300 + 7 * round));
    ASSERT_TRUE(Report(node, pod.id, ++seq, PodState::kRunning, clock_.Now()).ok());
    clock_.Advance(std::chrono::milliseconds(100'123 * (round + 1)));
    Durable(plane_->Tick());
  }
  for (const std::string& id : pods) {
    ASSERT_TRUE(plane_->Act(alice, id, core::PodAction::kTerminate, /*force=*/true).ok());
    clock_.Advance(std::chrono::milliseconds(999));
    ASSERT_TRUE(Report(node, id, ++seq, PodState::kTerminated, clock_.Now()).ok());
  }
  // Recompute: GPU seconds between running and the next transition, at the price recorded when it
  // started running; storage from its first run (when its volume came to be) to termination.
  for (const std::string& id : pods) {
    store::HistoryQuery query;
    query.pod_id = id;
    const std::vector<core::Transition> transitions = *store_->Transitions(query);
    ASSERT_GE(transitions.size(), 3u);
    const core::Pod pod = Get(alice, id);
    Money expected;
    for (size_t i = 0; i + 1 < transitions.size(); ++i) {
      if (transitions[i].to != PodState::kRunning) continue;
      const core::TimePoint from = transitions[i].at;
      const core::TimePoint to = transitions[i + 1].at;
      expected =
          expected + billing::ChargeBetween(transitions[i].gpu_price_per_hour, from, from, to);
    }
    EXPECT_EQ(transitions.front().reason, "created");
    EXPECT_EQ(transitions.back().to, PodState::kTerminated);
    const auto first_run =
        std::find_if(transitions.begin(), transitions.end(),
                     [](const core::Transition& t) { return t.to == PodState::kRunning; });
    ASSERT_NE(first_run, transitions.end());
    expected = expected + billing::StorageChargeBetween(plane_->storage_price(), pod.volume_gb,
                                                        transitions.front().at, first_run->at,
                                                        transitions.back().at);
    EXPECT_EQ(Money() - LedgerSum(alice, id), expected) << id;
  }
}

// Found by the chaos soak: a pod on a node cut off for minutes was charged up to each minute's
// tick, and its exit, reported after the link returned, did not take back the seconds after it:
// twice the run's price for a 150 s run in a 300 s partition.
TEST_P(ControlPlaneTest, AnExitReportedAfterTheMeterChargedPastItIsBilledToTheExitExactly) {
  const Principal alice = NewUser("alice", "50");
  const Principal node = NewNode("n1", 1);
  Heartbeat(node, 1);
  const core::Pod pod = CreatePod(alice);
  clock_.Advance(std::chrono::milliseconds(1'300));
  const core::TimePoint started = clock_.Now();
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, started).ok());
  for (int minute = 0; minute < 5; ++minute) {  // the node silent: the meter charges on
    clock_.Advance(seconds(61));
    Durable(plane_->Tick());
  }
  const Money price = Get(alice, pod.id).gpu_price_per_hour;
  ASSERT_EQ(Money() - LedgerSum(alice, pod.id),
            billing::ChargeBetween(price, started, started, clock_.Now()));
  Heartbeat(node, 1);
  const core::TimePoint exited = started + std::chrono::milliseconds(100'456);
  ASSERT_TRUE(Report(node, pod.id, 2, PodState::kExited, exited).ok());

  const Money expected = billing::ChargeBetween(price, started, started, exited);
  EXPECT_EQ(Money() - LedgerSum(alice, pod.id), expected);
  EXPECT_EQ(Get(alice, pod.id).cost, expected);
  EXPECT_EQ(plane_->GetUser(alice, "me")->value.balance, Money::FromMicros(50'000'000) - expected);
  const auto usage = plane_->Usage(alice, "", ControlPlane::UsageBy::kPod);
  ASSERT_TRUE(usage.ok());
  ASSERT_EQ(usage->size(), 1u);
  EXPECT_EQ(usage->front().gpu, expected);
  // Each entry's seconds are cut to whole ones on its own (the refund's toward zero): 100 s, give
  // or take one.
  EXPECT_GE(usage->front().gpu_seconds, 99);
  EXPECT_LE(usage->front().gpu_seconds, 101);
  // Nothing more once it is down, whatever the meter does next.
  clock_.Advance(seconds(120));
  Durable(plane_->Tick());
  EXPECT_EQ(Money() - LedgerSum(alice, pod.id), expected);
}

TEST_P(ControlPlaneTest, ARepeatedReportChangesNothing) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice);
  ASSERT_TRUE(Report(node, pod.id, 5, PodState::kRunning, clock_.Now()).ok());
  clock_.Advance(seconds(30));
  ASSERT_TRUE(Report(node, pod.id, 5, PodState::kRunning, clock_.Now()).ok());
  ASSERT_TRUE(Report(node, pod.id, 4, PodState::kStopped, clock_.Now()).ok());  // older: ignored
  const core::Pod after = Get(alice, pod.id);
  EXPECT_EQ(after.state, PodState::kRunning);
  EXPECT_EQ(after.running_since, pod.state_since);
  EXPECT_EQ(after.report_seq, 5);
}

TEST_P(ControlPlaneTest, AnAgentCannotReportAnotherNodesPod) {
  const Principal alice = NewUser("alice", "10");
  const Principal first = NewNode("n1", 1);
  const Principal second = NewNode("n2", 1);
  const core::Pod pod = CreatePod(alice);
  const Principal& other = pod.node_id == first.node_id ? second : first;
  EXPECT_EQ(Report(other, pod.id, 1, PodState::kRunning, clock_.Now()).code(),
            core::StatusCode::kPermissionDenied);
  EXPECT_EQ(Get(alice, pod.id).state, PodState::kStarting);
}

TEST_P(ControlPlaneTest, ABadJoinTokenIsRefusedBeforeTheReportIsLookedAt) {
  EXPECT_EQ(plane_->CheckJoinToken("slj_forged").code(), core::StatusCode::kUnauthenticated);
  NodeReport nonsense;
  nonsense.name = "";  // invalid too, but the stranger must not learn that
  EXPECT_EQ(plane_->RegisterNode("slj_forged", nonsense).status().code(),
            core::StatusCode::kUnauthenticated);
  EXPECT_TRUE(plane_->ListNodes(admin_)->value.empty());
}

TEST_P(ControlPlaneTest, APendingPodSaysWhyItWaits) {
  const Principal alice = NewUser("alice", "100");
  NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice, 2);
  EXPECT_EQ(pod.state, PodState::kPending);
  EXPECT_NE(pod.state_reason.find("2 free RTX 4090"), std::string::npos) << pod.state_reason;
}

// A 2-core host with 2 GPUs: the first default pod (2 vCPU) takes every vCPU, so the second GPU
// is idle but no default pod can have it: availability does not call it free, and a pod that waits
// for it says that vCPU is short.
TEST_P(ControlPlaneTest, AGpuWithoutTheVcpuBesideItIsNotFreeAndAPodWaitingForItSaysSo) {
  const Principal alice = NewUser("alice", "100");
  NewNode("small", 2, "RTX 4090", /*vcpu=*/2);
  std::vector<Availability> available = plane_->GpuAvailability(alice)->value;
  ASSERT_EQ(available.size(), 1u);
  EXPECT_EQ(available[0].free, 1);  // 2 idle GPUs, vCPU for one default pod
  EXPECT_EQ(available[0].stranded, 1);

  const core::Pod first = CreatePod(alice);
  EXPECT_EQ(first.state, PodState::kStarting);
  EXPECT_EQ(first.vcpu, 2);
  EXPECT_EQ(first.memory_gb, 8);
  available = plane_->GpuAvailability(alice)->value;
  EXPECT_EQ(available[0].total, 2);
  EXPECT_EQ(available[0].free, 0);
  EXPECT_EQ(available[0].stranded, 1);
  EXPECT_EQ(available[0].largest_free_on_one_node, 0);

  const core::Pod second = CreatePod(alice);
  EXPECT_EQ(second.state, PodState::kPending);
  EXPECT_EQ(second.state_reason,
            "no node with 1 free RTX 4090 also has 2 vCPU free (the most is 0); ask for less, or "
            "wait for other pods to stop");

  // On a node with 1 vCPU the GPU is not free for a default pod, but a pod asking for 1 vCPU gets
  // it.
  NewNode("one-core", 1, "RTX 4090", /*vcpu=*/1);
  available = plane_->GpuAvailability(alice)->value;
  EXPECT_EQ(available[0].free, 0);
  EXPECT_EQ(available[0].stranded, 2);
  PodSpec spec;
  spec.image = "busybox";
  spec.gpu_type = "4090";
  spec.vcpu = 1;
  auto small = plane_->CreatePod(alice, spec);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(small->value.state, PodState::kStarting);
}

TEST_P(ControlPlaneTest, ARequestNoNodeCouldEverMeetIsRefusedUnlessQueuedOnPurpose) {
  const Principal alice = NewUser("alice", "1000");
  NewNode("two", 2);
  auto ask = [&](std::string type, int count, bool queue) {
    PodSpec spec;
    spec.image = "busybox";
    spec.gpu_type = std::move(type);
    spec.gpu_count = count;
    spec.queue = queue;
    return plane_->CreatePod(alice, spec);
  };
  auto h100 = ask("h100", 1, false);
  EXPECT_EQ(h100.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_EQ(h100.status().message(),
            "no node here has H100 SXM GPUs; the types here are RTX 4090 (2 a node); or queue it "
            "on purpose until such a node joins (\"queue\": true, suanli pods create --queue)");
  auto three = ask("4090", 3, false);
  EXPECT_EQ(three.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(three.status().message().find("the largest RTX 4090 node here has 2 GPUs; ask for "
                                          "at most 2"),
            std::string::npos)
      << three.status().message();
  PodSpec greedy;
  greedy.image = "busybox";
  greedy.gpu_type = "4090";
  greedy.vcpu = 65;
  auto cpu = plane_->CreatePod(alice, greedy);
  EXPECT_EQ(cpu.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(cpu.status().message().find("65 vCPU (the most is 64)"), std::string::npos);
  EXPECT_TRUE(plane_->ListPods(alice)->value.empty()) << "a refused request changes nothing";

  // What the cluster can do, even with every GPU busy, is accepted to wait.
  auto both = ask("4090", 2, false);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  auto waits = ask("4090", 2, false);
  ASSERT_TRUE(waits.ok()) << waits.status().ToString();
  EXPECT_EQ(waits->value.state, PodState::kPending);

  // Queued on purpose: it waits, and runs once a node that can take it joins.
  auto queued = ask("4090", 3, true);
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  Durable(queued->sequence);
  EXPECT_EQ(queued->value.state, PodState::kPending);
  EXPECT_EQ(queued->value.state_reason, "no node has 3 free RTX 4090; all are in use");
  NewNode("eight", 8);
  Durable(plane_->Tick());
  EXPECT_EQ(Get(alice, queued->value.id).state, PodState::kStarting);
}

TEST_P(ControlPlaneTestRestart, QuotasLimitPodsAndPendingPodsUntilAnAdminRaisesThem) {
  const Principal alice = NewUser("alice", "1000");
  EXPECT_EQ(plane_->GetUser(alice, "me")->value.max_pods, 100);
  EXPECT_EQ(plane_->GetUser(alice, "me")->value.max_pending_pods, 20);
  // The default: 20 pods waiting for a GPU (there is no node), the 21st refused.
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(CreatePod(alice).id);
  PodSpec spec;
  spec.image = "busybox";
  spec.gpu_type = "4090";
  spec.queue = true;
  auto refused = plane_->CreatePod(alice, spec);
  EXPECT_EQ(refused.status().code(), core::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "you have 20 pods waiting for a GPU, your quota's limit of pending pods (20); wait for "
            "them to start or remove some; or ask an admin to raise it (suanli users set-quota "
            "alice --pending N)");
  EXPECT_EQ(core::HttpStatusFor(refused.status().code()), 429);

  // Only an admin sets quotas; by name or ID; 0 is the default again.
  EXPECT_EQ(plane_->SetQuota(alice, "alice", {30, 30, {}}).status().code(),
            core::StatusCode::kPermissionDenied);
  EXPECT_EQ(plane_->SetQuota(admin_, "alice", {-1, {}, {}}).status().code(),
            core::StatusCode::kInvalidArgument);
  auto raised = plane_->SetQuota(admin_, "alice", {22, 25, {}});
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  Durable(raised->sequence);
  EXPECT_EQ(raised->value.max_pods, 22);
  EXPECT_EQ(raised->value.max_pending_pods, 25);
  ids.push_back(CreatePod(alice).id);
  ids.push_back(CreatePod(alice).id);
  refused = plane_->CreatePod(alice, spec);
  EXPECT_EQ(refused.status().code(), core::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "you have 22 pods, your quota's limit of pods not terminated (22); remove some (suanli "
            "pods rm); or ask an admin to raise it (suanli users set-quota alice --pods N)");

  // A terminated pod no longer counts.
  ASSERT_TRUE(plane_->Act(alice, ids.front(), core::PodAction::kTerminate).ok());
  auto again = plane_->CreatePod(alice, spec);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  Durable(again->sequence);

  // Quotas survive a restart; 0 brings the default back.
  Reopen();
  EXPECT_EQ(plane_->GetUser(admin_, "alice")->value.max_pods, 22);
  auto reset = plane_->SetQuota(admin_, alice.user_id, {0, {}, {}});
  ASSERT_TRUE(reset.ok());
  EXPECT_EQ(reset->value.max_pods, 100);
  EXPECT_EQ(reset->value.max_pending_pods, 25);
}

TEST_P(ControlPlaneTest, StartingAStoppedPodCountsAgainstThePendingQuota) {
  const Principal alice = NewUser("alice", "1000");
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice);
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, clock_.Now()).ok());
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStop).ok());
  ASSERT_TRUE(Report(node, pod.id, 2, PodState::kStopped, clock_.Now()).ok());
  CreatePod(alice);  // takes the GPU
  CreatePod(alice);  // waits
  ASSERT_TRUE(plane_->SetQuota(admin_, "alice", {{}, 1, {}}).ok());
  auto start = plane_->Act(alice, pod.id, core::PodAction::kStart);
  EXPECT_EQ(start.status().code(), core::StatusCode::kResourceExhausted);
  EXPECT_NE(start.status().message().find("limit of pending pods (1)"), std::string::npos);
  ASSERT_TRUE(plane_->SetQuota(admin_, "alice", {{}, 2, {}}).ok());
  EXPECT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStart).ok());
}

TEST_P(ControlPlaneTest, SharesLandOnMigSlicesAndPayForWhatTheyAsked) {
  const Principal alice = NewUser("alice", "100");
  const Principal agent =
      NewNode("mig", {{0, "MIG-0", "A100 80GB SXM", 40, true, 0, 428, "3g.40gb"},
                      {1, "MIG-1", "A100 80GB SXM", 20, true, 0, 285, "2g.20gb"},
                      {2, "MIG-2", "A100 80GB SXM", 20, true, 0, 285, "2g.20gb"}});

  // The slices are one GPU's worth, all of it shared, none of it whole.
  const std::vector<Availability> available = plane_->GpuAvailability(alice)->value;
  ASSERT_EQ(available.size(), 1u);
  EXPECT_EQ(available[0].total, 1);
  EXPECT_EQ(available[0].free, 0);
  EXPECT_EQ(available[0].shared_free_milli, 998);
  EXPECT_EQ(available[0].largest_share_free_milli, 428);

  PodSpec spec;
  spec.image = "busybox";
  spec.gpu_type = "a100-80g";
  spec.gpu_milli = 400;
  auto share = plane_->CreatePod(alice, spec);
  ASSERT_TRUE(share.ok()) << share.status().ToString();
  Durable(share->sequence);
  EXPECT_EQ(share->value.state, PodState::kStarting);
  EXPECT_EQ(share->value.gpu_indices, std::vector<int>{0});  // only the 3g slice holds 0.4
  ASSERT_TRUE(Report(agent, share->value.id, 1, PodState::kRunning, clock_.Now()).ok());
  EXPECT_EQ(Get(alice, share->value.id).gpu_price_per_hour,
            billing::GpuRate(plane_->GpuPrice("A100 80GB SXM"), 1, 400));

  // A whole GPU: no device here is one, so it is refused at once, unless queued on purpose.
  spec.gpu_milli = core::kMilliGpu;
  auto refused = plane_->CreatePod(alice, spec);
  EXPECT_EQ(refused.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("split into MIG slices, the largest 0.428 of a GPU"),
            std::string::npos)
      << refused.status().message();
  spec.queue = true;
  auto whole = plane_->CreatePod(alice, spec);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(whole->value.state, PodState::kPending);
  EXPECT_NE(whole->value.state_reason.find("1 free A100 80GB SXM"), std::string::npos)
      << whole->value.state_reason;
}

TEST_P(ControlPlaneTest, AMultiGpuPodGetsGpusThatShareALink) {
  const Principal alice = NewUser("alice", "1000");
  std::vector<core::GpuDevice> gpus;
  for (int i = 0; i < 8; ++i) {
    gpus.push_back(
        {i, "GPU-" + std::to_string(i), "RTX 4090", 24, true, i < 4 ? 0 : 4, core::kMilliGpu, ""});
  }
  NewNode("two-switches", std::move(gpus));
  EXPECT_EQ(CreatePod(alice, 1).gpu_indices, std::vector<int>{0});
  // Three left below the first switch, four below the second: four GPUs take the second.
  EXPECT_EQ(CreatePod(alice, 4).gpu_indices, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(CreatePod(alice, 2).gpu_indices, (std::vector<int>{1, 2}));
}

TEST_P(ControlPlaneTest, APodCannotStartWithoutTenMinutesOfBalance) {
  const Principal alice = NewUser("alice", "0.01");
  PodSpec spec;
  spec.image = "busybox";
  spec.gpu_type = "H100 SXM";
  auto pod = plane_->CreatePod(alice, spec);
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), core::StatusCode::kResourceExhausted);
  EXPECT_NE(pod.status().message().find("10 minutes"), std::string::npos);
  EXPECT_TRUE(plane_->ListPods(alice)->value.empty());
}

TEST_P(ControlPlaneTest, ASpendCapRefusesAPodThatWouldExceedIt) {
  const Principal alice = NewUser("alice", "100");
  ASSERT_TRUE(plane_->SetSpendCap(alice, Dollars("0.10")).ok());
  PodSpec spec;
  spec.image = "busybox";
  spec.gpu_type = "4090";
  auto pod = plane_->CreatePod(alice, spec);
  EXPECT_EQ(pod.status().code(), core::StatusCode::kResourceExhausted);
  EXPECT_NE(pod.status().message().find("spend cap"), std::string::npos);
}

TEST_P(ControlPlaneTest, AnEmptyBalanceStopsRunningPodsAndTellsTheOwner) {
  const Principal alice = NewUser("alice", "0.20");  // ~16 minutes of a 4090
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice);
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, clock_.Now()).ok());
  for (int minute = 0; minute < 40; ++minute) {
    clock_.Advance(seconds(60));
    Durable(plane_->Tick());
    if (Get(alice, pod.id).desired == core::DesiredState::kStopped) break;
  }
  const core::Pod stopped = Get(alice, pod.id);
  EXPECT_EQ(stopped.desired, core::DesiredState::kStopped);
  EXPECT_NE(stopped.state_reason.find("balance"), std::string::npos);
  const core::User user = plane_->GetUser(alice, "me")->value;
  ASSERT_FALSE(user.notices.empty());
  EXPECT_NE(user.notices.back().find(pod.id), std::string::npos);
  // Usage continues, by the second, until the agent says the container stopped.
  ASSERT_TRUE(Report(node, pod.id, 2, PodState::kStopped, clock_.Now()).ok());
  EXPECT_EQ(Get(alice, pod.id).state, PodState::kStopped);
}

TEST_P(ControlPlaneTest, LoweringTheSpendCapStopsTheNewestPodsUntilUnderIt) {
  const Principal alice = NewUser("alice", "100");
  const Principal node = NewNode("n1", 4);
  const core::Pod first = CreatePod(alice);
  const core::Pod second = CreatePod(alice);
  const core::Pod third = CreatePod(alice);
  EXPECT_EQ(plane_->SpendRate(alice.user_id),
            Money::FromMicros(plane_->GpuPrice("RTX 4090").micros() * 3));
  ASSERT_TRUE(
      plane_->SetSpendCap(alice, Money::FromMicros(plane_->GpuPrice("RTX 4090").micros() * 2))
          .ok());
  EXPECT_EQ(Get(alice, first.id).desired, core::DesiredState::kRunning);
  EXPECT_EQ(Get(alice, second.id).desired, core::DesiredState::kRunning);
  EXPECT_EQ(Get(alice, third.id).desired, core::DesiredState::kStopped);
  EXPECT_NE(Get(alice, third.id).state_reason.find("cap"), std::string::npos);
  // Still billed until its node says the container stopped; later ticks stop nothing more.
  ASSERT_TRUE(Report(node, third.id, 1, PodState::kStopped, clock_.Now()).ok());
  Durable(plane_->Tick());
  EXPECT_EQ(plane_->SpendRate(alice.user_id),
            Money::FromMicros(plane_->GpuPrice("RTX 4090").micros() * 2));
  EXPECT_EQ(Get(alice, second.id).desired, core::DesiredState::kRunning);
}

TEST_P(ControlPlaneTest, TerminatingAPodWithAVolumeNeedsForceOnceItRan) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice, 1, 20);
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, clock_.Now()).ok());
  auto refused = plane_->Act(alice, pod.id, core::PodAction::kTerminate);
  EXPECT_EQ(refused.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("--force"), std::string::npos);
  auto forced = plane_->Act(alice, pod.id, core::PodAction::kTerminate, true);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->value.desired, core::DesiredState::kTerminated);
}

TEST_P(ControlPlaneTest, APodThatNeverRanNeedsNoForceAndPaysNoStorage) {
  const Principal alice = NewUser("alice", "10");
  const core::Pod pod = CreatePod(alice, 1, 20);  // no node: pending, no volume anywhere
  clock_.Advance(std::chrono::hours(2));
  Durable(plane_->Tick());
  EXPECT_EQ(LedgerSum(alice, pod.id), Money());
  EXPECT_EQ(plane_->GetUser(alice, "me")->value.balance, Dollars("10"));
  EXPECT_EQ(plane_->SpendRate(alice.user_id), plane_->GpuPrice("RTX 4090")) << "no storage";
  auto terminated = plane_->Act(alice, pod.id, core::PodAction::kTerminate);
  ASSERT_TRUE(terminated.ok()) << terminated.status().ToString();
  EXPECT_EQ(terminated->value.state, PodState::kTerminated);  // never placed: gone at once
}

TEST_P(ControlPlaneTestRestart, TerminatingAStoppedPodHasItsLastNodeDeleteTheVolume) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice, 1, 20);
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, clock_.Now()).ok());
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStop).ok());
  clock_.Advance(seconds(5));
  ASSERT_TRUE(Report(node, pod.id, 2, PodState::kStopped, clock_.Now()).ok());
  ASSERT_TRUE(Get(alice, pod.id).node_id.empty());  // a stop unbinds it; the volume stays
  EXPECT_TRUE(plane_->DesiredFor(node)->pods.empty());

  const int64_t generation = plane_->DesiredFor(node)->generation;
  auto terminate = plane_->Act(alice, pod.id, core::PodAction::kTerminate, /*force=*/true);
  ASSERT_TRUE(terminate.ok()) << terminate.status().ToString();
  Durable(terminate->sequence);
  // Not gone yet: the node it last ran on holds the volume, and hears of it (woken).
  EXPECT_EQ(terminate->value.state, PodState::kStopped);
  EXPECT_GT(plane_->DesiredFor(node)->generation, generation);
  EXPECT_EQ(plane_->Act(alice, pod.id, core::PodAction::kStart).status().code(),
            core::StatusCode::kFailedPrecondition);
  Reopen();  // the duty survives a restart of the server
  const std::vector<core::Pod> desired = plane_->DesiredFor(node)->pods;
  ASSERT_EQ(desired.size(), 1u);
  EXPECT_EQ(desired[0].id, pod.id);
  EXPECT_EQ(desired[0].desired, core::DesiredState::kTerminated);

  // Its agent deletes the volume and says so: the pod is terminated and leaves the node's list.
  clock_.Advance(seconds(1));
  ASSERT_TRUE(Report(node, pod.id, 3, PodState::kTerminated, clock_.Now()).ok());
  EXPECT_EQ(Get(alice, pod.id).state, PodState::kTerminated);
  EXPECT_TRUE(plane_->DesiredFor(node)->pods.empty());
}

TEST_P(ControlPlaneTest, RemovingANodeTerminatesThePodsWhoseVolumeOnlyItHeld) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice, 1, 20);
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, clock_.Now()).ok());
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStop).ok());
  ASSERT_TRUE(Report(node, pod.id, 2, PodState::kStopped, clock_.Now()).ok());
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kTerminate, /*force=*/true).ok());
  ASSERT_TRUE(plane_->DeleteNode(admin_, node.node_id).ok());
  EXPECT_EQ(Get(alice, pod.id).state, PodState::kTerminated);
}

TEST_P(ControlPlaneTest, WrongActionsAreRefusedWithTheReason) {
  const Principal alice = NewUser("alice", "10");
  const core::Pod pod = CreatePod(alice);  // pending: no nodes
  auto start = plane_->Act(alice, pod.id, core::PodAction::kStart);
  EXPECT_EQ(start.status().code(), core::StatusCode::kFailedPrecondition);
  auto stop = plane_->Act(alice, pod.id, core::PodAction::kStop);
  ASSERT_TRUE(stop.ok());
  EXPECT_EQ(stop->value.state, PodState::kStopped);
  auto restart = plane_->Act(alice, pod.id, core::PodAction::kRestart);
  EXPECT_EQ(restart.status().code(), core::StatusCode::kFailedPrecondition);
  auto started = plane_->Act(alice, pod.id, core::PodAction::kStart);
  ASSERT_TRUE(started.ok());
  EXPECT_EQ(started->value.state, PodState::kPending);
}

TEST_P(ControlPlaneTest, UsersSeeAndTouchOnlyTheirOwnPods) {
  const Principal alice = NewUser("alice", "10");
  const Principal bob = NewUser("bob", "10");
  const core::Pod pod = CreatePod(alice);
  EXPECT_EQ(plane_->GetPod(bob, pod.id).status().code(), core::StatusCode::kNotFound);
  EXPECT_EQ(plane_->Act(bob, pod.id, core::PodAction::kStop).status().code(),
            core::StatusCode::kNotFound);
  EXPECT_TRUE(plane_->ListPods(bob)->value.empty());
  EXPECT_EQ(plane_->ListPods(admin_)->value.size(), 1u);
  EXPECT_EQ(plane_->ListUsers(bob).status().code(), core::StatusCode::kPermissionDenied);
}

TEST_P(ControlPlaneTest, AnOnDemandPodPreemptsAnInterruptibleOne) {
  const Principal alice = NewUser("alice", "10");
  const Principal bob = NewUser("bob", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod cheap = CreatePod(alice, 1, 0, /*interruptible=*/true);
  ASSERT_TRUE(Report(node, cheap.id, 1, PodState::kRunning, clock_.Now()).ok());
  const core::Pod urgent = CreatePod(bob);
  EXPECT_EQ(urgent.state, PodState::kPending);
  EXPECT_EQ(Get(alice, cheap.id).desired, core::DesiredState::kStopped);
  EXPECT_NE(plane_->GetUser(alice, "me")->value.notices.back().find("preempted"),
            std::string::npos);
  clock_.Advance(seconds(3));
  ASSERT_TRUE(Report(node, cheap.id, 2, PodState::kStopped, clock_.Now()).ok());
  Durable(plane_->Tick());
  EXPECT_EQ(Get(bob, urgent.id).state, PodState::kStarting);
  EXPECT_EQ(Get(bob, urgent.id).node_id, node.node_id);
}

TEST_P(ControlPlaneTest, ASilentNodeBecomesUnreachableAndItsPodsKeepRunning) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice);
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, clock_.Now()).ok());
  clock_.Advance(seconds(31));
  Durable(plane_->Tick());
  EXPECT_EQ(plane_->GetNode(admin_, node.node_id)->value.state, core::NodeState::kUnreachable);
  EXPECT_EQ(Get(alice, pod.id).state, PodState::kRunning);
  Heartbeat(node, 1);
  EXPECT_EQ(plane_->GetNode(admin_, node.node_id)->value.state, core::NodeState::kReady);
}

TEST_P(ControlPlaneTest, DrainingANodeStopsItsPodsAndPlacesNoNewOnes) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 2);
  const core::Pod pod = CreatePod(alice);
  ASSERT_TRUE(plane_->ActOnNode(admin_, node.node_id, ControlPlane::NodeAction::kDrain).ok());
  EXPECT_EQ(Get(alice, pod.id).desired, core::DesiredState::kStopped);
  const core::Pod later = CreatePod(alice);
  EXPECT_EQ(later.state, PodState::kPending);
  EXPECT_EQ(plane_->DeleteNode(admin_, node.node_id).status().code(),
            core::StatusCode::kFailedPrecondition);
}

TEST_P(ControlPlaneTest, ANodeThatLosesAGpuIsDrainedUntilAnAdminUncordonsIt) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 2);
  const core::Pod pod = CreatePod(alice);
  Heartbeat(node, 2);
  EXPECT_FALSE(plane_->GetNode(admin_, node.node_id)->value.draining);
  Heartbeat(node, 1);  // a GPU fell off the bus
  const core::Node drained = plane_->GetNode(admin_, node.node_id)->value;
  EXPECT_TRUE(drained.draining);
  EXPECT_TRUE(drained.cordoned);
  EXPECT_EQ(drained.drain_reason, "the agent found 1 GPU(s) of the 2 it had");
  EXPECT_EQ(drained.gpus.size(), 1u);
  EXPECT_EQ(Get(alice, pod.id).desired, core::DesiredState::kStopped);
  EXPECT_EQ(CreatePod(alice).state, PodState::kPending);
  // More GPUs than before is only capacity: the node stays drained until someone has looked.
  Heartbeat(node, 2);
  EXPECT_TRUE(plane_->GetNode(admin_, node.node_id)->value.draining);
  ASSERT_TRUE(plane_->ActOnNode(admin_, node.node_id, ControlPlane::NodeAction::kUncordon).ok());
  const core::Node back = plane_->GetNode(admin_, node.node_id)->value;
  EXPECT_FALSE(back.draining);
  EXPECT_EQ(back.drain_reason, "");
}

TEST_P(ControlPlaneTest, APullsProgressShowsWhileStartingAndGoesWithTheNextState) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice);
  PodReport pulling;
  pulling.seq = 1;
  pulling.state = PodState::kStarting;
  pulling.at = clock_.Now();
  pulling.message = "pulling image busybox: 25% of 4 MiB";
  pulling.pull = core::PullProgress{1 << 20, 4 << 20};
  ASSERT_TRUE(plane_->ReportPod(node, pod.id, pulling).ok());
  const core::Pod starting = Get(alice, pod.id);
  ASSERT_TRUE(starting.pull.has_value());
  EXPECT_EQ(starting.pull->current_bytes, 1 << 20);
  EXPECT_EQ(starting.pull->total_bytes, 4 << 20);
  EXPECT_EQ(starting.state_reason, "pulling image busybox: 25% of 4 MiB");
  ASSERT_TRUE(Report(node, pod.id, 2, PodState::kRunning, clock_.Now()).ok());
  EXPECT_FALSE(Get(alice, pod.id).pull.has_value());
}

TEST_P(ControlPlaneTestRestart, ARestartedServerHasEveryAcknowledgedChange) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod placed = CreatePod(alice);
  const core::Pod waiting = CreatePod(alice);
  ASSERT_TRUE(Report(node, placed.id, 1, PodState::kRunning, clock_.Now()).ok());
  Reopen();
  EXPECT_EQ(Get(alice, placed.id).state, PodState::kRunning);
  EXPECT_EQ(Get(alice, waiting.id).state, PodState::kPending);
  // The restarted server still knows the node's credentials and its free GPUs.
  auto again = plane_->Authenticate(admin_token_);
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(plane_->Act(alice, placed.id, core::PodAction::kStop).ok());
  ASSERT_TRUE(Report(node, placed.id, 2, PodState::kStopped, clock_.Now()).ok());
  Durable(plane_->Tick());
  EXPECT_EQ(Get(alice, waiting.id).state, PodState::kStarting);
}

TEST_P(ControlPlaneTest, TheAgentsLongPollWakesWhenItsNodeChanges) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const int64_t generation = plane_->DesiredFor(node)->generation;
  bool woke = false;
  plane_->WhenNodeChanges(node, generation, clock_.Now() + seconds(30), [&woke] { woke = true; });
  EXPECT_FALSE(woke);
  CreatePod(alice);
  EXPECT_TRUE(woke);
  EXPECT_GT(plane_->DesiredFor(node)->generation, generation);
}

TEST_P(ControlPlaneTest, ThePodListShowsEachPodsCurrentStateAndCost) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice);
  PodList pod_list;  // the API's cached list, written from VisitPods
  auto list_of = [&](const Principal& caller) {
    return boost::json::parse(pod_list.Json(*plane_, caller, clock_.Now())->value.json);
  };
  auto state_in_list = [&] {
    const boost::json::value list = list_of(alice);
    const boost::json::array& pods = list.at("pods").as_array();
    EXPECT_EQ(pods.size(), 1u);
    EXPECT_EQ(pods[0].at("id").as_string(), pod.id);
    return std::make_pair(std::string(pods[0].at("state").as_string()),
                          pods[0].at("cost_micros").as_int64());
  };
  EXPECT_EQ(state_in_list(), std::make_pair(std::string("starting"), int64_t{0}));
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, clock_.Now()).ok());
  clock_.Advance(seconds(36));  // the view is cached; state and cost must still be current
  const auto [state, cost] = state_in_list();
  EXPECT_EQ(state, "running");
  EXPECT_EQ(cost, billing::CumulativeCharge(plane_->GpuPrice("RTX 4090"), 36).micros());
  EXPECT_EQ(list_of(NewUser("bob", "1")).at("pods").as_array().size(), 0u);
}

TEST_P(ControlPlaneTest, TheAdvisorPicksAFreeGpuTypeForAWorkload) {
  const Principal alice = NewUser("alice", "100");
  PodSpec spec;
  spec.image = "vllm/vllm-openai";
  advisor::Workload workload;
  workload.model = *advisor::LoadBuiltInModelZoo()->Find("llama-3-8b").value();
  workload.task = advisor::Task::kServe;
  ASSERT_TRUE(advisor::CompleteAndValidate(workload).ok());
  spec.workload = workload;
  // Nothing is free: the advisor has nothing to choose from, and says so.
  EXPECT_EQ(plane_->CreatePod(alice, spec).status().code(), core::StatusCode::kFailedPrecondition);

  NewNode("small", 2, "RTX 3060");
  NewNode("big", 1, "H100 SXM");
  auto pod = plane_->CreatePod(alice, spec);
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  // An 8B model in BF16 (16 GB of weights plus a KV cache) does not fit one 12 GB RTX 3060.
  EXPECT_TRUE(pod->value.gpu_type == "H100 SXM" || pod->value.gpu_count == 2)
      << pod->value.gpu_count << "x " << pod->value.gpu_type;
  EXPECT_EQ(pod->value.state, PodState::kStarting);
}

// --- Events
// ---------------------------------------------------------------------------------------

store::EventQuery OfKind(std::string kind) {
  store::EventQuery query;
  query.kind = std::move(kind);
  return query;
}

std::vector<std::string> Kinds(const std::vector<core::Event>& events) {
  std::vector<std::string> kinds;
  for (const core::Event& event : events) kinds.push_back(event.kind);
  return kinds;
}

TEST_P(ControlPlaneTestRestart, EveryPodStateChangeIsAnEventWithItsReasonSeenByItsOwnerAndAdmins) {
  const Principal alice = NewUser("alice", "10");
  const Principal bob = NewUser("bob", "10");
  const Principal node = NewNode("n1", 2);
  core::Pod pod = CreatePod(alice);
  clock_.Advance(seconds(1));
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, clock_.Now()).ok());
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStop).ok());
  clock_.Advance(seconds(1));
  ASSERT_TRUE(Report(node, pod.id, 2, PodState::kStopped, clock_.Now()).ok());

  store::EventQuery query;
  query.kind = "pod.state";
  const std::vector<core::Event> mine = plane_->Events(alice, query).value();
  ASSERT_EQ(mine.size(), 4u);  // pending, starting, running, stopped
  EXPECT_EQ(mine[0].object_id, pod.id);
  EXPECT_EQ(mine[1].message, "pod " + pod.id + " pending -> starting: scheduled on n1");
  EXPECT_NE(mine[3].message.find("stopped by its owner"), std::string::npos) << mine[3].message;
  const auto detail = boost::json::parse(mine[3].detail).as_object();
  EXPECT_EQ(detail.at("from").as_string(), "running");
  EXPECT_EQ(detail.at("to").as_string(), "stopped");
  for (size_t i = 1; i < mine.size(); ++i) EXPECT_GT(mine[i].seq, mine[i - 1].seq);
  // Bob sees none of it, even when he asks for Alice's pod or Alice's events by name.
  query.object_id = pod.id;
  query.user_id = alice.user_id;
  EXPECT_TRUE(plane_->Events(bob, query)->empty());
  EXPECT_EQ(plane_->Events(admin_, query)->size(), 4u);
  EXPECT_EQ(plane_->Events(node, {}).status().code(), core::StatusCode::kPermissionDenied);

  // Ids go on from where they were after a restart.
  const int64_t last = mine.back().seq;
  Reopen();
  const Principal carol = NewUser("carol", "10");
  CreatePod(carol);
  const std::vector<core::Event> after = plane_->Events(carol, {}).value();
  ASSERT_FALSE(after.empty());
  EXPECT_GT(after.front().seq, last);
}

TEST_P(ControlPlaneTest, DrainsUnreachableNodesAndLowBalancesAreEventsForWhomTheyConcern) {
  const Money price = plane_->GpuPrice("RTX 4090");
  // Half an hour of one GPU: enough to start (10 minutes), under the hour that warns.
  const Principal alice = NewUser("alice", "0");
  ASSERT_TRUE(
      plane_->AddCredits(admin_, alice.user_id, Money::FromMicros(price.micros() / 2), "").ok());
  const Principal node = NewNode("n1", 2);
  core::Pod pod = CreatePod(alice);
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, clock_.Now()).ok());
  Durable(plane_->Tick());
  Durable(plane_->Tick());  // told once, not every tick
  store::EventQuery low;
  low.kind = "balance.low";
  const std::vector<core::Event> warned = plane_->Events(alice, low).value();
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_EQ(warned[0].object_id, alice.user_id);
  EXPECT_NE(plane_->GetUser(alice, "me")->value.notices.back().find("add credits"),
            std::string::npos);

  auto drained = plane_->ActOnNode(admin_, node.node_id, ControlPlane::NodeAction::kDrain);
  ASSERT_TRUE(drained.ok());
  Durable(drained->sequence);
  // The node's own events are an admin's; the pod's stop is its owner's.
  EXPECT_EQ(Kinds(plane_->Events(alice, OfKind("pod.node_drained")).value()),
            std::vector<std::string>{"pod.node_drained"});
  EXPECT_TRUE(plane_->Events(alice, OfKind("node.drained"))->empty());
  EXPECT_EQ(plane_->Events(admin_, OfKind("node.drained"))->size(), 1u);

  clock_.Advance(seconds(31));  // no heartbeat
  Durable(plane_->Tick());
  const std::vector<core::Event> down = plane_->Events(admin_, OfKind("node.unreachable")).value();
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].object_id, node.node_id);
  EXPECT_TRUE(down[0].user_id.empty());
  EXPECT_TRUE(plane_->Events(alice, OfKind("node.unreachable"))->empty());
}

TEST_P(ControlPlaneTest, EventsOlderThanTheRetentionAreDeletedOnTheHourlyTick) {
  const Principal alice = NewUser("alice", "10");
  CreatePod(alice);  // pending: one event
  Durable(plane_->Tick());
  ASSERT_EQ(plane_->Events(alice, {})->size(), 1u);
  clock_.Advance(std::chrono::hours(24 * 30));
  CreatePod(alice);  // a second, recent one
  clock_.Advance(std::chrono::hours(2));
  Durable(plane_->Tick());
  const std::vector<core::Event> kept = plane_->Events(alice, {}).value();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_GT(kept[0].seq, 1);
}

// --- Auto-stop
// ------------------------------------------------------------------------------------

// A heartbeat of node "n1" (2 simulated RTX 4090s) that reports `pod_id` with this CPU and SSH use.
void BeatWithActivity(ControlPlane& plane, const Principal& node, const std::string& pod_id,
                      double cpu_percent, int ssh_sessions) {
  NodeReport report;
  for (int i = 0; i < 2; ++i) {
    report.gpus.push_back(
        {i, "GPU-" + std::to_string(i), "RTX 4090", 24, true, 0, core::kMilliGpu, ""});
  }
  report.vcpu = 64;
  report.memory_gb = 256;
  report.disk_gb = 2000;
  report.pod_activity.push_back({pod_id, cpu_percent, ssh_sessions, true});
  ASSERT_TRUE(plane.Heartbeat(node, report).ok());
}

// A pod of `gpus` RTX 4090s with these auto-stop settings (seconds), created and reported running
// on `node` now; its id.
std::string RunningAutoStopPod(ControlPlane& plane, const Principal& user, const Principal& node,
                               const PodSpec& settings, core::TimePoint now) {
  PodSpec spec = settings;
  spec.image = "busybox";
  spec.gpu_type = "4090";
  auto created = plane.CreatePod(user, spec);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  if (!created.ok()) return "";
  PodReport report;
  report.seq = 1;
  report.state = PodState::kRunning;
  report.at = now;
  EXPECT_TRUE(plane.ReportPod(node, created->value.id, report).ok());
  return created->value.id;
}

TEST_P(ControlPlaneTest, AnIdlePodIsWarnedThenStoppedWithItsPreStopCommandAndBilledToTheStop) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 2);
  PodSpec spec;
  spec.idle_stop_after_s = 30 * 60;
  spec.pre_stop_command = "echo saving > /workspace/checkpoint";
  const core::TimePoint started = clock_.Now();
  const std::string id = RunningAutoStopPod(*plane_, alice, node, spec, started);
  EXPECT_EQ(Get(alice, id).idle_stop_after_s, 1800);

  // Quiet on every signal, minute after minute: warned 5 minutes before the 30.
  for (int minute = 1; minute <= 24; ++minute) {
    clock_.Advance(std::chrono::minutes(1));
    BeatWithActivity(*plane_, node, id, 0.5, 0);
    Durable(plane_->Tick());
  }
  EXPECT_TRUE(plane_->Events(alice, OfKind("pod.idle_warning"))->empty());
  clock_.Advance(std::chrono::minutes(1));
  BeatWithActivity(*plane_, node, id, 0.5, 0);
  Durable(plane_->Tick());
  const std::vector<core::Event> warned = plane_->Events(alice, OfKind("pod.idle_warning")).value();
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_NE(warned[0].message.find("stops in 5m"), std::string::npos) << warned[0].message;
  EXPECT_EQ(Get(alice, id).desired, core::DesiredState::kRunning);
  for (int minute = 26; minute <= 29; ++minute) {
    clock_.Advance(std::chrono::minutes(1));
    BeatWithActivity(*plane_, node, id, 0.5, 0);
    Durable(plane_->Tick());
  }
  EXPECT_EQ(Get(alice, id).desired, core::DesiredState::kRunning);
  clock_.Advance(std::chrono::minutes(1));
  Durable(plane_->Tick());

  // Stopped: the agent is told, with the command to run first; the event says why.
  EXPECT_EQ(Get(alice, id).desired, core::DesiredState::kStopped);
  const DesiredPods desired = plane_->DesiredFor(node).value();
  ASSERT_EQ(desired.pods.size(), 1u);
  EXPECT_EQ(desired.pods[0].pre_stop_command, spec.pre_stop_command);
  const std::vector<core::Event> stops = plane_->Events(alice, OfKind("pod.idle_stop")).value();
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_NE(stops[0].message.find("idle for 30m"), std::string::npos) << stops[0].message;
  const auto detail = boost::json::parse(stops[0].detail).as_object();
  EXPECT_EQ(detail.at("gpu_simulated").as_bool(), true);
  EXPECT_EQ(detail.at("ssh_sessions").as_int64(), 0);
  EXPECT_EQ(detail.at("idle_for_s").as_int64(), 1800);

  // The container stops 3.2 s later: billing ends exactly there.
  clock_.Advance(std::chrono::milliseconds(3'200));
  const core::TimePoint stopped = clock_.Now();
  ASSERT_TRUE(Report(node, id, 2, PodState::kStopped, stopped).ok());
  const Money expected =
      billing::ChargeBetween(plane_->GpuPrice("RTX 4090"), started, started, stopped);
  EXPECT_EQ(Money() - LedgerSum(alice, id), expected);
  EXPECT_EQ(Get(alice, id).cost, expected);
  const std::vector<core::Event> states = plane_->Events(alice, OfKind("pod.state")).value();
  EXPECT_NE(states.back().message.find("stopped: idle for 30m"), std::string::npos)
      << states.back().message;
}

TEST_P(ControlPlaneTest, APodWithAnSshSessionBusyCpuOrProxyTrafficIsNotIdle) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 2);
  PodSpec spec;
  spec.gpu_count = 2;
  spec.idle_stop_after_s = 10 * 60;
  const std::string id = RunningAutoStopPod(*plane_, alice, node, spec, clock_.Now());
  // An hour: SSH open for the first 20 minutes, then the CPU busy, then only HTTP through the
  // proxy.
  for (int minute = 1; minute <= 60; ++minute) {
    clock_.Advance(std::chrono::minutes(1));
    if (minute <= 20) {
      BeatWithActivity(*plane_, node, id, 0, 1);
    } else if (minute <= 40) {
      BeatWithActivity(*plane_, node, id, 95, 0);
    } else {
      BeatWithActivity(*plane_, node, id, 0, 0);
      plane_->NoteProxyTraffic(id);
    }
    Durable(plane_->Tick());
  }
  EXPECT_EQ(Get(alice, id).desired, core::DesiredState::kRunning);
  EXPECT_TRUE(plane_->Events(alice, OfKind("pod.idle_warning"))->empty());
  // Then quiet: warned after 8 minutes, stopped after 10.
  for (int minute = 1; minute <= 10; ++minute) {
    clock_.Advance(std::chrono::minutes(1));
    BeatWithActivity(*plane_, node, id, 0, 0);
    Durable(plane_->Tick());
  }
  EXPECT_EQ(plane_->Events(alice, OfKind("pod.idle_warning"))->size(), 1u);
  EXPECT_EQ(Get(alice, id).desired, core::DesiredState::kStopped);
}

TEST_P(ControlPlaneTest, StopAfterStopsARunAtItsLimitWhateverItsUse) {
  const Principal alice = NewUser("alice", "100");
  const Principal node = NewNode("n1", 2);
  PodSpec spec;
  spec.stop_after_s = 2 * 3600;
  const std::string id = RunningAutoStopPod(*plane_, alice, node, spec, clock_.Now());
  for (int minute = 1; minute <= 119; ++minute) {
    clock_.Advance(std::chrono::minutes(1));
    BeatWithActivity(*plane_, node, id, 100, 1);  // busy all along
    Durable(plane_->Tick());
  }
  EXPECT_EQ(plane_->Events(alice, OfKind("pod.runtime_warning"))->size(), 1u);
  EXPECT_EQ(Get(alice, id).desired, core::DesiredState::kRunning);
  clock_.Advance(std::chrono::minutes(1));
  Durable(plane_->Tick());
  EXPECT_EQ(Get(alice, id).desired, core::DesiredState::kStopped);
  const std::vector<core::Event> stops = plane_->Events(alice, OfKind("pod.runtime_stop")).value();
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_NE(stops[0].message.find("stop_after of 2h"), std::string::npos) << stops[0].message;
}

TEST_P(ControlPlaneTestRestart, APodLeftStoppedPastTerminateAfterStoppedIsTerminatedVolumeAndAll) {
  const Principal alice = NewUser("alice", "100");
  const Principal node = NewNode("n1", 2);
  PodSpec spec;
  spec.image = "busybox";
  spec.gpu_type = "4090";
  spec.volume_gb = 10;
  spec.terminate_after_stopped_s = 7 * 24 * 3600;
  const auto refused = plane_->CreatePod(alice, spec);
  EXPECT_EQ(refused.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("terminate_deletes_volume"), std::string::npos)
      << refused.status().message();
  spec.terminate_deletes_volume = true;
  const std::string id = RunningAutoStopPod(*plane_, alice, node, spec, clock_.Now());
  ASSERT_TRUE(plane_->Act(alice, id, core::PodAction::kStop).ok());
  ASSERT_TRUE(Report(node, id, 2, PodState::kStopped, clock_.Now()).ok());
  Durable(plane_->Tick());
  Reopen();  // the setting is kept with the pod
  EXPECT_EQ(Get(alice, id).terminate_after_stopped_s, 7 * 24 * 3600);

  // A day ahead, its owner is told once (an event, a notice, the webhooks).
  clock_.Advance(std::chrono::hours(6 * 24) - std::chrono::minutes(1));
  Durable(plane_->Tick());
  EXPECT_TRUE(plane_->Events(alice, OfKind("pod.terminate_warning"))->empty());
  clock_.Advance(std::chrono::minutes(1));
  Durable(plane_->Tick());
  const std::vector<core::Event> warned =
      plane_->Events(alice, OfKind("pod.terminate_warning")).value();
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_NE(warned[0].message.find("will be terminated at"), std::string::npos)
      << warned[0].message;
  EXPECT_NE(warned[0].message.find("its own 10 GB volume is deleted"), std::string::npos)
      << warned[0].message;
  clock_.Advance(std::chrono::hours(24) - std::chrono::minutes(1));
  Durable(plane_->Tick());
  EXPECT_EQ(Get(alice, id).state, PodState::kStopped) << "not before its time";
  EXPECT_EQ(plane_->Events(alice, OfKind("pod.terminate_warning"))->size(), 1u) << "told once";
  clock_.Advance(std::chrono::minutes(1));
  Durable(plane_->Tick());
  const core::Pod gone = Get(alice, id);
  EXPECT_EQ(gone.desired, core::DesiredState::kTerminated);
  EXPECT_EQ(gone.state_reason.rfind("terminated: left stopped", 0), 0u) << gone.state_reason;
  // Its last node deletes its volume and says so (DesiredFor): then it is terminated.
  ASSERT_TRUE(Report(node, id, 3, PodState::kTerminated, clock_.Now()).ok());
  EXPECT_EQ(Get(alice, id).state, PodState::kTerminated);
  const std::vector<core::Event> events =
      plane_->Events(alice, OfKind("pod.auto_terminate")).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].message.find("left stopped for its terminate_after_stopped of 7d"),
            std::string::npos)
      << events[0].message;

  // Terminated once: later ticks find nothing more to do.
  clock_.Advance(std::chrono::hours(24 * 30));
  Durable(plane_->Tick());
  EXPECT_EQ(plane_->Events(alice, OfKind("pod.auto_terminate"))->size(), 1u);
}

// --- Event webhooks
// -------------------------------------------------------------------------------

// Waits (at most 20 s) until `receiver` has `count` requests; false if it never does.
bool AwaitRequests(suanli::testing::WebhookReceiver& receiver, size_t count) {
  for (int i = 0; i < 2000 && receiver.requests().size() < count; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return receiver.requests().size() >= count;
}

TEST_P(ControlPlaneTestRestart, EventWebhooksAreSignedInOrderRetriedAndResumeAfterARestart) {
  const Principal alice = NewUser("alice", "10");
  const Principal bob = NewUser("bob", "10");
  suanli::testing::WebhookReceiver receiver(/*failures=*/2);
  auto hook = plane_->CreateEventWebhook(alice, receiver.url(), {"pod.state"});
  ASSERT_TRUE(hook.ok()) << hook.status().ToString();
  Durable(hook->sequence);
  EXPECT_EQ(plane_->CreateEventWebhook(alice, "https://example.com/x", {}).status().code(),
            core::StatusCode::kInvalidArgument);
  EXPECT_EQ(plane_->DeleteEventWebhook(bob, hook->value.hook.id).status().code(),
            core::StatusCode::kNotFound);
  const EventWebhookOptions fast{.first_backoff = std::chrono::milliseconds(10),
                                 .max_backoff = std::chrono::milliseconds(40),
                                 .timeout = std::chrono::milliseconds(2'000),
                                 .poll = std::chrono::milliseconds(10),
                                 .policy = *net::OutboundPolicy::Allowing({"127.0.0.0/8"})};
  const Principal node = NewNode("n1", 2);
  const core::Pod pod = CreatePod(alice);  // pending (created), then starting
  CreatePod(bob);                          // bob's: never alice's webhook
  {
    EventWebhookDispatcher dispatcher(*plane_, fast);
    ASSERT_TRUE(AwaitRequests(receiver, 4));  // two refused, then two delivered
    for (int i = 0; i < 200; ++i) {           // and the cursor committed
      if (plane_->ListEventWebhooks(alice)->value[0].hook.delivered_seq > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  // While no dispatcher runs (the server is down or about to be), more happens; then a restart
  // from the store alone.
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, clock_.Now()).ok());
  Reopen();
  {
    EventWebhookDispatcher dispatcher(*plane_, fast);
    ASSERT_TRUE(AwaitRequests(receiver, 5));
  }
  const std::vector<net::HttpRequest> requests = receiver.requests();
  std::vector<std::string> delivered;
  int64_t last_id = 0;
  for (size_t i = 2; i < requests.size(); ++i) {  // the 2xx ones
    const net::HttpRequest& request = requests[i];
    EXPECT_EQ(request.Header("x-suanli-signature").value_or(""),
              WebhookSignature(hook->value.hook.secret, request.body));
    const auto event = boost::json::parse(request.body).as_object();
    EXPECT_EQ(event.at("kind").as_string(), "pod.state");
    EXPECT_EQ(event.at("user_id").as_string(), alice.user_id);
    const int64_t id = event.at("id").as_int64();
    EXPECT_EQ(request.Header("x-suanli-event-id").value_or(""), std::to_string(id));
    EXPECT_GT(id, last_id) << "in order, each once here";
    last_id = id;
    delivered.push_back(std::string(event.at("detail").as_object().at("to").as_string()));
  }
  EXPECT_EQ(delivered, (std::vector<std::string>{"pending", "starting", "running"}));
  // The refused tries are in the delivery log, with the receiver's status.
  const std::vector<EventWebhookInfo> hooks = plane_->ListEventWebhooks(alice)->value;
  ASSERT_EQ(hooks.size(), 1u);
  ASSERT_FALSE(hooks[0].deliveries.empty());
  EXPECT_EQ(hooks[0].deliveries.back().status, 204);
  EXPECT_TRUE(plane_->ListEventWebhooks(bob)->value.empty());
}

// --- Budgets
// --------------------------------------------------------------------------------------

TEST_P(ControlPlaneTestRestart, AMonthlyBudgetWarnsOnceAt80PercentAndActsAtItsLimitAcrossARestart) {
  const Principal alice = NewUser("alice", "100");
  const Principal node = NewNode("n1", 2);
  const core::TimePoint started = clock_.Now();
  // The budget is exactly ten minutes of one GPU.
  const Money budget = billing::ChargeBetween(plane_->GpuPrice("RTX 4090"), started, started,
                                              started + std::chrono::minutes(10));
  auto set = plane_->SetBudget(alice, budget, core::BudgetAction::kStopAll);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  Durable(set->sequence);
  EXPECT_EQ(
      plane_->SetBudget(alice, Money::FromMicros(-1), core::BudgetAction::kNotify).status().code(),
      core::StatusCode::kInvalidArgument);
  const core::Pod pod = CreatePod(alice);
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, started).ok());
  const auto count = [&](std::string kind) { return plane_->Events(alice, OfKind(kind))->size(); };
  for (int minute = 1; minute <= 7; ++minute) {
    clock_.Advance(std::chrono::minutes(1));
    Durable(plane_->Tick());
  }
  EXPECT_EQ(count("budget.warning"), 0u);
  clock_.Advance(std::chrono::seconds(65));  // 8m05s: past 80 %
  Durable(plane_->Tick());
  Durable(plane_->Tick());
  EXPECT_EQ(count("budget.warning"), 1u);
  // A restart counts the month's charges again from the ledger, and does not warn again.
  Reopen();
  clock_.Advance(std::chrono::seconds(1));
  Durable(plane_->Tick());
  EXPECT_EQ(count("budget.warning"), 1u);
  EXPECT_EQ(Get(alice, pod.id).desired, core::DesiredState::kRunning);
  // 9m59s: a second short of the budget; then exactly at it, the chosen action.
  clock_.Advance(std::chrono::seconds(113));
  Durable(plane_->Tick());
  EXPECT_EQ(count("budget.reached"), 0u);
  EXPECT_EQ(Get(alice, pod.id).desired, core::DesiredState::kRunning);
  clock_.Advance(std::chrono::seconds(1));
  Durable(plane_->Tick());
  EXPECT_EQ(count("budget.reached"), 1u);
  EXPECT_EQ(count("pod.budget_stop"), 1u);
  EXPECT_EQ(Get(alice, pod.id).desired, core::DesiredState::kStopped);
  const auto detail =
      boost::json::parse(plane_->Events(alice, OfKind("budget.reached"))->at(0).detail).as_object();
  EXPECT_EQ(detail.at("spent_micros").as_int64(), budget.micros());
  EXPECT_EQ(detail.at("action").as_string(), "stop_all");

  // What the action stopped does not start again this month, nor does a new pod; across a restart.
  ASSERT_TRUE(Report(node, pod.id, 2, PodState::kStopped, clock_.Now()).ok());
  Reopen();
  const auto refused = plane_->Act(alice, pod.id, core::PodAction::kStart);
  EXPECT_EQ(refused.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("monthly budget of"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("suanli users set-budget"), std::string::npos);
  PodSpec spec;
  spec.image = "busybox";
  spec.gpu_type = "4090";
  spec.queue = true;
  EXPECT_EQ(plane_->CreatePod(alice, spec).status().code(), core::StatusCode::kFailedPrecondition);
  // A raised budget starts over: the pod starts, and 80 % of the new one warns again.
  auto raised = plane_->SetBudget(alice, budget + budget, core::BudgetAction::kStopAll);
  ASSERT_TRUE(raised.ok());
  Durable(raised->sequence);
  auto started_again = plane_->Act(alice, pod.id, core::PodAction::kStart);
  ASSERT_TRUE(started_again.ok()) << started_again.status().ToString();
  Durable(started_again->sequence);
}

TEST_P(ControlPlaneTest, ABudgetThatStopsInterruptiblePodsRefusesOnlyThose) {
  const Principal alice = NewUser("alice", "100");
  const Principal node = NewNode("n1", 2);
  const core::TimePoint started = clock_.Now();
  const Money budget = billing::ChargeBetween(plane_->GpuPrice("RTX 4090"), started, started,
                                              started + std::chrono::minutes(1));
  Durable(plane_->SetBudget(alice, budget, core::BudgetAction::kStopInterruptible)->sequence);
  const core::Pod pod = CreatePod(alice, 1, 0, /*interruptible=*/true);
  ASSERT_TRUE(Report(node, pod.id, 1, PodState::kRunning, started).ok());
  clock_.Advance(std::chrono::minutes(2));
  Durable(plane_->Tick());
  EXPECT_EQ(Get(alice, pod.id).desired, core::DesiredState::kStopped);
  PodSpec spec;
  spec.image = "busybox";
  spec.gpu_type = "4090";
  spec.queue = true;
  spec.interruptible = true;
  EXPECT_EQ(plane_->CreatePod(alice, spec).status().code(), core::StatusCode::kFailedPrecondition);
  spec.interruptible = false;
  auto on_demand = plane_->CreatePod(alice, spec);
  EXPECT_TRUE(on_demand.ok()) << on_demand.status().ToString();
}

// A project's own limits, inside its owner's: a $/h cap refuses the pod that would pass it (with
// the figures), and a monthly budget counts the project's pods only, warns at 80 % and at 100 %
// stops them, not the owner's own; what it stopped stays refused across a restart.
TEST_P(ControlPlaneTestRestart, AProjectsCapAndMonthlyBudgetHoldItsOwnPodsOnlyAcrossARestart) {
  const Principal owner = NewUser("owner", "100");
  const Principal member = NewUser("member", "0");
  const Principal node = NewNode("n1", 4);
  ASSERT_TRUE(plane_->CreateProject(owner, "team").ok());
  ASSERT_TRUE(plane_->SetProjectMember(owner, "team", "member", core::ProjectRole::kMember).ok());
  const Money gpu_hour = plane_->GpuPrice("RTX 4090");
  ControlPlane::ProjectBudgetChange limits;
  limits.spend_cap_per_hour = gpu_hour + gpu_hour;  // two GPUs at once
  EXPECT_EQ(plane_->SetProjectBudget(member, "team", limits).status().code(),
            core::StatusCode::kPermissionDenied)
      << "the owner's to set";
  ControlPlane::ProjectBudgetChange negative;
  negative.monthly_budget = Money::FromMicros(-1);
  EXPECT_EQ(plane_->SetProjectBudget(owner, "team", negative).status().code(),
            core::StatusCode::kInvalidArgument);
  auto set = plane_->SetProjectBudget(owner, "team", limits);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  Durable(set->sequence);

  PodSpec spec;
  spec.image = "busybox";
  spec.gpu_type = "4090";
  spec.queue = true;
  spec.project = "team";
  auto first = plane_->CreatePod(member, spec);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  spec.gpu_count = 2;
  const auto over = plane_->CreatePod(member, spec);
  EXPECT_EQ(over.status().code(), core::StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find("over its cap of " + (gpu_hour + gpu_hour).ToString()),
            std::string::npos)
      << over.status().message();
  spec.gpu_count = 1;
  auto second = plane_->CreatePod(member, spec);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  Durable(second->sequence);
  const core::Pod own = CreatePod(owner);  // the owner's own: not the project's cap's business

  // The monthly budget: ten minutes of one GPU, counted over the project's two pods.
  const core::TimePoint started = clock_.Now();
  limits = {};
  limits.monthly_budget =
      billing::ChargeBetween(gpu_hour, started, started, started + std::chrono::minutes(10));
  limits.action = core::BudgetAction::kStopAll;
  Durable(plane_->SetProjectBudget(owner, "team", limits)->sequence);
  for (const std::string& id : {first->value.id, second->value.id, own.id}) {
    ASSERT_TRUE(Report(node, id, 1, PodState::kRunning, started).ok());
  }
  const auto count = [&](std::string kind) { return plane_->Events(owner, OfKind(kind))->size(); };
  clock_.Advance(std::chrono::minutes(3));  // 6 GPU-minutes of the project's: under 80 %
  Durable(plane_->Tick());
  EXPECT_EQ(count("budget.warning"), 0u);
  clock_.Advance(std::chrono::seconds(61));  // 8 GPU-minutes and 2 s: past 80 %
  Durable(plane_->Tick());
  ASSERT_EQ(count("budget.warning"), 1u);
  const core::Event warning = plane_->Events(owner, OfKind("budget.warning"))->at(0);
  EXPECT_EQ(warning.object_id, set->value.id);
  EXPECT_NE(warning.message.find("project team has spent"), std::string::npos) << warning.message;
  Reopen();
  // 10 GPU-minutes and 2 s (each pod's charge rounds down on its own): reached, as counted again
  // from the ledger.
  clock_.Advance(std::chrono::seconds(60));
  Durable(plane_->Tick());
  EXPECT_EQ(count("budget.warning"), 1u);
  EXPECT_EQ(count("budget.reached"), 1u);
  EXPECT_EQ(count("pod.budget_stop"), 2u);
  EXPECT_EQ(Get(owner, first->value.id).desired, core::DesiredState::kStopped);
  EXPECT_EQ(Get(owner, second->value.id).desired, core::DesiredState::kStopped);
  EXPECT_EQ(Get(owner, own.id).desired, core::DesiredState::kRunning) << "not the project's";

  ASSERT_TRUE(Report(node, first->value.id, 2, PodState::kStopped, clock_.Now()).ok());
  Reopen();
  const auto refused = plane_->Act(member, first->value.id, core::PodAction::kStart);
  EXPECT_EQ(refused.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("project team's monthly budget"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(plane_->CreatePod(member, spec).status().code(), core::StatusCode::kFailedPrecondition);
  spec.project.clear();
  EXPECT_TRUE(plane_->CreatePod(owner, spec).ok()) << "the owner's own pods are not held";
}

}  // namespace
}  // namespace suanli::server
