#include "sched/packing.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace suanli::sched {
namespace {

PackingNode Node(int model, int gpus, int64_t cpu_milli = 64000, int64_t memory_mib = 262144) {
  PackingNode node;
  node.model = gpus == 0 ? -1 : model;
  node.cpu_milli_capacity = node.cpu_milli = cpu_milli;
  node.memory_mib = memory_mib;
  node.gpu_milli.assign(static_cast<size_t>(gpus), kMilliGpu);
  return node;
}

Demand Share(int milli, int64_t cpu_milli = 4000) { return {cpu_milli, 8192, 1, milli, kAnyModel}; }
Demand Whole(int count, int64_t cpu_milli = 8000) {
  return {cpu_milli, 16384, count, kMilliGpu, kAnyModel};
}

TEST(PackingTest, APodFitsOnlyWhereItsModelCpuMemoryAndGpusAre) {
  const PackingNode node = Node(/*model=*/2, /*gpus=*/2, /*cpu_milli=*/16000, /*memory_mib=*/32768);
  EXPECT_TRUE(Fits(node, Whole(2)));
  EXPECT_FALSE(Fits(node, Whole(3)));
  EXPECT_FALSE(Fits(node, Whole(1, /*cpu_milli=*/16001)));
  Demand big_memory = Whole(1);
  big_memory.memory_mib = 32769;
  EXPECT_FALSE(Fits(node, big_memory));
  Demand other_model = Whole(1);
  other_model.models = ModelMask{1} << 3;
  EXPECT_FALSE(Fits(node, other_model));
  other_model.models |= ModelMask{1} << 2;
  EXPECT_TRUE(Fits(node, other_model));
  // Without GPUs: only pods that ask for none.
  EXPECT_FALSE(Fits(Node(0, 0), Share(100)));
  EXPECT_TRUE(Fits(Node(0, 0), Demand{1000, 1024, 0, 0, kAnyModel}));
}

TEST(PackingTest, TakeGivesThePodItsShareOfEachDevice) {
  PackingNode node = Node(0, 4);
  Take(node, Share(300), {2});
  Take(node, Whole(2), {0, 1});
  EXPECT_EQ(node.gpu_milli, (std::vector<int>{0, 0, 700, 1000}));
  EXPECT_EQ(node.cpu_milli, 64000 - 4000 - 8000);
  EXPECT_EQ(node.GpuMilliFree(), 1700);
}

TEST(PackingTest, StrandedCapacityIsWhatAPodOfThatKindCouldNotUse) {
  PackingNode node = Node(0, 4);
  node.gpu_milli = {1000, 1000, 700, 200};
  EXPECT_EQ(StrandedFor(node, Share(500)), 200);          // the 0.2 remnant
  EXPECT_EQ(StrandedFor(node, Share(100)), 0);            // every device has room for 0.1
  EXPECT_EQ(StrandedFor(node, Whole(1)), 900);            // partly used devices
  EXPECT_EQ(StrandedFor(node, Whole(4)), 2900);           // does not fit: all of it
  EXPECT_EQ(StrandedFor(node, Share(100, 70000)), 2900);  // short of CPU: all of it
}

TEST(PackingTest, TheWorkloadIsTheShareOfEachKindOfGpuPod) {
  const Workload workload =
      Workload::Of({Share(500), Share(500), Whole(1), Demand{1000, 1024, 0, 0, kAnyModel}});
  ASSERT_EQ(workload.kinds.size(), 2u);  // the CPU-only pod is left out
  double total = 0;
  for (const Workload::Kind& kind : workload.kinds) {
    total += kind.share;
    EXPECT_DOUBLE_EQ(kind.share, kind.demand == Share(500) ? 2.0 / 3 : 1.0 / 3);
  }
  EXPECT_DOUBLE_EQ(total, 1.0);
}

TEST(PackingTest, BestFitTakesTheFullestNodeAndTheFullestDevice) {
  std::vector<PackingNode> nodes = {Node(0, 8), Node(0, 4), Node(0, 4)};
  nodes[2].gpu_milli = {1000, 600, 1000, 400};
  Packer packer(Policy::kBestFit, Workload::Of({Share(300)}), nodes, 1);
  std::optional<Placement> share = packer.Place(Share(300));
  ASSERT_TRUE(share);
  EXPECT_EQ(share->node, 2u);
  EXPECT_EQ(share->gpus, std::vector<int>{3});  // 0.4 free: the fullest device with room
  std::optional<Placement> whole = packer.Place(Whole(2));
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->node, 2u);  // the least left over, on the devices nobody uses
  EXPECT_EQ(whole->gpus, (std::vector<int>{0, 2}));
}

