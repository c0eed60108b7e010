// Volumes of their own and moves of a pod's data (control_plane_volumes.cc), on both stores.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "billing/meter.h"
#include "server/control_plane.h"
#include "server/control_plane_testing.h"

namespace suanli::server {
namespace {

using core::Money;
using core::PodState;
using core::StatusCode;

class VolumesTest : public ControlPlaneOnStoreTest {
 protected:
  Principal NewUser(std::string name, std::string_view credits) {
    auto user = plane_->CreateUser(admin_, std::move(name), core::Role::kUser,
                                   *Money::ParseDollars(credits));
    EXPECT_TRUE(user.ok()) << user.status().ToString();
    Durable(user->sequence);
    return Principal{user->value.id, core::Role::kUser, "", ""};
  }
  Principal NewNode(std::string name, int gpus, std::map<std::string, std::string> labels = {}) {
    auto join = plane_->CreateJoinToken(admin_, "test");
    EXPECT_TRUE(join.ok());
    NodeReport report;
    report.name = std::move(name);
    report.labels = std::move(labels);
    for (int i = 0; i < gpus; ++i) {
      report.gpus.push_back(
          {i, "GPU-" + std::to_string(i), "RTX 4090", 24, true, 0, core::kMilliGpu, ""});
    }
    report.vcpu = 64;
    report.memory_gb = 256;
    report.disk_gb = 2000;
    auto node = plane_->RegisterNode(join->value.second, report);
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    Durable(node->sequence);
    reports_[node->value.first.id] = report;
    return *plane_->Authenticate(node->value.second);
  }
  // A heartbeat of `node`, with what it reported at its registration.
  void Beat(const Principal& node) {
    auto beat = plane_->Heartbeat(node, reports_.at(node.node_id));
    ASSERT_TRUE(beat.ok()) << beat.status().ToString();
    Durable(beat->sequence);
  }
  VolumeInfo NewVolume(const Principal& user, std::string name, int size_gb = 10) {
    auto volume = plane_->CreateVolume(user, {std::move(name), size_gb, ""});
    EXPECT_TRUE(volume.ok()) << volume.status().ToString();
    Durable(volume->sequence);
    return volume->value;
  }
  core::Result<Written<core::Pod>> TryPod(const Principal& user, int volume_gb,
                                          std::vector<VolumeRequest> volumes = {}) {
    PodSpec spec;
    spec.image = "busybox";
    spec.gpu_type = "4090";
    spec.volume_gb = volume_gb;
    spec.volumes = std::move(volumes);
    spec.queue = true;
    return plane_->CreatePod(user, spec);
  }
  core::Pod NewPod(const Principal& user, int volume_gb, std::vector<VolumeRequest> volumes = {}) {
    auto pod = TryPod(user, volume_gb, std::move(volumes));
    EXPECT_TRUE(pod.ok()) << pod.status().ToString();
    Durable(pod->sequence);
    return pod->value;
  }
  core::Pod Get(const Principal& user, const std::string& id) {
    return plane_->GetPod(user, id)->value;
  }
  void Report(const Principal& node, const std::string& pod_id, PodState state,
              std::optional<wire::MoveProgress> move = std::nullopt) {
    PodReport report;
    report.seq = ++report_seq_;
    report.state = state;
    report.at = plane_->Now();
    report.move = std::move(move);
    auto result = plane_->ReportPod(node, pod_id, report);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    Durable(result->sequence);
  }
  // Runs `pod` on whatever node it is bound to, then stops it: it has data on that node.
  void RunAndStop(const Principal& user, const core::Pod& pod, const Principal& node) {
    ASSERT_EQ(Get(user, pod.id).node_id, node.node_id);
    Report(node, pod.id, PodState::kRunning);
    ASSERT_TRUE(plane_->Act(user, pod.id, core::PodAction::kStop).ok());
    Report(node, pod.id, PodState::kStopped);
    ASSERT_EQ(Get(user, pod.id).node_id, "");
  }
  std::vector<core::Event> EventsOf(const std::string& pod_id, std::string kind) {
    store::EventQuery query;
    query.object_id = pod_id;
    query.kind = std::move(kind);
    return plane_->Events(admin_, query).value();
  }

  // A pod of one GPU on node `full`'s last GPU (the others cordoned meanwhile).
  core::Pod Fill(const Principal& user, const Principal& full, const Principal& other) {
    EXPECT_TRUE(plane_->ActOnNode(admin_, other.node_id, ControlPlane::NodeAction::kCordon).ok());
    const core::Pod filler = NewPod(user, 0);
    EXPECT_EQ(Get(user, filler.id).node_id, full.node_id);
    EXPECT_TRUE(plane_->ActOnNode(admin_, other.node_id, ControlPlane::NodeAction::kUncordon).ok());
    return filler;
  }

