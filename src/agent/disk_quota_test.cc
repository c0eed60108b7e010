#include "agent/disk_quota.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "testing/temp_dir.h"

namespace suanli::agent {
namespace {

constexpr int64_t kGb = int64_t{1} << 30;

core::Pod PodOf(int container_disk_gb, int volume_gb) {
  core::Pod pod;
  pod.id = "pod_a";
  pod.container_disk_gb = container_disk_gb;
  pod.volume_gb = volume_gb;
  pod.volume_mount_path = "/workspace";
  return pod;
}

TEST(DiskQuotaTest, WithinItsSizesAPodRunsOnAndPastOneItIsToldWhichAndWhatToDo) {
  const core::Pod pod = PodOf(1, 2);
  EXPECT_EQ(OverDiskSize(pod, {.container_bytes = kGb, .volume_bytes = 2 * kGb}), "")
      << "exactly at its sizes";
  EXPECT_EQ(OverDiskSize(pod, {.container_bytes = 0, .volume_bytes = 2 * kGb + 1}),
            "wrote 2.0 GB to its 2 GB volume (/workspace), so it was stopped; start it and delete "
            "files, or deploy it again with a larger --volume-gb");
  EXPECT_EQ(OverDiskSize(pod, {.container_bytes = kGb * 6 / 5, .volume_bytes = 0}),
            "wrote 1.2 GB to its 1 GB container disk, so it was stopped; keep large files on its "
            "volume (/workspace), or deploy it again with a larger --disk-gb");
  EXPECT_EQ(OverDiskSize(PodOf(0, 0), {.container_bytes = 5 * kGb, .volume_bytes = 5 * kGb}), "")
      << "no size asked for, none held";
}

TEST(DiskQuotaTest, DirectoryBytesCountsFilesOnDiskAndNotWhatLinksPointAt) {
  testing::TempDir root;
  const std::filesystem::path volume = root.path() / "volume";
  std::filesystem::create_directories(volume / "deep" / "er");
  {
    std::ofstream big(volume / "deep" / "er" / "data", std::ios::binary);
    big << std::string(3 << 20, 'x');
    std::ofstream outside(root.path() / "outside", std::ios::binary);
    outside << std::string(8 << 20, 'y');
  }
  std::filesystem::create_symlink(root.path() / "outside", volume / "link");
  const int64_t bytes = DirectoryBytes(volume);
  EXPECT_GE(bytes, int64_t{3} << 20);
  EXPECT_LT(bytes, int64_t{4} << 20) << "the link's target is not the volume's";
  EXPECT_EQ(DirectoryBytes(root.path() / "missing"), 0);
}

}  // namespace
}  // namespace suanli::agent