TEST(PackingTest, FragmentationAwarePoliciesKeepWholeDevicesForWholeGpuPods) {
  // Half shares and whole GPUs arrive equally often. A half share on the half-used device
  // completes it; on the free one it would leave half a device that whole-GPU pods cannot use.
  std::vector<PackingNode> nodes = {Node(0, 1), Node(0, 1)};
  nodes[1].gpu_milli = {500};
  const Workload workload = Workload::Of({Share(500), Whole(1)});
  for (Policy policy : {Policy::kFgd, Policy::kSuanli}) {
    Packer packer(policy, workload, nodes, 7);
    EXPECT_GT(packer.Fragmentation(nodes[1]), packer.Fragmentation(nodes[0]));
    std::optional<Placement> placement = packer.Place(Share(500));
    ASSERT_TRUE(placement) << PolicyName(policy);
    EXPECT_EQ(placement->node, 1u) << PolicyName(policy);
  }
}

TEST(PackingTest, SuanliBreaksFgdsTiesByBestFit) {
  // Two empty nodes fragment alike for a CPU-only pod; the one with less CPU packs tighter.
  std::vector<PackingNode> nodes = {Node(0, 0, 96000), Node(0, 0, 32000)};
  Packer packer(Policy::kSuanli, Workload::Of({Whole(1)}), nodes, 3);
  for (int round = 0; round < 5; ++round) {
    std::optional<Placement> placement = packer.Place(Demand{4000, 1024, 0, 0, kAnyModel});
    ASSERT_TRUE(placement);
    EXPECT_EQ(placement->node, 1u);
    EXPECT_TRUE(placement->gpus.empty());
  }
}

TEST(PackingTest, SuanliKeepsCoresBesideFreeGpus) {
  // A CPU-only pod: best fit packs it beside the half-used GPU node's last free GPU, which would
  // leave that GPU 8 of 64 cores; suanli sends it to the CPU-only node.
  std::vector<PackingNode> nodes = {Node(0, 2, 64000), Node(0, 0, 192000)};
  nodes[0].cpu_milli = 16000;
  nodes[0].gpu_milli = {0, 1000};
  const Demand cpu_only{8000, 1024, 0, 0, kAnyModel};
  const Workload workload = Workload::Of({Whole(1)});
  Packer best_fit(Policy::kBestFit, workload, nodes, 1);
  Packer suanli(Policy::kSuanli, workload, nodes, 1);
  EXPECT_EQ(best_fit.Place(cpu_only)->node, 0u);
  EXPECT_EQ(suanli.Place(cpu_only)->node, 1u);
}

TEST(PackingTest, NoPolicyEverGivesMoreThanANodeHas) {
  std::mt19937_64 random(11);
  std::vector<Demand> pods;
  for (int i = 0; i < 400; ++i) {
    const int kind = static_cast<int>(random() % 4);
    pods.push_back(kind == 0   ? Share(static_cast<int>(50 + random() % 900))
                   : kind == 1 ? Whole(1 + static_cast<int>(random() % 2) * 3)
                   : kind == 2 ? Whole(8)
                               : Demand{8000, 4096, 0, 0, kAnyModel});
  }
  for (Policy policy : {Policy::kRandom, Policy::kBestFit, Policy::kFgd, Policy::kSuanli}) {
    Packer packer(policy, Workload::Of(pods), {Node(0, 8), Node(1, 4), Node(0, 2), Node(0, 0)}, 5);
    int placed = 0;
    for (const Demand& pod : pods) {
      const std::vector<PackingNode> before = packer.nodes();
      std::optional<Placement> placement = packer.Place(pod);
      if (!placement) {
        // Nowhere means nowhere: no node had room.
        for (const PackingNode& node : before) ASSERT_FALSE(Fits(node, pod));
        continue;
      }
      ASSERT_TRUE(Fits(before[placement->node], pod));
      ASSERT_EQ(placement->gpus.size(), static_cast<size_t>(pod.gpu_count));
      PackingNode expected = before[placement->node];
      Take(expected, pod, placement->gpus);
      ASSERT_EQ(packer.nodes()[placement->node].gpu_milli, expected.gpu_milli);
      ++placed;
    }
    EXPECT_GT(placed, 0) << PolicyName(policy);
    for (const PackingNode& node : packer.nodes()) {
      EXPECT_GE(node.cpu_milli, 0);
      EXPECT_GE(node.memory_mib, 0);
      for (int free : node.gpu_milli) EXPECT_GE(free, 0) << PolicyName(policy);
    }
  }
}

