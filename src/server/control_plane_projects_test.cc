// Projects (control_plane_projects.cc) on both stores: they and their pods' ownership survive a
// restart; the API's tests (api_auth_test.cc) walk the roles across the routes.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "server/control_plane.h"
#include "server/control_plane_testing.h"

namespace suanli::server {
namespace {

using core::StatusCode;

class ProjectsTest : public ControlPlaneOnStoreTest {
 protected:
  // A pod of `user` (in `project`, "" for their own), placed on the idle node and running there.
  std::string RunningPod(const Principal& user, const Principal& node, std::string project) {
    PodSpec spec;
    spec.image = "busybox";
    spec.gpu_type = "RTX 4090";
    spec.project = std::move(project);
    auto pod = plane_->CreatePod(user, spec);
    EXPECT_TRUE(pod.ok()) << pod.status().ToString();
    if (!pod.ok()) return "";
    EXPECT_EQ(pod->value.node_id, node.node_id);
    EXPECT_TRUE(Report(node, pod->value.id, 1, core::PodState::kRunning, clock_.Now()).ok());
    return pod->value.id;
  }

  std::string AddKey(const Principal& user, std::string_view public_key) {
    auto key = plane_->AddSshKey(user, "laptop", std::string(public_key));
    EXPECT_TRUE(key.ok()) << key.status().ToString();
    if (!key.ok()) return "";
    Durable(key->sequence);
    return key->value.id;
  }
};
// What a restart must find again runs on both stores; the rest, on SQLite only.
class ProjectsTestRestart : public ProjectsTest {};
SUANLI_INSTANTIATE_ON_BOTH_STORES(ProjectsTestRestart);
SUANLI_INSTANTIATE_ON_SQLITE(ProjectsTest);

TEST_P(ProjectsTestRestart, AProjectItsMembersAndItsPodsOwnershipSurviveARestart) {
  const Principal owner = NewUser("owner", "100");
  const Principal member = NewUser("member", "100");
  const Principal viewer = NewUser("viewer", "100");
  auto project = plane_->CreateProject(owner, "team");
  ASSERT_TRUE(project.ok()) << project.status().ToString();
  ASSERT_TRUE(plane_->SetProjectMember(owner, "team", "member", core::ProjectRole::kMember).ok());
  auto set = plane_->SetProjectMember(owner, "team", viewer.user_id, core::ProjectRole::kViewer);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  PodSpec spec;
  spec.image = "busybox";
  spec.gpu_type = "RTX 4090";
  spec.project = "team";
  spec.queue = true;  // no node here: it waits
  auto pod = plane_->CreatePod(member, spec);
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  Durable(pod->sequence);
  spec.project.clear();
  auto own = plane_->CreatePod(owner, spec);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  Durable(own->sequence);

  Reopen();
  auto shown = plane_->GetProject(viewer, project->value.id);
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  EXPECT_EQ(shown->value.name, "team");
  EXPECT_EQ(shown->value.owner_id, owner.user_id);
  EXPECT_EQ(shown->value.members.at(member.user_id), core::ProjectRole::kMember);
  EXPECT_EQ(shown->value.members.at(viewer.user_id), core::ProjectRole::kViewer);
  auto seen = plane_->GetPod(viewer, pod->value.id);
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  EXPECT_EQ(seen->value.project_id, project->value.id);
  EXPECT_EQ(seen->value.owner_id, owner.user_id);
  EXPECT_EQ(seen->value.created_by, member.user_id);
  // Paged lists: the viewer sees the project's pod, not the owner's own.
  std::vector<std::string> listed;
  ASSERT_TRUE(plane_
                  ->VisitPods(viewer, PodPage{.after = "", .limit = 10, .project = ""},
                              [&](const PodListEntry& entry) { listed.push_back(entry.pod.id); })
                  .ok());
  EXPECT_EQ(listed, std::vector<std::string>{pod->value.id});
  EXPECT_EQ(plane_->Act(viewer, pod->value.id, core::PodAction::kStop).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(plane_->Act(member, pod->value.id, core::PodAction::kStop).ok());
  EXPECT_EQ(plane_->GetPod(member, own->value.id).status().code(), StatusCode::kNotFound);
}

TEST_P(ProjectsTestRestart, AProjectsVolumeStaysItsAcrossARestart) {
  const Principal owner = NewUser("owner", "100");
  const Principal member = NewUser("member", "100");
  const Principal stranger = NewUser("stranger", "100");
  ASSERT_TRUE(plane_->CreateProject(owner, "team").ok());
  ASSERT_TRUE(plane_->SetProjectMember(owner, "team", "member", core::ProjectRole::kMember).ok());
  VolumeSpec spec;
  spec.name = "data";
  spec.size_gb = 1;
  spec.project = "team";
  auto volume = plane_->CreateVolume(member, spec);
  ASSERT_TRUE(volume.ok()) << volume.status().ToString();
  Durable(volume->sequence);

  Reopen();
  auto shown = plane_->GetVolume(member, "data");
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  EXPECT_EQ(shown->value.volume.id, volume->value.volume.id);
  EXPECT_EQ(shown->value.volume.owner_id, owner.user_id);
  EXPECT_FALSE(shown->value.volume.project_id.empty());
  EXPECT_EQ(plane_->GetVolume(stranger, volume->value.volume.id).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(plane_->DeleteProject(owner, "team").status().code(), StatusCode::kFailedPrecondition);
}

constexpr std::string_view kOwnerKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILMtOg015QXhz87u9yAjfzVXtanjHTcq9atSzFWQ9KNR o@host";
constexpr std::string_view kMemberKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAP00WqSIQMqf+dwLI0iaIhMubJTACZpCbvYUU5DauCM m@host";

// A removed member kept root SSH on the project's running pods: keys were written into a pod only
// when its container started, and nothing told its agent the keys changed. Now every change to a
// holder's keys (membership, a key added or deleted) wakes the nodes running its pods, whose
// desired keys are the new ones.
TEST_P(ProjectsTest, KeyChangesWakeTheNodesOfRunningPodsWithTheNewKeys) {
  const Principal owner = NewUser("owner", "100");
  const Principal member = NewUser("member", "100");
  const Principal node = NewNode("n1", 2);
  auto project = plane_->CreateProject(owner, "team");
  ASSERT_TRUE(project.ok()) << project.status().ToString();
  const std::string team = project->value.id;
  ASSERT_TRUE(plane_->SetProjectMember(owner, "team", "member", core::ProjectRole::kMember).ok());
  AddKey(owner, kOwnerKey);
  const std::string member_key = AddKey(member, kMemberKey);
  ASSERT_FALSE(RunningPod(member, node, "team").empty());
  ASSERT_FALSE(RunningPod(member, node, "").empty());  // the member's own pod

  using Keys = std::vector<std::string>;
  auto keys_of = [&](const std::string& holder) {
    DesiredPods desired = plane_->DesiredFor(node).value();
    Keys keys = desired.ssh_keys[holder];
    std::ranges::sort(keys);
    return keys;
  };
  const Keys both = [] {
    Keys keys = {std::string(kMemberKey), std::string(kOwnerKey)};
    std::ranges::sort(keys);
    return keys;
  }();
  ASSERT_EQ(keys_of(team), both);
  ASSERT_EQ(keys_of(member.user_id), Keys{std::string(kMemberKey)});

  // Each change bumps the node's generation, and an agent's long poll waiting past the last one
  // is woken by it.
  int64_t generation = plane_->DesiredFor(node)->generation;
  auto expect_woken = [&](const std::string& what, const std::function<uint64_t()>& change) {
    bool woken = false;
    plane_->WhenNodeChanges(node, generation, clock_.Now() + std::chrono::seconds(30),
                            [&woken] { woken = true; });
    ASSERT_FALSE(woken);
    Durable(change());
    EXPECT_TRUE(woken) << what << " did not wake the node's long poll";
    const int64_t now = plane_->DesiredFor(node)->generation;
    EXPECT_GT(now, generation) << what;
    generation = now;
  };

  expect_woken("removing the member", [&] {
    auto removed = plane_->RemoveProjectMember(owner, "team", "member");
    EXPECT_TRUE(removed.ok()) << removed.status().ToString();
    return removed.ok() ? removed->sequence : 0;
  });
  EXPECT_EQ(keys_of(team), Keys{std::string(kOwnerKey)});

  expect_woken("adding the member again", [&] {
    auto set = plane_->SetProjectMember(owner, "team", "member", core::ProjectRole::kMember);
    EXPECT_TRUE(set.ok()) << set.status().ToString();
    return set.ok() ? set->sequence : 0;
  });
  EXPECT_EQ(keys_of(team), both);

  expect_woken("making the member a viewer", [&] {
    auto set = plane_->SetProjectMember(owner, "team", "member", core::ProjectRole::kViewer);
    EXPECT_TRUE(set.ok()) << set.status().ToString();
    return set.ok() ? set->sequence : 0;
  });
  EXPECT_EQ(keys_of(team), Keys{std::string(kOwnerKey)});
  ASSERT_TRUE(plane_->SetProjectMember(owner, "team", "member", core::ProjectRole::kMember).ok());
  generation = plane_->DesiredFor(node)->generation;

  // A person's own key: gone from their own pods and their projects' when deleted, back when added.
  expect_woken("deleting the member's key", [&] {
    auto deleted = plane_->DeleteSshKey(member, member_key);
    EXPECT_TRUE(deleted.ok()) << deleted.status().ToString();
    return deleted.ok() ? deleted->sequence : 0;
  });
  EXPECT_EQ(keys_of(member.user_id), Keys{});
  EXPECT_EQ(keys_of(team), Keys{std::string(kOwnerKey)});

  expect_woken("adding the member's key", [&] {
    auto added = plane_->AddSshKey(member, "desktop", std::string(kMemberKey));
    EXPECT_TRUE(added.ok()) << added.status().ToString();
    return added.ok() ? added->sequence : 0;
  });
  EXPECT_EQ(keys_of(member.user_id), Keys{std::string(kMemberKey)});
  EXPECT_EQ(keys_of(team), both);
}

}  // namespace
}  // namespace suanli::server
