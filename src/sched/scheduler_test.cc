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
  node.gpu_free_milli.assign(static_cast<size_t>(gpus), kMilliGpu);
  node.free = {vcpu, ram_mb, 2000};
  node.vcpu_total = vcpu;
  return node;
}

// Bit i of `mask` set: GPU i is free; the others are wholly in use.
void SetFree(Node& node, uint64_t mask) {
  for (size_t i = 0; i < node.gpu_free_milli.size(); ++i)
    node.gpu_free_milli[i] = (mask >> i & 1) != 0 ? kMilliGpu : 0;
}

uint64_t FreeMask(const Node& node) {
  uint64_t mask = 0;
  for (size_t i = 0; i < node.gpu_free_milli.size(); ++i)
    if (node.gpu_free_milli[i] == kMilliGpu) mask |= uint64_t{1} << i;
  return mask;
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
  SetFree(nodes[1], 0b00001111);  // 4 of 8 free
  Plan plan =
      Schedule(nodes, {MakePod("one", "RTX 4090", 1, 1), MakePod("eight", "RTX 4090", 8, 2)});
  ASSERT_TRUE(plan.unplaced.empty()) << plan.unplaced[0].reason;
  EXPECT_EQ(NodeOf(plan)["one"], "half");  // not the empty node
  EXPECT_EQ(NodeOf(plan)["eight"], "big");
  EXPECT_EQ(plan.bindings[0].gpu_indices, (std::vector<int>{0}));
  EXPECT_EQ(plan.bindings[1].gpu_indices.size(), 8u);
  EXPECT_EQ(FreeMask(nodes[0]), 0u);
  EXPECT_EQ(FreeMask(nodes[1]), 0b00001110u);
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
  for (Node& node : nodes) SetFree(node, 0b1);  // one free GPU each
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
            "no node with 1 free RTX 4090 also has 8 vCPU free (the most is 4); ask for less, or "
            "wait for other pods to stop");

  std::vector<Node> tight = {MakeNode("tight", "RTX 4090", 2, /*vcpu=*/4, /*ram_mb=*/16 * 1024)};
  Plan both = Schedule(tight, {MakePod("needs-8-vcpu-32-gb", "RTX 4090", 1)});
  ASSERT_EQ(both.unplaced.size(), 1u);
  EXPECT_EQ(both.unplaced[0].reason,
            "no node with 1 free RTX 4090 also has 8 vCPU free (the most is 4) and 32 GB RAM free "
            "(the most is 16 GB); ask for less, or wait for other pods to stop");
}

// A 2-core host with 2 GPUs: one default pod (2 vCPU, 8 GB) takes all its vCPU, so its second GPU
// is free but no default pod can have it.
TEST(SchedulerTest, AFreeGpuIsUsableOnlyWithTheDefaultVcpuAndRamBesideIt) {
  EXPECT_EQ(DefaultNeeds(1, kMilliGpu).vcpu, 2);
  EXPECT_EQ(DefaultNeeds(1, kMilliGpu).ram_mb, 8 * 1024);
  EXPECT_EQ(DefaultNeeds(2, kMilliGpu).vcpu, 4);
  EXPECT_EQ(DefaultNeeds(1, 250).vcpu, 1);
  EXPECT_EQ(DefaultNeeds(1, 250).ram_mb, 2 * 1024);
  EXPECT_EQ(DefaultNeeds(1, 100).ram_mb, 1024);

  Node node = MakeNode("small", "RTX 4090", 2, /*vcpu=*/2, /*ram_mb=*/16 * 1024);
  EXPECT_EQ(UsableFreeGpus(node), 1);
  std::vector<Node> nodes = {node};
  PodRequest first = MakePod("first", "RTX 4090", 1);
  first.needs = DefaultNeeds(1, kMilliGpu);
  PodRequest second = MakePod("second", "RTX 4090", 1, 1);
  second.needs = DefaultNeeds(1, kMilliGpu);
  Plan plan = Schedule(nodes, {first, second});
  ASSERT_EQ(plan.bindings.size(), 1u);
  EXPECT_EQ(nodes[0].FreeGpus(), 1);
  EXPECT_EQ(UsableFreeGpus(nodes[0]), 0);
  ASSERT_EQ(plan.unplaced.size(), 1u);
  EXPECT_EQ(plan.unplaced[0].reason,
            "no node with 1 free RTX 4090 also has 2 vCPU free (the most is 0); ask for less, or "
            "wait for other pods to stop");

  EXPECT_EQ(LargestShareCovered({0, 64 * 1024, 0}), 0);
  EXPECT_EQ(LargestShareCovered({1, 512, 0}), 0);
  EXPECT_EQ(LargestShareCovered({1, 1024, 0}), 249);  // 0.25 of a GPU defaults to 2 GB
  EXPECT_EQ(LargestShareCovered({1, 8 * 1024, 0}), kMilliGpu - 1);
}

