#include "core/mount_path.h"

#include <gtest/gtest.h>

#include <string>

namespace suanli::core {
namespace {

TEST(MountPathTest, AcceptsCleanPathsOfTheUsersOwn) {
  for (std::string_view path :
       {"/workspace", "/data/models", "/var/lib/postgresql", "/root", "/home/me", "/library",
        "/opt/cache", "/procs", "/usrdata", "/a-b_c.d"}) {
    EXPECT_TRUE(CheckMountPath(path).ok()) << path << ": " << CheckMountPath(path).message();
  }
}

TEST(MountPathTest, RefusesSystemDirectoriesAndWhatIsBelowThem) {
  for (std::string_view path : {"/", "/proc", "/proc/sys", "/sys", "/dev", "/dev/shm", "/etc",
                                "/bin", "/sbin", "/lib", "/lib64", "/libx32/x", "/usr", "/usr/lib",
                                "/boot", "/run", "/var/run", "/var/run/docker"}) {
    const Status status = CheckMountPath(path);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << path;
    EXPECT_NE(status.message().find("volume_mount_path '" + std::string(path) + "'"),
              std::string::npos)
        << status.message();
  }
  EXPECT_NE(CheckMountPath("/usr/lib").message().find("system directory (/usr)"),
            std::string::npos);
}

TEST(MountPathTest, RefusesPathsThatAreNotCleanOrCarryMountOptions) {
  for (std::string_view path :
       {"workspace", "", "/workspace/../etc", "/workspace/..", "/./etc", "//etc", "/workspace/",
        "/data:ro", "/data,ro", "/data\nx", "/a\\b"}) {
    EXPECT_EQ(CheckMountPath(path).code(), StatusCode::kInvalidArgument) << path;
  }
  EXPECT_NE(CheckMountPath("/data:ro").message().find("mount option"), std::string::npos);
  EXPECT_NE(CheckMountPath("/workspace/../etc").message().find("'..'"), std::string::npos);
  EXPECT_FALSE(CheckMountPath("/" + std::string(kMaxMountPathLength, 'a')).ok());
  EXPECT_TRUE(CheckMountPath("/" + std::string(kMaxMountPathLength - 1, 'a')).ok());
  EXPECT_NE(CheckMountPath("x", "template volume_mount_path").message().find("template"),
            std::string::npos);
}

}  // namespace
}  // namespace suanli::core
