// Projects (control_plane_projects.cc) on both stores: they and their pods' ownership survive a
// restart; the API's tests (api_auth_test.cc) walk the roles across the routes.
#include <gtest/gtest.h>

#include <string>

#include "server/control_plane.h"
#include "server/control_plane_testing.h"

namespace suanli::server {
namespace {

using core::StatusCode;

class ProjectsTest : public ControlPlaneOnStoreTest {
 protected:
  Principal NewUser(std::string name) {
    auto user = plane_->CreateUser(admin_, std::move(name), core::Role::kUser,
                                   *core::Money::ParseDollars("100"));
    EXPECT_TRUE(user.ok()) << user.status().ToString();
    Durable(user->sequence);
    return Principal{user->value.id, core::Role::kUser, "", ""};
  }
};
// Each of its tests restarts the server: on both stores.
class ProjectsTestRestart : public ProjectsTest {};
SUANLI_INSTANTIATE_ON_BOTH_STORES(ProjectsTestRestart);

TEST_P(ProjectsTestRestart, AProjectItsMembersAndItsPodsOwnershipSurviveARestart) {
  const Principal owner = NewUser("owner");
  const Principal member = NewUser("member");
  const Principal viewer = NewUser("viewer");
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
                  ->VisitPods(viewer, PodPage{.after = "", .limit = 10},
                              [&](const PodListEntry& entry) { listed.push_back(entry.pod.id); })
                  .ok());
  EXPECT_EQ(listed, std::vector<std::string>{pod->value.id});
  EXPECT_EQ(plane_->Act(viewer, pod->value.id, core::PodAction::kStop).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(plane_->Act(member, pod->value.id, core::PodAction::kStop).ok());
  EXPECT_EQ(plane_->GetPod(member, own->value.id).status().code(), StatusCode::kNotFound);
}

TEST_P(ProjectsTestRestart, AProjectsVolumeStaysItsAcrossARestart) {
  const Principal owner = NewUser("owner");
  const Principal member = NewUser("member");
  const Principal stranger = NewUser("stranger");
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

}  // namespace
}  // namespace suanli::server