TEST(SchedulerTest, SaysWhichRequestsNoNodeCouldEverMeet) {
  std::vector<Node> nodes = {MakeNode("a", "RTX 4090", 2), MakeNode("b", "A100 80GB SXM", 8)};
  nodes[1].schedulable = false;  // cordoned or away: it may come back
  nodes[0].labels = {{"disk", "nvme"}};
  auto pod = [](std::string type, int count, int milli = kMilliGpu) {
    PodRequest request = MakePod("p", std::move(type), count);
    request.gpu_milli = milli;
    return request;
  };
  EXPECT_EQ(WhyNeverPlaced(pod("RTX 4090", 2), nodes), std::nullopt);
  EXPECT_EQ(WhyNeverPlaced(pod("A100 80GB SXM", 8), nodes), std::nullopt);
  EXPECT_EQ(WhyNeverPlaced(pod("H100 SXM", 1), nodes),
            "no node here has H100 SXM GPUs; the types here are A100 80GB SXM (8 a node), RTX "
            "4090 (2 a node)");
  EXPECT_EQ(WhyNeverPlaced(pod("RTX 4090", 3), nodes),
            "the largest RTX 4090 node here has 2 GPUs; ask for at most 2");
  PodRequest big = pod("RTX 4090", 1);
  big.needs.vcpu = 128;
  EXPECT_EQ(WhyNeverPlaced(big, nodes),
            "no node here with 1 RTX 4090 has 128 vCPU (the most is 64); ask for less");
  PodRequest labelled = pod("RTX 4090", 1);
  labelled.node_selector = {{"disk", "sata"}};
  EXPECT_EQ(WhyNeverPlaced(labelled, nodes),
            "no node here with 1 RTX 4090 has the labels disk=sata");
  EXPECT_EQ(WhyNeverPlaced(pod("RTX 4090", 1, 500), {}), "no node has joined this cluster yet");

  Node mig = MakeNode("mig", "A100 80GB SXM", 3);
  mig.gpu_capacity_milli = {428, 285, 285};
  mig.gpu_free_milli = mig.gpu_capacity_milli;
  EXPECT_EQ(WhyNeverPlaced(pod("A100 80GB SXM", 1, 400), {mig}), std::nullopt);
  EXPECT_EQ(WhyNeverPlaced(pod("A100 80GB SXM", 1, 500), {mig}),
            "no A100 80GB SXM device here holds 0.5 of a GPU: they are split into MIG slices, the "
            "largest 0.428 of a GPU; ask for a share of at most that");
  EXPECT_EQ(WhyNeverPlaced(pod("A100 80GB SXM", 1), {mig}),
            "no A100 80GB SXM device here holds a whole GPU: they are split into MIG slices, the "
            "largest 0.428 of a GPU; ask for a share of at most that");
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
  for (int i = 0; i < gpus; ++i) pod.gpu_indices.push_back(i);
  pod.uses = {8, 32 * 1024, 50};
  pod.interruptible = interruptible;
  pod.sequence = sequence;
  return pod;
}

