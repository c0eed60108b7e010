#include "agent/tar.h"

#include <gtest/gtest.h>

namespace suanli::agent {
namespace {

TEST(TarTest, KeepsPathsModesOwnersAndContent) {
  std::vector<TarEntry> written{
      TarEntry::Directory(".ssh", 0700),
      TarEntry::File(".ssh/authorized_keys", 0600, "ssh-ed25519 AAAA alice\n"),
      TarEntry::File("empty", 0644, ""),
  };
  written[2].uid = written[2].gid = 1000;
  const core::Result<std::string> archive = MakeTar(written);
  ASSERT_TRUE(archive.ok()) << archive.status().message();
  EXPECT_EQ(archive->size() % 512, 0u);  // whole tar blocks
  const core::Result<std::vector<TarEntry>> read = ReadTar(*archive);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->size(), 3u);
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ((*read)[i].path, written[i].path);
    EXPECT_EQ((*read)[i].directory, written[i].directory) << written[i].path;
    EXPECT_EQ((*read)[i].mode, written[i].mode) << written[i].path;
    EXPECT_EQ((*read)[i].content, written[i].content) << written[i].path;
    EXPECT_EQ((*read)[i].uid, written[i].uid) << written[i].path;
  }
}

TEST(TarTest, RefusesPathsThatLeaveTheTarget) {
  for (const char* path : {"", "/etc/passwd", "../x", ".ssh/../../x", "a//b"}) {
    const core::Result<std::string> archive = MakeTar({TarEntry::File(path, 0644, "x")});
    ASSERT_FALSE(archive.ok()) << path;
    EXPECT_EQ(archive.status().code(), core::StatusCode::kInvalidArgument) << path;
  }
}

TEST(TarTest, ReadTarRefusesGarbage) { EXPECT_FALSE(ReadTar(std::string(1024, 'x')).ok()); }

}  // namespace
}  // namespace suanli::agent
