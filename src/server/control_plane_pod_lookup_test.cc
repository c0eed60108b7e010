// How a caller names pods (issue 34, item 14): by id or by name, as volumes and templates are,
// and a list of one project's pods.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/control_plane_testing.h"

namespace suanli::server {
namespace {

using core::StatusCode;

class PodLookupTest : public ControlPlaneOnStoreTest {
 protected:
  std::string Pod(const Principal& user, std::string name, std::string project = "") {
    PodSpec spec;
    spec.name = std::move(name);
    spec.image = "busybox";
    spec.gpu_type = "RTX 4090";
    spec.project = std::move(project);
    spec.queue = true;  // no node: they wait
    auto pod = plane_->CreatePod(user, spec);
    EXPECT_TRUE(pod.ok()) << pod.status().ToString();
    if (!pod.ok()) return "";
    Durable(pod->sequence);
    return pod->value.id;
  }

  std::vector<std::string> Listed(const Principal& caller, std::string project) {
    std::vector<std::string> ids;
    const core::Result<PodPageEnd> end =
        plane_->VisitPods(caller, PodPage{.after = "", .limit = 100, .project = std::move(project)},
                          [&](const PodListEntry& entry) { ids.push_back(entry.pod.id); });
    EXPECT_TRUE(end.ok()) << end.status().ToString();
    return ids;
  }
};

SUANLI_INSTANTIATE_ON_SQLITE(PodLookupTest);

TEST_P(PodLookupTest, APodIsFoundByItsNameForEveryActionAndATakenNameIsRefused) {
  const Principal alice = NewUser("alice", "100");
  const Principal bob = NewUser("bob", "100");
  const std::string trainer = Pod(alice, "trainer");
  Pod(bob, "trainer");  // the same name, another's: never alice's

  auto got = plane_->GetPod(alice, "trainer");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->value.id, trainer);
  auto stopped = plane_->Act(alice, "trainer", core::PodAction::kStop);
  ASSERT_TRUE(stopped.ok()) << stopped.status().ToString();
  EXPECT_EQ(stopped->value.id, trainer);
  auto history = plane_->Transitions(alice, "trainer");
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  EXPECT_FALSE(history->empty()) << "the history is the named pod's";

  Pod(alice, "trainer");
  auto ambiguous = plane_->GetPod(alice, "trainer");
  ASSERT_EQ(ambiguous.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ambiguous.status().message().find(trainer), std::string::npos)
      << "it lists the pods of that name: " << ambiguous.status().message();
  EXPECT_TRUE(plane_->GetPod(alice, trainer).ok()) << "an id is always one pod";
  EXPECT_EQ(plane_->GetPod(alice, "nobody").status().code(), StatusCode::kNotFound);
}

TEST_P(PodLookupTest, AProjectsPodsAreListedAloneForWhoeverSeesTheProject) {
  const Principal owner = NewUser("owner", "100");
  const Principal member = NewUser("member", "100");
  const Principal stranger = NewUser("stranger", "100");
  ASSERT_TRUE(plane_->CreateProject(owner, "team").ok());
  ASSERT_TRUE(plane_->SetProjectMember(owner, "team", "member", core::ProjectRole::kMember).ok());
  const std::string shared = Pod(member, "shared", "team");
  Pod(member, "mine");
  EXPECT_EQ(Listed(member, "team"), std::vector<std::string>{shared});
  EXPECT_EQ(Listed(member, "").size(), 2u) << "without a project, every pod the caller sees";
  EXPECT_EQ(Listed(admin_, "team"), std::vector<std::string>{shared});
  const core::Result<PodPageEnd> refused = plane_->VisitPods(
      stranger, PodPage{.after = "", .limit = 100, .project = "team"}, [](const PodListEntry&) {});
  EXPECT_EQ(refused.status().code(), StatusCode::kNotFound);
  // A project's pod is found by its name by a member, and by the owner who pays for it.
  EXPECT_EQ(plane_->GetPod(owner, "shared")->value.id, shared);
}

}  // namespace
}  // namespace suanli::server
