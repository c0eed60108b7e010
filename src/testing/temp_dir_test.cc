#include "testing/temp_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace suanli::testing {
namespace {

TEST(TempDirTest, IsAFreshPrivateFolderRemovedWithWhatItHolds) {
  std::filesystem::path kept;
  {
    TempDir dir("suanli-temp-dir-test");
    kept = dir.path();
    ASSERT_TRUE(std::filesystem::is_directory(kept));
    EXPECT_TRUE(std::filesystem::is_empty(kept));
    EXPECT_TRUE(kept.filename().string().starts_with("suanli-temp-dir-test-"));
    EXPECT_EQ(std::filesystem::status(kept).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_all);
    EXPECT_EQ(dir.File("a.txt"), kept / "a.txt");
    std::filesystem::create_directories(kept / "sub");
    std::ofstream(kept / "sub" / "b.txt") << "b";
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}

TEST(TempDirTest, TwoAreNeverTheSameFolder) {
  TempDir first;
  TempDir second;
  EXPECT_NE(first.path(), second.path());
}

}  // namespace
}  // namespace suanli::testing
