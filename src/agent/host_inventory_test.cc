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

}  // namespace
}  // namespace suanli::agent