TEST(SchedulerTest, AnOnDemandPodPreemptsTheNewestInterruptiblePodsItNeeds) {
  std::vector<Node> nodes = {MakeNode("n", "H100 SXM", 2)};
  SetFree(nodes[0], 0);  // both GPUs in use
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
  SetFree(nodes[0], 0);
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

PodRequest Share(std::string id, std::string type, int milli, uint64_t sequence = 0) {
  PodRequest pod = MakePod(std::move(id), std::move(type), 1, sequence);
  pod.gpu_milli = milli;
  pod.needs = {2, 8 * 1024, 20};
  return pod;
}

TEST(SchedulerTest, SharesOfOneGpuGoOnTheSameDeviceAndTheThirdWaitsWithItsReason) {
  std::vector<Node> nodes = {MakeNode("one", "RTX 4090", 1)};
  const Plan plan = Schedule(nodes, {Share("a", "RTX 4090", 500, 1), Share("b", "RTX 4090", 500, 2),
                                     Share("c", "RTX 4090", 500, 3)});
  ASSERT_EQ(plan.bindings.size(), 2u);
  EXPECT_EQ(plan.bindings[0].gpu_indices, (std::vector<int>{0}));
  EXPECT_EQ(plan.bindings[1].gpu_indices, (std::vector<int>{0}));
  EXPECT_EQ(nodes[0].gpu_free_milli, (std::vector<int>{0}));
  ASSERT_EQ(plan.unplaced.size(), 1u);
  EXPECT_EQ(plan.unplaced[0].pod_id, "c");
  EXPECT_EQ(plan.unplaced[0].reason, "no node has 0.5 free of an RTX 4090; all are in use");

  // A whole-GPU pod never lands on a device a share uses.
  std::vector<Node> partly = {MakeNode("n", "RTX 4090", 2)};
  partly[0].gpu_free_milli = {750, kMilliGpu};
  const Plan whole =
      Schedule(partly, {MakePod("whole", "RTX 4090", 1), Share("more", "RTX 4090", 500, 1)});
  ASSERT_EQ(whole.bindings.size(), 2u);
  EXPECT_EQ(whole.bindings[0].gpu_indices, (std::vector<int>{1}));
  EXPECT_EQ(whole.bindings[1].gpu_indices, (std::vector<int>{0}));  // the shared device
  std::vector<Node> quarters = {MakeNode("x", "RTX 4090", 1), MakeNode("y", "RTX 4090", 1)};
  quarters[0].gpu_free_milli = quarters[1].gpu_free_milli = {250};
  const Plan short_plan = Schedule(quarters, {Share("half", "RTX 4090", 500)});
  ASSERT_EQ(short_plan.unplaced.size(), 1u);
  EXPECT_EQ(short_plan.unplaced[0].reason,
            "no node has 0.5 free of an RTX 4090; 2 nodes have 0.25");
  // Where the nodes say how much memory a GPU has, the reason names the share's part of it.
  quarters[0].gpu_memory_gb = quarters[1].gpu_memory_gb = 24;
  const Plan with_memory = Schedule(quarters, {Share("half", "RTX 4090", 500)});
  ASSERT_EQ(with_memory.unplaced.size(), 1u);
  EXPECT_EQ(with_memory.unplaced[0].reason,
            "no node has 0.5 free of an RTX 4090 (12 GB of its memory); 2 nodes have 0.25");
}

TEST(SchedulerTest, MultiGpuPodsTakeGpusThatShareALink) {
  // Two PCIe switches of four GPUs; GPU 0 runs a pod. A 4-GPU pod takes the other switch whole,
  // not GPUs 1-4 across the two; a 2-GPU pod then takes two of the first switch's three.
  std::vector<Node> nodes = {MakeNode("n", "L40S", 8)};
  nodes[0].gpu_link_group = {0, 0, 0, 0, 1, 1, 1, 1};
  nodes[0].gpu_free_milli[0] = 0;
  const Plan plan = Schedule(nodes, {MakePod("four", "L40S", 4, 1), MakePod("two", "L40S", 2, 2)});
  ASSERT_EQ(plan.bindings.size(), 2u);
  EXPECT_EQ(plan.bindings[0].gpu_indices, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(plan.bindings[1].gpu_indices, (std::vector<int>{1, 2}));
}

TEST(SchedulerTest, SharesGoOnMigSlicesAndWholeGpuPodsNever) {
  // An A100 split into a 3g (3/7) and two 2g slices: shares that fit a slice go there; a
  // whole-GPU pod waits, since no slice is a GPU.
  std::vector<Node> nodes = {MakeNode("mig", "A100 80GB SXM", 3)};
  nodes[0].gpu_capacity_milli = nodes[0].gpu_free_milli = {428, 285, 285};
  const Plan plan = Schedule(
      nodes, {Share("small", "A100 80GB SXM", 250, 1), Share("third", "A100 80GB SXM", 400, 2),
              MakePod("whole", "A100 80GB SXM", 1, 3)});
  ASSERT_EQ(plan.bindings.size(), 2u);
  EXPECT_EQ(NodeOf(plan)["third"], "mig");
  EXPECT_EQ(plan.bindings[1].gpu_indices, (std::vector<int>{0}));  // only the 3g slice holds 0.4
  EXPECT_NE(plan.bindings[0].gpu_indices, (std::vector<int>{0}));
  ASSERT_EQ(plan.unplaced.size(), 1u);
  EXPECT_EQ(plan.unplaced[0].pod_id, "whole");
  EXPECT_EQ(plan.unplaced[0].reason,
            "no node has 1 free A100 80GB SXM: their GPUs are split into MIG slices, the largest "
            "0.428 of a GPU; ask for a share of at most that");
}

TEST(SchedulerTest, SharesPackTogetherInsteadOfBreakingWholeGpus) {
  // Four nodes of one GPU each; a quarter already runs on "used". Shares fill "used" before they
  // touch a whole GPU, so three nodes stay whole for whole-GPU pods.
  std::vector<Node> nodes = {MakeNode("a", "L4", 1), MakeNode("used", "L4", 1),
                             MakeNode("b", "L4", 1), MakeNode("c", "L4", 1)};
  nodes[1].gpu_free_milli = {750};
  const Plan plan = Schedule(
      nodes, {Share("s1", "L4", 250, 1), Share("s2", "L4", 500, 2), MakePod("w1", "L4", 1, 3),
              MakePod("w2", "L4", 1, 4), MakePod("w3", "L4", 1, 5)});
  ASSERT_TRUE(plan.unplaced.empty()) << plan.unplaced[0].reason;
  EXPECT_EQ(NodeOf(plan)["s1"], "used");
  EXPECT_EQ(NodeOf(plan)["s2"], "used");
}

TEST(SchedulerTest, RefusesSharesOfSeveralGpusAndOddFractions) {
  std::vector<Node> nodes = {MakeNode("n", "L4", 4)};
  PodRequest two_halves = Share("two-halves", "L4", 500);
  two_halves.gpu_count = 2;
  PodRequest none = Share("none", "L4", 0);
  const Plan plan = Schedule(nodes, {two_halves, none});
  ASSERT_EQ(plan.unplaced.size(), 2u);
  EXPECT_EQ(plan.unplaced[0].reason,
            "a pod asks for a share of one GPU (0.001 to 0.999) or whole GPUs, not 2 x 0.5");
  EXPECT_TRUE(plan.bindings.empty());
}

TEST(SchedulerTest, PreemptingAnInterruptibleShareFreesItsPartOfTheDevice) {
  std::vector<Node> nodes = {MakeNode("n", "L4", 1)};
  nodes[0].gpu_free_milli = {0};
  RunningPod spot = Running("spot-half", "n", 1, true, 1);
  spot.gpu_milli = 500;
  RunningPod steady = Running("steady-half", "n", 1, false, 2);
  steady.gpu_milli = 500;
  const Plan plan = Schedule(nodes, {Share("half", "L4", 500)}, {spot, steady});
  EXPECT_EQ(plan.preempt, (std::vector<std::string>{"spot-half"}));
  const Plan whole = Schedule(nodes, {MakePod("whole", "L4", 1)}, {spot, steady});
  EXPECT_TRUE(whole.preempt.empty());  // the on-demand half still holds the device
}

}  // namespace
}  // namespace suanli::sched