  int64_t report_seq_ = 0;
  std::map<std::string, NodeReport> reports_;  // by node id, as registered
};

// What a restart must find again runs on both stores; the rest of the suite, rules that a store
// cannot change, on SQLite only.
class VolumesTestRestart : public VolumesTest {};
SUANLI_INSTANTIATE_ON_BOTH_STORES(VolumesTestRestart);
SUANLI_INSTANTIATE_ON_SQLITE(VolumesTest);

TEST_P(VolumesTestRestart, AVolumeIsCreatedFoundByNameGrownOnlyAndSurvivesARestart) {
  const Principal alice = NewUser("alice", "50");
  const VolumeInfo data = NewVolume(alice, "data", 10);
  EXPECT_EQ(data.volume.size_gb, 10);
  EXPECT_EQ(data.volume.home_node_id, "");  // no data anywhere until a pod uses it
  EXPECT_EQ(plane_->CreateVolume(alice, {"data", 5, ""}).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(plane_->CreateVolume(alice, {"bad name", 5, ""}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(plane_->CreateVolume(alice, {"big", 0, ""}).status().code(),
            StatusCode::kInvalidArgument);
  auto smaller = plane_->ResizeVolume(alice, "data", 5);
  EXPECT_EQ(smaller.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(smaller.status().message().find("only grows"), std::string::npos);
  auto grown = plane_->ResizeVolume(alice, "data", 30);
  ASSERT_TRUE(grown.ok()) << grown.status().ToString();
  Durable(grown->sequence);
  const Principal bob = NewUser("bob", "50");
  EXPECT_EQ(plane_->GetVolume(bob, data.volume.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(plane_->GetVolume(bob, "data").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(plane_->ListVolumes(bob)->value.empty());
  Reopen();
  auto again = plane_->GetVolume(alice, "data");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->value.volume.id, data.volume.id);
  EXPECT_EQ(again->value.volume.size_gb, 30);
  EXPECT_EQ(plane_->ListVolumes(admin_)->value.size(), 1u);
  auto deleted = plane_->DeleteVolume(alice, data.volume.id);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  Durable(deleted->sequence);
  Reopen();
  EXPECT_EQ(plane_->GetVolume(alice, "data").status().code(), StatusCode::kNotFound);
}

TEST_P(VolumesTest, AVolumeIsOnePodsReadWriteOrManyPodsReadOnlyAndCannotBeDeletedInUse) {
  const Principal alice = NewUser("alice", "100");
  NewVolume(alice, "shared");
  const core::Pod reader = NewPod(alice, 0, {{"shared", "/data", true}});
  NewPod(alice, 0, {{"shared", "/data", true}});
  auto writer = TryPod(alice, 0, {{"shared", "/data", false}});
  ASSERT_EQ(writer.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(writer.status().message().find("read-only to pod"), std::string::npos)
      << writer.status().message();

  NewVolume(alice, "mine");
  const core::Pod owner = NewPod(alice, 0, {{"mine", "/data", false}});
  EXPECT_EQ(Get(alice, owner.id).volumes.size(), 1u);
  auto second = TryPod(alice, 0, {{"mine", "/data", true}});
  ASSERT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find(owner.id), std::string::npos)
      << second.status().message();

  auto in_use = plane_->DeleteVolume(alice, "mine");
  ASSERT_EQ(in_use.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(in_use.status().message().find(owner.id), std::string::npos);
  EXPECT_EQ(plane_->GetVolume(alice, "shared")->value.use.pod_ids.size(), 2u);

  // Bad requests: another's volume, one path twice, the pod's own volume's path, a relative path.
  const Principal bob = NewUser("bob", "100");
  EXPECT_EQ(TryPod(bob, 0, {{"shared", "/data", true}}).status().code(), StatusCode::kNotFound);
  NewVolume(alice, "other");
  EXPECT_EQ(TryPod(alice, 0, {{"other", "/a", false}, {"shared", "/a", true}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(TryPod(alice, 20, {{"other", "/workspace", false}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(TryPod(alice, 0, {{"other", "data", false}}).status().code(),
            StatusCode::kInvalidArgument);

  // Once its pod is terminated, a volume is free again; the terminate says it is kept.
  auto terminated = plane_->Act(alice, owner.id, core::PodAction::kTerminate);
  ASSERT_TRUE(terminated.ok()) << terminated.status().ToString();
  EXPECT_NE(terminated->value.state_reason.find("its volumes mine are kept"), std::string::npos)
      << terminated->value.state_reason;
  auto deleted = plane_->DeleteVolume(alice, "mine");
  EXPECT_TRUE(deleted.ok()) << deleted.status().ToString();
  (void)reader;
}

TEST_P(VolumesTestRestart, AVolumeIsBilledEachSecondOnceAtTheSizeItHadThen) {
  const Principal alice = NewUser("alice", "100");
  // 720 GB at $0.10 per GB-month (720 hours): $0.10 an hour.
  const VolumeInfo data = NewVolume(alice, "data", 720);
  const Money start = plane_->GetUser(alice, alice.user_id)->value.balance;
  clock_.Advance(std::chrono::minutes(30));
  Durable(plane_->Tick());
  auto grown = plane_->ResizeVolume(alice, "data", 1440);  // $0.20 an hour from here
  ASSERT_TRUE(grown.ok());
  Durable(grown->sequence);
  Reopen();
  clock_.Advance(std::chrono::minutes(30));
  Durable(plane_->Tick());
  Durable(plane_->Tick());  // nothing more: the same second is never charged twice
  Money charged;
  const std::vector<core::LedgerEntry> ledger = plane_->Ledger(alice, "").value();
  for (const core::LedgerEntry& entry : ledger) {
    if (entry.pod_id == data.volume.id) {
      EXPECT_EQ(entry.kind, core::LedgerKind::kStorage);
      charged = charged - entry.amount;
    }
  }
  EXPECT_EQ(charged.micros(), 50'000 + 100'000);
  EXPECT_EQ(plane_->GetVolume(alice, "data")->value.use.cost.micros(), 150'000);
  EXPECT_EQ((start - plane_->GetUser(alice, alice.user_id)->value.balance).micros(), 150'000);
  // A user who cannot afford a volume's runway is refused it.
  const Principal poor = NewUser("poor", "0");
  EXPECT_EQ(plane_->CreateVolume(poor, {"x", 1000, ""}).status().code(),
            StatusCode::kResourceExhausted);
}

TEST_P(VolumesTestRestart,
       AStoppedPodResumesOnItsNodeWhenThereIsRoomElseWaitsAsLongAsAMoveThenMoves) {
  const Principal alice = NewUser("alice", "100");
  const Principal a = NewNode("a", 1);
  const core::Pod pod = NewPod(alice, 20);
  ASSERT_EQ(Get(alice, pod.id).node_id, a.node_id);
  RunAndStop(alice, pod, a);
  const Principal b = NewNode("b", 1);
  // A has room: the pod goes back to its data, nothing moves.
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStart).ok());
  EXPECT_EQ(Get(alice, pod.id).node_id, a.node_id);
  EXPECT_TRUE(Get(alice, pod.id).moves.empty());
  RunAndStop(alice, pod, a);

  // A is full: the pod waits for A as long as moving its 20 GB would take (at the assumed
  // 50 MB/s, 400 s), then starts on B, and its volume moves there first.
  Fill(alice, a, b);
  auto started = plane_->Act(alice, pod.id, core::PodAction::kStart);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  Durable(started->sequence);
  const core::Pod waiting = Get(alice, pod.id);
  EXPECT_EQ(waiting.state, PodState::kPending);
  EXPECT_NE(waiting.state_reason.find("about as long as moving the data"), std::string::npos)
      << waiting.state_reason;
  clock_.Advance(std::chrono::seconds(399));
  Beat(a);
  Beat(b);
  Durable(plane_->Tick());
  EXPECT_EQ(Get(alice, pod.id).state, PodState::kPending);
  clock_.Advance(std::chrono::seconds(1));
  Durable(plane_->Tick());
  const core::Pod moving = Get(alice, pod.id);
  ASSERT_EQ(moving.node_id, b.node_id);
  ASSERT_EQ(moving.moves.size(), 1u);
  const core::VolumeMove move = moving.moves[0];
  EXPECT_EQ(move.volume, "suanli-" + pod.id);
  EXPECT_EQ(move.from_node_id, a.node_id);
  EXPECT_EQ(EventsOf(pod.id, "volume.move_started").size(), 1u);
  // Only the new node may fetch it, from A.
  auto source = plane_->MoveSourceFor(b, move.id);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ(source->node_id, a.node_id);
  EXPECT_EQ(source->volume, move.volume);
  EXPECT_EQ(plane_->MoveSourceFor(a, move.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(plane_->MoveSourceFor(alice, move.id).status().code(), StatusCode::kPermissionDenied);

  Reopen();  // the move is durable
  wire::MoveProgress progress;
  progress.move_id = move.id;
  progress.bytes = 50 << 20;
  progress.total_bytes = 100 << 20;
  progress.elapsed_ms = 500;
  Report(b, pod.id, PodState::kStarting, progress);
  EXPECT_EQ(Get(alice, pod.id).pull->current_bytes, 50 << 20);  // shown like a pull
  EXPECT_EQ(EventsOf(pod.id, "volume.move_progress").size(), 1u);
  progress.bytes = 100 << 20;
  progress.elapsed_ms = 1000;
  progress.done = true;
  progress.sha256 = std::string(64, 'a');
  Report(b, pod.id, PodState::kStarting, progress);
  EXPECT_TRUE(Get(alice, pod.id).moves.empty());
  const std::vector<core::Event> moved = EventsOf(pod.id, "volume.moved");
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_NE(moved[0].detail.find("\"bytes\":104857600"), std::string::npos) << moved[0].detail;
  EXPECT_NE(moved[0].detail.find("\"seconds\":1"), std::string::npos) << moved[0].detail;
  // A's copy goes once the pod runs on B.
  EXPECT_TRUE(plane_->TakeVolumeRemovals().empty());
  Report(b, pod.id, PodState::kRunning);
  const auto removals = plane_->TakeVolumeRemovals();
  ASSERT_EQ(removals.size(), 1u);
  EXPECT_EQ(removals[0], std::make_pair(a.node_id, "suanli-" + pod.id));
  EXPECT_TRUE(plane_->TakeVolumeRemovals().empty());  // handed out once
  EXPECT_EQ(Get(alice, pod.id).last_node_id, b.node_id);
}

TEST_P(VolumesTest, APodWhoseDataIsOnANodeThatIsAwayWaitsForItRatherThanStartEmpty) {
  const Principal alice = NewUser("alice", "100");
  const Principal a = NewNode("a", 1);
  const core::Pod pod = NewPod(alice, 20);
  RunAndStop(alice, pod, a);
  clock_.Advance(std::chrono::seconds(31));  // A's heartbeat is late: unreachable
  Durable(plane_->Tick());
  NewNode("b", 1);  // B has room; without the rule the pod would start there with an empty volume
  auto started = plane_->Act(alice, pod.id, core::PodAction::kStart);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  const core::Pod waiting = Get(alice, pod.id);
  EXPECT_EQ(waiting.state, PodState::kPending);
  EXPECT_TRUE(waiting.moves.empty());
  EXPECT_NE(waiting.state_reason.find("holds its data"), std::string::npos) << waiting.state_reason;
}

// A node that frees up while the pod waits for it: nothing moves.
TEST_P(VolumesTest, APodWaitingForItsDataNodeStartsThereWhenItFreesUp) {
  const Principal alice = NewUser("alice", "100");
  const Principal a = NewNode("a", 1);
  const core::Pod pod = NewPod(alice, 20);
  RunAndStop(alice, pod, a);
  const Principal b = NewNode("b", 1);
  const core::Pod filler = Fill(alice, a, b);
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStart).ok());
  ASSERT_EQ(Get(alice, pod.id).state, PodState::kPending);
  clock_.Advance(std::chrono::seconds(100));
  Beat(a);
  Beat(b);
  ASSERT_TRUE(plane_->Act(alice, filler.id, core::PodAction::kTerminate).ok());
  Report(a, filler.id, PodState::kTerminated);
  Durable(plane_->Tick());
  const core::Pod resumed = Get(alice, pod.id);
  EXPECT_EQ(resumed.node_id, a.node_id);
  EXPECT_TRUE(resumed.moves.empty());
  EXPECT_TRUE(EventsOf(pod.id, "volume.move_started").empty());

  // With no wait configured (server --max-data-wait 0), a full node's data moves at once; so it
  // does when the node holding it is cordoned (it will not free up for the pod).
  RunAndStop(alice, pod, a);
  ASSERT_TRUE(plane_->ActOnNode(admin_, a.node_id, ControlPlane::NodeAction::kCordon).ok());
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStart).ok());
  EXPECT_EQ(Get(alice, pod.id).node_id, b.node_id);
  EXPECT_EQ(Get(alice, pod.id).moves.size(), 1u);
}

TEST_P(VolumesTestRestart, APodStoppedMidMoveKeepsItsDataWhereItWas) {
  options_.max_data_wait = core::Duration::zero();  // it moves at once
  Reopen();
  const Principal alice = NewUser("alice", "100");
  const Principal a = NewNode("a", 1);
  const core::Pod pod = NewPod(alice, 20);
  RunAndStop(alice, pod, a);
  const Principal b = NewNode("b", 1);
  Fill(alice, a, b);
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStart).ok());
  ASSERT_EQ(Get(alice, pod.id).moves.size(), 1u);
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStop).ok());
  Report(b, pod.id, PodState::kStopped);
  const core::Pod stopped = Get(alice, pod.id);
  EXPECT_TRUE(stopped.moves.empty());
  EXPECT_EQ(stopped.last_node_id, a.node_id);  // where its data still is
  EXPECT_TRUE(plane_->TakeVolumeRemovals().empty());
}

// The agent holds a pod to the size of the volumes it writes (issue 34, item 11): it is told each
// volume's size as it is now, so a resize reaches it without the pod being made again.
TEST_P(VolumesTest, ANodeIsToldTheSizeOfEachVolumeItsPodsMountAsItIsNow) {
  const Principal alice = NewUser("alice", "100");
  const Principal node = NewNode("a", 1);
  NewVolume(alice, "data", 1);
  const core::Pod pod = NewPod(alice, 0, {{"data", "/data", false}});
  auto mounted = [&]() {
    const core::Result<DesiredPods> desired = plane_->DesiredFor(node);
    EXPECT_TRUE(desired.ok()) << desired.status().ToString();
    EXPECT_EQ(desired->pods.size(), 1u);
    return desired->pods.at(0).volumes.at(0);
  };
  EXPECT_EQ(mounted().size_gb, 1);
  ASSERT_TRUE(plane_->ResizeVolume(alice, "data", 3).ok());
  EXPECT_EQ(mounted().size_gb, 3);
  EXPECT_EQ(Get(alice, pod.id).volumes.at(0).size_gb, 0) << "not stored with the pod";
}

TEST_P(VolumesTest, ANamedVolumeLivesWhereItWasFirstUsedAndReadersShareItsNode) {
  const Principal alice = NewUser("alice", "100");
  const Principal a = NewNode("a", 2);
  NewVolume(alice, "data");
  const core::Pod first = NewPod(alice, 0, {{"data", "/data", true}});
  ASSERT_EQ(Get(alice, first.id).node_id, a.node_id);
  EXPECT_EQ(plane_->GetVolume(alice, "data")->value.volume.home_node_id, a.node_id);
  const Principal b = NewNode("b", 2);
  // A second reader must share A while the first runs there, even when B is emptier.
  NewPod(alice, 0);  // A has one GPU left
  const core::Pod second = NewPod(alice, 0, {{"data", "/data", true}});
  EXPECT_EQ(Get(alice, second.id).node_id, a.node_id);
  EXPECT_TRUE(Get(alice, second.id).moves.empty());
  // A third waits for room on A rather than moving the volume away from its readers.
  const core::Pod third = NewPod(alice, 0, {{"data", "/data", true}});
  const core::Pod waiting = Get(alice, third.id);
  EXPECT_EQ(waiting.state, PodState::kPending);
  EXPECT_NE(waiting.state_reason.find("node " + a.node_id), std::string::npos)
      << waiting.state_reason;
  (void)b;
}

TEST_P(VolumesTestRestart, AVolumeOnTheSharedBackendRunsItsPodsOnAnyNodeWithItAndNeverMoves) {
  const std::map<std::string, std::string> shared = {
      {std::string(core::kSharedVolumesLabel), "true"}};
  const Principal alice = NewUser("alice", "100");
  const Principal a = NewNode("a", 1);  // no shared backend
  auto refused = plane_->CreateVolume(alice, {"data", 10, "", /*shared=*/true});
  ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("--shared-volumes"), std::string::npos)
      << refused.status().message();
  const Principal b = NewNode("b", 1, shared);
  const Principal c = NewNode("c", 1, shared);
  auto created = plane_->CreateVolume(alice, {"data", 10, "", /*shared=*/true});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Durable(created->sequence);
  EXPECT_EQ(created->value.volume.home_node_id, core::kAnyNode);
  EXPECT_EQ(plane_->CreateVolume(alice, {"copy", 0, "snap_x", true}).status().code(),
            StatusCode::kInvalidArgument);

  // A has room, but not the backend: the pod goes to B or C, mounting the volume from it.
  const core::Pod pod = NewPod(alice, 0, {{"data", "/data", false}});
  const core::Pod placed = Get(alice, pod.id);
  ASSERT_TRUE(placed.node_id == b.node_id || placed.node_id == c.node_id) << placed.node_id;
  ASSERT_EQ(placed.volumes.size(), 1u);
  EXPECT_TRUE(placed.volumes[0].shared);
  const Principal& first = placed.node_id == b.node_id ? b : c;
  const Principal& second = placed.node_id == b.node_id ? c : b;
  RunAndStop(alice, pod, first);
  // Its first node is cordoned: it resumes on the other, and nothing moves.
  ASSERT_TRUE(plane_->ActOnNode(admin_, first.node_id, ControlPlane::NodeAction::kCordon).ok());
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStart).ok());
  Reopen();  // the mount's backend is stored with the pod
  const core::Pod resumed = Get(alice, pod.id);
  EXPECT_EQ(resumed.node_id, second.node_id);
  EXPECT_TRUE(resumed.moves.empty());
  ASSERT_EQ(resumed.volumes.size(), 1u);
  EXPECT_TRUE(resumed.volumes[0].shared);
  EXPECT_TRUE(EventsOf(pod.id, "volume.move_started").empty());
  EXPECT_EQ(plane_->GetVolume(alice, "data")->value.volume.home_node_id, core::kAnyNode);
  // The new node's agent counts its reports of the pod from 1, below the first node's count.
  PodReport running;
  running.seq = 1;
  running.state = PodState::kRunning;
  running.at = plane_->Now();
  ASSERT_TRUE(plane_->ReportPod(second, pod.id, running).ok());
  EXPECT_EQ(Get(alice, pod.id).state, PodState::kRunning);
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kTerminate).ok());
  Report(second, pod.id, PodState::kTerminated);

  // A node that gains the backend (its agent restarted with --shared-volumes) says so in its
  // heartbeat; then it takes such pods too.
  reports_[a.node_id].labels = shared;
  Beat(a);
  ASSERT_TRUE(plane_->ActOnNode(admin_, second.node_id, ControlPlane::NodeAction::kCordon).ok());
  const core::Pod reader = NewPod(alice, 0, {{"data", "/in", true}});
  EXPECT_EQ(Get(alice, reader.id).node_id, a.node_id);
  ASSERT_TRUE(plane_->Act(alice, reader.id, core::PodAction::kTerminate).ok());
  Report(a, reader.id, PodState::kTerminated);

  // Deleting it asks one node that has the backend to delete its files.
  (void)plane_->TakeVolumeRemovals();
  auto deleted = plane_->DeleteVolume(alice, "data");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  const auto removals = plane_->TakeVolumeRemovals();
  ASSERT_EQ(removals.size(), 1u);
  EXPECT_TRUE(removals[0].first == a.node_id || removals[0].first == b.node_id ||
              removals[0].first == c.node_id);
  EXPECT_EQ(removals[0].second, "suanli-" + created->value.volume.id);
}

// Snapshots (control_plane_snapshots.cc): made by the volume's node through the relay, billed
// once made, restored into a new volume on that node; the agents' answers are given by hand here
// (tests/volume_move_process_test.cc runs real agents).
class SnapshotsTest : public VolumesTest {
 protected:
  // The only request of `kind` TakeStorageWork hands `node` now; fails the test unless there is
  // exactly one.
  wire::RelayRequest TakeOne(const Principal& node, wire::RelayRequest::Kind kind) {
    std::vector<wire::RelayRequest> work = plane_->TakeStorageWork(node.node_id);
    EXPECT_EQ(work.size(), 1u);
    if (work.size() != 1) return {};
    EXPECT_EQ(work[0].kind, kind);
    return work[0];
  }
  static ControlPlane::StorageWorkAnswer Answer(int status, int64_t size_bytes = -1,
                                                std::string sha256 = "") {
    ControlPlane::StorageWorkAnswer answer;
    answer.status = status;
    answer.size_bytes = size_bytes;
    answer.sha256 = std::move(sha256);
    answer.error = status / 100 == 2 ? "" : "volume suanli-vol_x on its node: no such volume";
    return answer;
  }
  core::Snapshot Snapshot(const Principal& user, std::string_view id) {
    auto snapshot = plane_->GetSnapshot(user, id);
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    return snapshot.ok() ? snapshot->value : core::Snapshot{};
  }
};

// What a restart must find again runs on both stores; the rest of the suite, rules that a store
// cannot change, on SQLite only.
class SnapshotsTestRestart : public SnapshotsTest {};
SUANLI_INSTANTIATE_ON_BOTH_STORES(SnapshotsTestRestart);
SUANLI_INSTANTIATE_ON_SQLITE(SnapshotsTest);

TEST_P(SnapshotsTestRestart, ASnapshotIsMadeOnItsNodeBilledOnceMadeAndRestoredIntoANewVolume) {
  const Principal alice = NewUser("alice", "100");
  const Principal node = NewNode("a", 1);
  const VolumeInfo data = NewVolume(alice, "data", 10);
  auto unused = plane_->CreateSnapshot(alice, {"data", ""});
  ASSERT_EQ(unused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(unused.status().message().find("holds no data yet"), std::string::npos);

  const core::Pod pod = NewPod(alice, 0, {{"data", "/data", false}});
  Report(node, pod.id, PodState::kRunning);
  auto written = plane_->CreateSnapshot(alice, {"data", ""});
  ASSERT_EQ(written.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(written.status().message().find("suanli pods stop " + pod.id), std::string::npos)
      << written.status().message();
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStop).ok());
  Report(node, pod.id, PodState::kStopped);

  auto made = plane_->CreateSnapshot(alice, {"data", ""});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Durable(made->sequence);
  const core::Snapshot& snapshot = made->value;
  EXPECT_EQ(snapshot.state, core::SnapshotState::kCreating);
  EXPECT_EQ(snapshot.node_id, node.node_id);
  EXPECT_EQ(snapshot.volume_size_gb, 10);
  EXPECT_TRUE(snapshot.name.starts_with("data-")) << snapshot.name;
  EXPECT_EQ(plane_->CreateSnapshot(alice, {"data", snapshot.name}).status().code(),
            StatusCode::kAlreadyExists);
  // The pod that writes the volume waits for the snapshot before it starts again.
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kStart).ok());
  Durable(plane_->Tick());
  EXPECT_EQ(Get(alice, pod.id).node_id, "");

  // Handed out once; a 5xx (the agent away, the answer late) or a 202 (the agent at work on it)
  // hands it out again a moment later.
  const wire::RelayRequest work = TakeOne(node, wire::RelayRequest::Kind::kSnapshotVolume);
  EXPECT_EQ(work.snapshot, snapshot.id);
  EXPECT_EQ(work.volume, "suanli-" + data.volume.id);
  EXPECT_TRUE(plane_->TakeStorageWork(node.node_id).empty());
  for (const int status : {504, 202}) {
    plane_->NoteStorageWork(work, Answer(status));
    EXPECT_TRUE(plane_->TakeStorageWork(node.node_id).empty()) << status;
    clock_.Advance(std::chrono::seconds(2));
    EXPECT_EQ(TakeOne(node, wire::RelayRequest::Kind::kSnapshotVolume).snapshot, snapshot.id);
  }
  // Not charged while it is being made.
  clock_.Advance(std::chrono::hours(1));
  Beat(node);
  Durable(plane_->Tick());
  EXPECT_EQ(Snapshot(alice, snapshot.id).cost, Money());

  const std::string sha(64, 'c');
  const core::TimePoint ready_at = plane_->Now();
  Durable(plane_->NoteStorageWork(work, Answer(200, 1'500'000'001, sha)));
  const core::Snapshot ready = Snapshot(alice, snapshot.name);
  EXPECT_EQ(ready.state, core::SnapshotState::kReady);
  EXPECT_EQ(ready.size_bytes, 1'500'000'001);
  EXPECT_EQ(ready.sha256, sha);
  EXPECT_EQ(EventsOf(snapshot.id, "volume.snapshot_ready").size(), 1u);
  Durable(plane_->Tick());
  EXPECT_EQ(Get(alice, pod.id).node_id, node.node_id);
  Report(node, pod.id, PodState::kRunning);
  // An hour of its 2 GB (1.5 GB rounded up), charged by the tick and shown the same before.
  clock_.Advance(std::chrono::hours(1));
  const Money hour = billing::StorageChargeBetween(plane_->storage_price(), 2, snapshot.created_at,
                                                   ready_at, ready_at + std::chrono::hours(1));
  EXPECT_NEAR(static_cast<double>(hour.micros()),
              static_cast<double>(billing::StoragePerHour(plane_->storage_price(), 2).micros()), 1);
  EXPECT_EQ(Snapshot(alice, snapshot.id).cost, hour);
  Durable(plane_->Tick());
  EXPECT_EQ(Snapshot(alice, snapshot.id).cost, hour);

  // Restored into a new volume of at least its volume's size, on the node that keeps it.
  VolumeSpec small{"copy", 5, snapshot.name};
  EXPECT_EQ(plane_->CreateVolume(alice, small).status().code(), StatusCode::kInvalidArgument);
  auto copy = plane_->CreateVolume(alice, {"copy", 0, snapshot.id});
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  Durable(copy->sequence);
  EXPECT_EQ(copy->value.volume.size_gb, 10);
  EXPECT_EQ(copy->value.volume.state, core::VolumeState::kRestoring);
  EXPECT_EQ(copy->value.volume.home_node_id, node.node_id);
  auto attach = TryPod(alice, 0, {{"copy", "/data", false}});
  EXPECT_EQ(attach.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(attach.status().message().find("being restored"), std::string::npos);
  EXPECT_EQ(plane_->DeleteSnapshot(alice, snapshot.id).status().code(),
            StatusCode::kFailedPrecondition);
  const wire::RelayRequest restore = TakeOne(node, wire::RelayRequest::Kind::kRestoreSnapshot);
  EXPECT_EQ(restore.volume, "suanli-" + copy->value.volume.id);
  EXPECT_EQ(restore.snapshot, snapshot.id);
  EXPECT_EQ(restore.sha256, sha);
  Durable(plane_->NoteStorageWork(restore, Answer(204)));
  EXPECT_EQ(plane_->GetVolume(alice, "copy")->value.volume.state, core::VolumeState::kAvailable);
  EXPECT_EQ(EventsOf(copy->value.volume.id, "volume.restored").size(), 1u);
  EXPECT_TRUE(TryPod(alice, 0, {{"copy", "/data", false}}).ok());

  Reopen();
  EXPECT_EQ(Snapshot(alice, snapshot.id).sha256, sha);
  EXPECT_EQ(plane_->GetVolume(alice, "copy")->value.volume.restored_from, snapshot.id);
  auto deleted = plane_->DeleteSnapshot(alice, snapshot.name);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  Durable(deleted->sequence);
  EXPECT_EQ(TakeOne(node, wire::RelayRequest::Kind::kRemoveSnapshot).snapshot, snapshot.id);
  EXPECT_TRUE(plane_->ListSnapshots(alice)->value.empty());
  // Charged from when it was made to its deletion (an hour later), each second once.
  Money charged;
  const auto ledger = plane_->Ledger(alice, alice.user_id);
  ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
  for (const core::LedgerEntry& entry : *ledger) {
    if (entry.pod_id == snapshot.id) charged = charged - entry.amount;
  }
  EXPECT_EQ(charged, hour);
}

TEST_P(SnapshotsTest, ASnapshotTheNodeCannotMakeFailsWithItsReasonAndCannotBeRestored) {
  const Principal alice = NewUser("alice", "100");
  const Principal node = NewNode("a", 1);
  NewVolume(alice, "data", 10);
  const core::Pod pod = NewPod(alice, 0, {{"data", "/data", true}});
  Report(node, pod.id, PodState::kRunning);  // read-only users do not stop a snapshot
  auto made = plane_->CreateSnapshot(alice, {"data", "before"});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(plane_->CreateVolume(alice, {"copy", 0, "before"}).status().code(),
            StatusCode::kFailedPrecondition);  // not made yet
  Durable(plane_->NoteStorageWork(TakeOne(node, wire::RelayRequest::Kind::kSnapshotVolume),
                                  Answer(404)));
  const core::Snapshot failed = Snapshot(alice, "before");
  EXPECT_EQ(failed.state, core::SnapshotState::kFailed);
  EXPECT_NE(failed.state_reason.find("no such volume"), std::string::npos) << failed.state_reason;
  EXPECT_TRUE(plane_->TakeStorageWork(node.node_id).empty());
  auto restore = plane_->CreateVolume(alice, {"copy", 0, "before"});
  EXPECT_EQ(restore.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(restore.status().message().find("failed"), std::string::npos);
  const Principal bob = NewUser("bob", "100");
  EXPECT_EQ(plane_->GetSnapshot(bob, "before").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(plane_->DeleteSnapshot(bob, failed.id).status().code(), StatusCode::kNotFound);
}

TEST_P(SnapshotsTest, ASnapshotWhoseNodeIsRemovedFailsAndIsNoLongerBilled) {
  const Principal alice = NewUser("alice", "100");
  const Principal node = NewNode("a", 1);
  NewVolume(alice, "data", 10);
  const core::Pod pod = NewPod(alice, 0, {{"data", "/data", false}});
  RunAndStop(alice, pod, node);
  auto made = plane_->CreateSnapshot(alice, {"data", "kept"});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Durable(plane_->NoteStorageWork(TakeOne(node, wire::RelayRequest::Kind::kSnapshotVolume),
                                  Answer(200, 5'000'000'000, std::string(64, 'd'))));
  clock_.Advance(std::chrono::minutes(10));
  auto removed = plane_->DeleteNode(admin_, node.node_id);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  Durable(removed->sequence);
  const core::Snapshot lost = Snapshot(alice, "kept");
  EXPECT_EQ(lost.state, core::SnapshotState::kFailed);
  EXPECT_NE(lost.state_reason.find("was removed"), std::string::npos) << lost.state_reason;
  const Money ten_minutes =
      billing::StorageChargeBetween(plane_->storage_price(), 5, lost.created_at, lost.created_at,
                                    lost.created_at + std::chrono::minutes(10));
  EXPECT_EQ(lost.cost, ten_minutes);
  clock_.Advance(std::chrono::hours(5));
  Durable(plane_->Tick());
  EXPECT_EQ(Snapshot(alice, "kept").cost, ten_minutes);
}

}  // namespace
}  // namespace suanli::server
