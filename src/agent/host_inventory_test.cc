#include "agent/host_inventory.h"

#include <gtest/gtest.h>

#include <thread>

namespace suanli::agent {
namespace {

TEST(HostInventoryTest, TheHostHasAName) { EXPECT_FALSE(HostName().empty()); }

TEST(HostInventoryTest, ReadsCpusMemoryAndDisk) {
  const HostResources resources = ReadResources(std::filesystem::temp_directory_path());
  EXPECT_EQ(resources.vcpu, static_cast<int>(std::max(1U, std::thread::hardware_concurrency())));
  EXPECT_GT(resources.memory_gb, 0) << "a host that runs the tests has a GiB of memory";
  EXPECT_GE(resources.disk_gb, 0);
}

TEST(HostInventoryTest, TheDiskOfAMissingDirectoryIsUnknown) {
  const HostResources resources = ReadResources("/nonexistent/suanli/state");
  EXPECT_EQ(resources.disk_gb, 0);
  EXPECT_GE(resources.vcpu, 1) << "the rest is still read";
}

// The README's quick start on a 2-core machine: two simulated GPUs, two demo pods of 2 vCPU each.
TEST(HostInventoryTest, SimulatedGpusGetTheRoomTheirDefaultPodsTake) {
  Gpu simulated;
  simulated.simulated = true;
  const std::vector<Gpu> two(2, simulated);
  const HostResources small{.vcpu = 2, .memory_gb = 7, .disk_gb = 50};
  const HostResources room = WithRoomForSimulatedGpus(small, two);
  EXPECT_EQ(room.vcpu, 4);
  EXPECT_EQ(room.memory_gb, 16);
  EXPECT_EQ(room.disk_gb, 50);
  const HostResources big{.vcpu = 64, .memory_gb = 512, .disk_gb = 50};
  EXPECT_EQ(WithRoomForSimulatedGpus(big, two).vcpu, 64);
  const std::vector<Gpu> real(2);
  EXPECT_EQ(WithRoomForSimulatedGpus(small, real).vcpu, 2);  // real GPUs: the host as it is
}

}  // namespace
}  // namespace suanli::agent