TEST(PackingTest, PolicyNamesRoundTrip) {
  for (Policy policy : {Policy::kRandom, Policy::kBestFit, Policy::kFgd, Policy::kSuanli}) {
    EXPECT_EQ(ParsePolicy(PolicyName(policy)), policy);
  }
  EXPECT_EQ(ParsePolicy("first-fit"), std::nullopt);
}

TEST(PackingTest, WholeGpusComeFromAsFewLinkGroupsAsPossible) {
  PackingNode node = Node(0, 8);
  node.gpu_link_group = {0, 0, 0, 0, 1, 1, 1, 1};
  node.gpu_milli[5] = 0;
  Packer packer(Policy::kSuanli, Workload::Of({Whole(1), Whole(2), Whole(4)}), {node}, 1);
  // Three free in group 1, four in group 0: a 2-GPU pod takes the smaller group that holds it.
  std::optional<Placement> two = packer.Place(Whole(2));
  ASSERT_TRUE(two);
  EXPECT_EQ(two->gpus, (std::vector<int>{4, 6}));
  // Group 0 is still whole for a 4-GPU pod.
  std::optional<Placement> four = packer.Place(Whole(4));
  ASSERT_TRUE(four);
  EXPECT_EQ(four->gpus, (std::vector<int>{0, 1, 2, 3}));
}

TEST(PackingTest, APodNoGroupHoldsSpansTheFewestGroups) {
  PackingNode node = Node(0, 8);
  node.gpu_link_group = {0, 0, 1, 1, 1, 2, 2, 2};
  node.gpu_milli[2] = node.gpu_milli[5] = 0;
  // Free: group 0 {0,1}, group 1 {3,4}, group 2 {6,7}; a 4-GPU pod needs two groups, not three.
  Packer packer(Policy::kBestFit, Workload::Of({Whole(4)}), {node}, 1);
  std::optional<Placement> four = packer.Place(Whole(4));
  ASSERT_TRUE(four);
  std::set<int> groups;
  for (int gpu : four->gpus) groups.insert(node.gpu_link_group[static_cast<size_t>(gpu)]);
  EXPECT_EQ(four->gpus.size(), 4u);
  EXPECT_EQ(groups.size(), 2u);
}

TEST(PackingTest, ASharePrefersTheGroupAlreadyBrokenUp) {
  PackingNode node = Node(0, 4);
  node.gpu_link_group = {0, 0, 1, 1};
  node.gpu_milli[3] = 0;  // group 1 has one whole GPU left, group 0 two
  Packer packer(Policy::kSuanli, Workload::Of({Share(500), Whole(2)}), {node}, 1);
  std::optional<Placement> share = packer.Place(Share(500));
  ASSERT_TRUE(share);
  EXPECT_EQ(share->gpus, std::vector<int>{2});
  std::optional<Placement> two = packer.Place(Whole(2));
  ASSERT_TRUE(two);
  EXPECT_EQ(two->gpus, (std::vector<int>{0, 1}));
}

TEST(PackingTest, MigSlicesCountAsTheirCapacity) {
  PackingNode node = Node(0, 2);
  node.gpu_milli = {428, 571};  // a 3g and a 4g slice of one A100
  node.gpu_milli_capacity = 999;
  EXPECT_EQ(node.GpuMilliCapacity(), 999);
  EXPECT_FALSE(Fits(node, Whole(1)));
  EXPECT_TRUE(Fits(node, Share(500)));
  EXPECT_EQ(Node(0, 2).GpuMilliCapacity(), 2 * kMilliGpu);
}

}  // namespace
}  // namespace suanli::sched
