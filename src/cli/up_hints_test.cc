#include "cli/up_hints.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace suanli::cli {
namespace {

std::filesystem::path MakeExecutable(const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << "#!/bin/sh\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(UpHintsTest, AClientReachesTheServerOnLoopbackWhenItListensEverywhere) {
  EXPECT_EQ(ReachableUrl("0.0.0.0", 7070), "http://127.0.0.1:7070");
  EXPECT_EQ(ReachableUrl("", 7070), "http://127.0.0.1:7070");
  EXPECT_EQ(ReachableUrl("::", 7070), "http://[::1]:7070");
  EXPECT_EQ(ReachableUrl("127.0.0.1", 8080), "http://127.0.0.1:8080");
  EXPECT_EQ(ReachableUrl("10.0.0.5", 7070), "http://10.0.0.5:7070");
  EXPECT_TRUE(ListensOnAllAddresses("0.0.0.0"));
  EXPECT_FALSE(ListensOnAllAddresses("127.0.0.1"));
}

TEST(UpHintsTest, TheProgramIsSuanliOnlyWhenPathFindsThisBinary) {
  const testing::TempDir dir;
  const std::filesystem::path self = MakeExecutable(dir.File("build/release/suanli"));
  // Not on PATH at all: the binary's own path.
  EXPECT_EQ(ProgramName("/nonexistent:" + dir.File("bin").string(), self), self.string());
  EXPECT_EQ(ProgramName("", self), self.string());
  // PATH holds this binary (through a link, after a folder without one): "suanli".
  std::filesystem::create_directories(dir.File("bin"));
  std::filesystem::create_symlink(self, dir.File("bin/suanli"));
  EXPECT_EQ(ProgramName("/nonexistent::" + dir.File("bin").string(), self), "suanli");
  // Another suanli comes first on PATH (an older install): the path, so the hints run this one.
  MakeExecutable(dir.File("old/suanli"));
  EXPECT_EQ(ProgramName(dir.File("old").string() + ":" + dir.File("bin").string(), self),
            self.string());
  // A path a shell would split is quoted.
  const std::filesystem::path spaced = MakeExecutable(dir.File("my build/suanli"));
  EXPECT_EQ(ProgramName("", spaced), "'" + spaced.string() + "'");
}

TEST(UpHintsTest, TheHintsUseTheProgramAndTheReachableUrlAndNameAliceOnlyWhenNeeded) {
  UpHints hints{"/src/build/release/suanli", "http://127.0.0.1:7070", true,
                "suanli-data/admin-token", true};
  const std::string first = UpHintsText(hints);
  EXPECT_EQ(first.find("0.0.0.0"), std::string::npos) << first;
  EXPECT_NE(first.find("at http://127.0.0.1:7070/"), std::string::npos) << first;
  EXPECT_NE(first.find("export SUANLI_URL=http://127.0.0.1:7070 SUANLI_TOKEN=$(cat "
                       "suanli-data/admin-token)"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("other machines reach it at this machine's address"), std::string::npos);
  EXPECT_NE(first.find("  /src/build/release/suanli users create alice --credits 20"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("  /src/build/release/suanli pods create --template demo-http"),
            std::string::npos)
      << first;
  EXPECT_EQ(first.find("  suanli "), std::string::npos) << first;  // every command runs as pasted

  // A restart with users made: no alice again; on PATH and on loopback, plain `suanli`.
  hints.program = "suanli";
  hints.all_addresses = false;
  hints.no_other_user = false;
  const std::string again = UpHintsText(hints);
  EXPECT_EQ(again.find("alice"), std::string::npos) << again;
  EXPECT_EQ(again.find("other machines"), std::string::npos) << again;
  EXPECT_EQ(again.find("is this binary"), std::string::npos) << again;
  EXPECT_NE(again.find("  suanli pods create --template demo-http"), std::string::npos) << again;
}

}  // namespace
}  // namespace suanli::cli
