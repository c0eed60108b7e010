#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <map>

namespace suanli::sched {
namespace {

Node MakeNode(std::string id, std::string type, int gpus, int vcpu = 64,
              int64_t ram_mb = 512 * 1024) {
  Node node;
  node.id = std::move(id);
  node.gpu_type = std::move(type);
  node.gpu_count = gpus;
  node.free_gpus = gpus == 64 ? ~uint64_t{0} : (uint64_t{1} << gpus) - 1;
  node.free = {vcpu, ram_mb, 2000};
  return node;
}

PodRequest MakePod(std::string id, std::string type, int gpus, uint64_t sequence = 0) {
  PodRequest pod;
  pod.id = std::move(id);
  pod.gpu_type = std::move(type);
  pod.gpu_count = gpus;
  pod.needs = {8, 32 * 1024, 50};
  pod.sequence = sequence;
  return pod;
}

std::map<std::string, std::string> NodeOf(const Plan& plan) {
  std::map<std::string, std::string> where;
  for (const Binding& binding : plan.bindings) where[binding.pod_id] = binding.node_id;
  return where;
}

TEST(SchedulerTest, PacksGpusToKeepWholeNodesFreeForMultiGpuPods) {
  std::vector<Node> nodes = {MakeNode("big", "RTX 4090", 8), MakeNode("half", "RTX 4090", 8)};
  nodes[1].free_gpus = 0b00001111;  // 4 of 8 free
  Plan plan =
      Schedule(nodes, {MakePod("one", "RTX 4090", 1, 1), MakePod("eight", "RTX 4090", 8, 2)});
  ASSERT_TRUE(plan.unplaced.empty()) << plan.unplaced[0].reason;
  EXPECT_EQ(NodeOf(plan)["one"], "half");  // not the empty node
  EXPECT_EQ(NodeOf(plan)["eight"], "big");
  EXPECT_EQ(plan.bindings[0].gpu_indices, (std::vector<int>{0}));
  EXPECT_EQ(plan.bindings[1].gpu_indices.size(), 8u);
  EXPECT_EQ(nodes[0].free_gpus, 0u);
  EXPECT_EQ(nodes[1].free_gpus, 0b00001110u);
  EXPECT_EQ(nodes[1].free.vcpu, 64 - 8);
}

TEST(SchedulerTest, MatchesTheGpuTypeAndSkipsUnschedulableNodes) {
  std::vector<Node> nodes = {MakeNode("a100", "A100 80GB SXM", 8),
                             MakeNode("cordoned", "RTX 4090", 8), MakeNode("ok", "RTX 4090", 2)};
  nodes[1].schedulable = false;
  Plan plan = Schedule(nodes, {MakePod("p", "RTX 4090", 2)});
  ASSERT_EQ(plan.bindings.size(), 1u);
  EXPECT_EQ(plan.bindings[0].node_id, "ok");
}

TEST(SchedulerTest, HigherPriorityFirstThenFirstComeFirstServed) {
  std::vector<Node> nodes = {MakeNode("n", "L4", 2)};
  PodRequest late_urgent = MakePod("late-urgent", "L4", 1, 9);
  late_urgent.priority = 10;
  Plan plan =
      Schedule(nodes, {MakePod("third", "L4", 1, 3), MakePod("first", "L4", 1, 1), late_urgent});
  EXPECT_EQ(NodeOf(plan).count("late-urgent"), 1u);
  EXPECT_EQ(NodeOf(plan).count("first"), 1u);
  ASSERT_EQ(plan.unplaced.size(), 1u);
  EXPECT_EQ(plan.unplaced[0].pod_id, "third");
}

TEST(SchedulerTest, SaysWhyAPodWaits) {
  std::vector<Node> nodes = {MakeNode("a", "RTX 4090", 4), MakeNode("b", "RTX 4090", 4),
                             MakeNode("c", "RTX 4090", 4)};
  for (Node& node : nodes) node.free_gpus = 0b1;  // one free GPU each
  Plan plan = Schedule(nodes, {MakePod("two", "RTX 4090", 2), MakePod("h100", "H100 SXM", 1),
                               MakePod("zero", "RTX 4090", 0)});
  ASSERT_EQ(plan.unplaced.size(), 3u);
  EXPECT_EQ(plan.unplaced[0].reason, "no node has 2 free RTX 4090; 3 nodes have 1");
  EXPECT_EQ(plan.unplaced[1].reason, "no ready node has H100 SXM GPUs");
  EXPECT_EQ(plan.unplaced[2].reason, "a pod asks for 1 to 64 GPUs, not 0");

  std::vector<Node> small = {MakeNode("small", "RTX 4090", 8, /*vcpu=*/4)};
  Plan cpu = Schedule(small, {MakePod("needs-8-vcpu", "RTX 4090", 1)});
  ASSERT_EQ(cpu.unplaced.size(), 1u);
  EXPECT_EQ(cpu.unplaced[0].reason,
            "no node with 1 free RTX 4090 also has 8 vCPU, 32 GB RAM and 50 GB disk free");
}

TEST(SchedulerTest, NeverGivesOneGpuToTwoPods) {
  std::vector<Node> nodes;
  for (int i = 0; i < 10; ++i) nodes.push_back(MakeNode("n" + std::to_string(i), "A10", 4));
  std::vector<PodRequest> pods;
  for (int i = 0; i < 50; ++i)
    pods.push_back(MakePod("p" + std::to_string(i), "A10", 1 + i % 3, i));
  const Plan plan = Schedule(nodes, pods);
  std::map<std::pair<std::string, int>, std::string> owner;
  int gpus = 0;
  for (const Binding& binding : plan.bindings) {
    for (int index : binding.gpu_indices) {
      EXPECT_TRUE(owner.emplace(std::pair(binding.node_id, index), binding.pod_id).second)
          << binding.node_id << " GPU " << index << " given twice";
      ++gpus;
    }
  }
  EXPECT_EQ(gpus, 40);  // every GPU of the cluster is used: 50 pods ask for more than there is
  EXPECT_EQ(plan.bindings.size() + plan.unplaced.size(), pods.size());
}

TEST(SchedulerTest, HonoursNodeSelectors) {
  std::vector<Node> nodes = {MakeNode("plain", "RTX 4090", 8), MakeNode("nvme", "RTX 4090", 8)};
  nodes[1].labels = {{"disk", "nvme"}, {"region", "sh"}};
  PodRequest pod = MakePod("wants-nvme", "RTX 4090", 1);
  pod.node_selector = {{"disk", "nvme"}};
  PodRequest nowhere = MakePod("wants-gz", "RTX 4090", 1, 1);
  nowhere.node_selector = {{"region", "gz"}};
  const Plan plan = Schedule(nodes, {pod, nowhere});
  EXPECT_EQ(NodeOf(plan)["wants-nvme"], "nvme");
  ASSERT_EQ(plan.unplaced.size(), 1u);
  EXPECT_EQ(plan.unplaced[0].pod_id, "wants-gz");
}

RunningPod Running(std::string id, std::string node, int gpus, bool interruptible,
                   uint64_t sequence) {
  RunningPod pod;
  pod.id = std::move(id);
  pod.node_id = std::move(node);
  pod.gpu_count = gpus;
  pod.uses = {8, 32 * 1024, 50};
  pod.interruptible = interruptible;
  pod.sequence = sequence;
  return pod;
}

TEST(SchedulerTest, AnOnDemandPodPreemptsTheNewestInterruptiblePodsItNeeds) {
  std::vector<Node> nodes = {MakeNode("n", "H100 SXM", 2)};
  nodes[0].free_gpus = 0;  // both GPUs in use
  const std::vector<RunningPod> running = {Running("old-spot", "n", 1, true, 1),
                                           Running("new-spot", "n", 1, true, 2)};
  const Plan plan = Schedule(nodes, {MakePod("on-demand", "H100 SXM", 1)}, running);
  EXPECT_TRUE(plan.bindings.empty());  // the GPU is still in use until the spot pod stops
  EXPECT_EQ(plan.preempt, (std::vector<std::string>{"new-spot"}));
  ASSERT_EQ(plan.unplaced.size(), 1u);
  EXPECT_EQ(plan.unplaced[0].reason, "waiting for 1 interruptible pod to stop on n");
}

TEST(SchedulerTest, NeverPreemptsOnDemandPodsOrForInterruptibleOnes) {
  std::vector<Node> nodes = {MakeNode("n", "H100 SXM", 1)};
  nodes[0].free_gpus = 0;
  const Plan on_demand_victim =
      Schedule(nodes, {MakePod("on-demand", "H100 SXM", 1)}, {Running("steady", "n", 1, false, 1)});
  EXPECT_TRUE(on_demand_victim.preempt.empty());
  PodRequest spot = MakePod("spot", "H100 SXM", 1);
  spot.interruptible = true;
  const Plan spot_preempts = Schedule(nodes, {spot}, {Running("other-spot", "n", 1, true, 1)});
  EXPECT_TRUE(spot_preempts.preempt.empty());
  // Two on-demand pods cannot both claim the same victim in one round.
  const Plan two = Schedule(nodes, {MakePod("a", "H100 SXM", 1, 1), MakePod("b", "H100 SXM", 1, 2)},
                            {Running("only-spot", "n", 1, true, 1)});
  EXPECT_EQ(two.preempt, (std::vector<std::string>{"only-spot"}));
  EXPECT_EQ(two.unplaced[1].reason, "no node has 1 free H100 SXM; all are in use");
}

}  // namespace
}  // namespace suanli::sched
