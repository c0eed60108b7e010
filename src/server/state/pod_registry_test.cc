#include "server/state/pod_registry.h"

#include <gtest/gtest.h>

#include <string>

namespace suanli::server {
namespace {

using core::DesiredState;
using core::PodState;
using Ids = PodRegistry::Ids;

core::Pod NewPod(std::string id, std::string owner, std::string project = "") {
  core::Pod pod;
  pod.id = std::move(id);
  pod.owner_id = std::move(owner);
  pod.project_id = std::move(project);
  pod.state = PodState::kPending;
  pod.desired = DesiredState::kRunning;
  return pod;
}

TEST(PodRegistryTest, ANewPodIsQueuedAndCountedForItsOwnerAndProject) {
  PodRegistry pods;
  pods.Add(NewPod("pod_a", "alice", "prj_vision"));
  pods.Add(NewPod("pod_b", "alice"));
  EXPECT_EQ(pods.OfOwner("alice"), (Ids{"pod_a", "pod_b"}));
  EXPECT_EQ(pods.InProject("prj_vision"), Ids{"pod_a"});
  EXPECT_TRUE(pods.InProject("").empty()) << "a pod of no project is in no project's index";
  EXPECT_EQ(pods.Pending(), (Ids{"pod_a", "pod_b"}));
  EXPECT_EQ(pods.NewlyPending(), (Ids{"pod_a", "pod_b"}));
  EXPECT_EQ(pods.CountsOf("alice").live, 2);
  EXPECT_EQ(pods.CountsOf("alice").pending, 2);
  EXPECT_EQ(pods.CountsOf("bob").live, 0);
  EXPECT_TRUE(pods.CheckIndexes().ok());
}

// A pod's life, each write followed by Reindex, as Change::Dirty makes it: every index follows.
TEST(PodRegistryTest, EachIndexFollowsAPodThroughBindRunStopAndTerminate) {
  PodRegistry pods;
  pods.Add(NewPod("pod_a", "alice"));
  pods.ClearNewlyPending();

  core::Pod& pod = pods.at("pod_a");
  pod.node_id = "node_1";
  pods.Reindex("pod_a");
  EXPECT_EQ(pods.OnNode("node_1"), Ids{"pod_a"});
  EXPECT_TRUE(pods.Pending().empty()) << "a bound pod waits for no GPU";
  EXPECT_EQ(pods.CountsOf("alice").pending, 1) << "still pending until its container runs";

  pod.state = PodState::kRunning;
  pods.Reindex("pod_a");
  EXPECT_EQ(pods.CountsOf("alice").pending, 0);
  EXPECT_EQ(pods.CountsOf("alice").live, 1);

  // Asked to terminate, unbound, its volume left on node_1: leaving that node.
  pod.desired = DesiredState::kTerminated;
  pod.volume_gb = 10;
  pod.last_node_id = "node_1";
  pod.node_id.clear();
  pod.state = PodState::kStopped;
  pods.Reindex("pod_a");
  EXPECT_TRUE(pods.OnNode("node_1").empty());
  EXPECT_TRUE(pods.ByNode().empty()) << "an emptied node's entry goes";
  EXPECT_EQ(pods.LeavingNode("node_1"), Ids{"pod_a"});
  EXPECT_TRUE(pods.Pending().empty());

  pod.state = PodState::kTerminated;
  pods.Reindex("pod_a");
  EXPECT_TRUE(pods.LeavingNode("node_1").empty());
  EXPECT_EQ(pods.CountsOf("alice").live, 0);
  EXPECT_EQ(pods.OfOwner("alice"), Ids{"pod_a"}) << "a terminated pod is still its owner's";
  EXPECT_TRUE(pods.CheckIndexes().ok()) << pods.CheckIndexes().ToString();
}

TEST(PodRegistryTest, APodBackInTheQueueIsNewlyPendingAgain) {
  PodRegistry pods;
  pods.Add(NewPod("pod_a", "alice"));
  core::Pod& pod = pods.at("pod_a");
  pod.node_id = "node_1";
  pods.Reindex("pod_a");
  pods.ClearNewlyPending();
  EXPECT_TRUE(pods.NewlyPending().empty());

  pod.node_id.clear();  // its node went away
  pods.Reindex("pod_a");
  EXPECT_EQ(pods.Pending(), Ids{"pod_a"});
  EXPECT_EQ(pods.NewlyPending(), Ids{"pod_a"});
}

TEST(PodRegistryTest, ReindexingAnUnchangedPodChangesNothingButAStoreBumpsItsRevision) {
  PodRegistry pods;
  pods.Add(NewPod("pod_a", "alice"));
  pods.Add(NewPod("pod_b", "alice"));
  EXPECT_EQ(pods.Revision("pod_a"), 0u);
  pods.Reindex("pod_a");
  pods.Reindex("pod_a");
  EXPECT_EQ(pods.CountsOf("alice").live, 2) << "a repeated reindex counts a pod once";
  pods.NoteStored("pod_a");
  pods.NoteStored("pod_b");
  pods.NoteStored("pod_a");
  EXPECT_EQ(pods.Revision("pod_b"), 2u);
  EXPECT_EQ(pods.Revision("pod_a"), 3u) << "the latest store of a pod is its revision";
  pods.Reindex("pod_unknown");  // a pod never added: nothing to index
  EXPECT_TRUE(pods.OfOwner("").empty());
}

// The check the control plane's tests rely on: a write that skipped Reindex is found.
TEST(PodRegistryTest, CheckIndexesFindsAWriteThatWasNotReindexed) {
  PodRegistry pods;
  pods.Add(NewPod("pod_a", "alice"));
  pods.at("pod_a").node_id = "node_1";
  const core::Status stale = pods.CheckIndexes();
  EXPECT_FALSE(stale.ok());
  EXPECT_NE(stale.message().find("by node"), std::string::npos) << stale.ToString();
  pods.Reindex("pod_a");
  EXPECT_TRUE(pods.CheckIndexes().ok());

  pods.at("pod_a").state = PodState::kTerminated;
  pods.at("pod_a").node_id.clear();
  pods.Reindex("pod_a");
  pods.at("pod_a").state = PodState::kRunning;  // not reindexed: counted as not live
  EXPECT_FALSE(pods.CheckIndexes().ok());
}

TEST(PodRegistryTest, IteratesInIdOrderFromAPagesCursor) {
  PodRegistry pods;
  for (const char* id : {"pod_c", "pod_a", "pod_b"}) pods.Add(NewPod(id, "alice"));
  std::string order;
  for (auto it = pods.upper_bound("pod_a"); it != pods.end(); ++it) order += it->first + " ";
  EXPECT_EQ(order, "pod_b pod_c ");
  EXPECT_EQ(pods.size(), 3u);
  EXPECT_TRUE(pods.contains("pod_c"));
  EXPECT_FALSE(pods.contains("pod_d"));
}

}  // namespace
}  // namespace suanli::server