namespace suanli::sched {
namespace {

TEST(SchedulerDataTest, APodGoesToTheNodeHoldingItsDataWhenItHasRoomThoughPackingWouldNot) {
  std::vector<Node> nodes = {MakeNode("a", "RTX 4090", 8), MakeNode("b", "RTX 4090", 8)};
  SetFree(nodes[1], 0b00001111);  // packing alone would pick b, the fuller node
  PodRequest pod = MakePod("p", "RTX 4090", 1, 1);
  pod.data_node = "a";
  Plan plan = Schedule(nodes, {pod});
  ASSERT_TRUE(plan.unplaced.empty()) << plan.unplaced[0].reason;
  EXPECT_EQ(NodeOf(plan)["p"], "a");
}

TEST(SchedulerDataTest, APodWhoseDataNodeIsFullGoesElsewhereUnlessItMustShareThatNode) {
  std::vector<Node> nodes = {MakeNode("a", "RTX 4090", 2), MakeNode("b", "RTX 4090", 2)};
  SetFree(nodes[0], 0);  // a is full
  PodRequest movable = MakePod("movable", "RTX 4090", 1, 1);
  movable.data_node = "a";
  PodRequest pinned = MakePod("pinned", "RTX 4090", 1, 2);
  pinned.data_node = "a";
  pinned.node_required = true;
  Plan plan = Schedule(nodes, {movable, pinned});
  EXPECT_EQ(NodeOf(plan)["movable"], "b");
  ASSERT_EQ(plan.unplaced.size(), 1u);
  EXPECT_EQ(plan.unplaced[0].pod_id, "pinned");
  EXPECT_NE(plan.unplaced[0].reason.find("node a"), std::string::npos) << plan.unplaced[0].reason;
  EXPECT_EQ(FreeMask(nodes[1]), 0b10u);  // the pinned pod took nothing on b
}

}  // namespace
}  // namespace suanli::sched
