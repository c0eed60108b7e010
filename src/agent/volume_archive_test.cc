#include "agent/volume_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "testing/temp_dir.h"

namespace suanli::agent {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

void Write(const fs::path& file, const std::string& content) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << content;
}

std::string Read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// An archive written entry by entry, for archives a well-behaved node would never make.
struct RawEntry {
  std::string path;
  std::string content;
  std::string symlink;  // non-empty: a symlink to this
};
void WriteRaw(const fs::path& file, const std::vector<RawEntry>& entries) {
  std::unique_ptr<archive, int (*)(archive*)> writer(archive_write_new(), archive_write_free);
  archive_write_set_format_pax_restricted(writer.get());
  ASSERT_EQ(archive_write_open_filename(writer.get(), file.c_str()), ARCHIVE_OK);
  for (const RawEntry& raw : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, raw.path.c_str());
    if (!raw.symlink.empty()) {
      archive_entry_set_filetype(entry, AE_IFLNK);
      archive_entry_set_symlink(entry, raw.symlink.c_str());
      archive_entry_set_perm(entry, 0777);
    } else {
      archive_entry_set_filetype(entry, AE_IFREG);
      archive_entry_set_perm(entry, 0644);
      archive_entry_set_size(entry, static_cast<la_int64_t>(raw.content.size()));
    }
    ASSERT_EQ(archive_write_header(writer.get(), entry), ARCHIVE_OK);
    if (!raw.content.empty())
      archive_write_data(writer.get(), raw.content.data(), raw.content.size());
    archive_entry_free(entry);
  }
  archive_write_close(writer.get());
}

TEST(VolumeArchiveTest, ATreeRoundTripsWithModesSymlinksAndEmptyFilesAndReplacesWhatWasThere) {
  TempDir dir;
  const fs::path from = dir.File("from");
  Write(from / "notes.txt", "hello\n");
  Write(from / "deep/er/data.bin", std::string(3 << 20, '\x7f') + std::string("\0end", 4));
  Write(from / "empty", "");
  fs::create_directories(from / "empty-dir");
  fs::create_symlink("/etc/passwd", from / "link");  // archived as a link, never followed
  ::chmod((from / "notes.txt").c_str(), 0600);
  const fs::path archive = dir.File("v.tar");
  core::Result<ArchiveInfo> made = MakeVolumeArchive(from, archive);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->size, static_cast<int64_t>(fs::file_size(archive)));
  EXPECT_EQ(made->sha256.size(), 64u);
  EXPECT_EQ(*DigestFile(archive), *made);
  EXPECT_FALSE(fs::exists(archive.string() + ".partial"));

  const fs::path to = dir.File("to");
  Write(to / "stale", "from an older copy");
  const core::Status unpacked = UnpackVolumeArchive(archive, to);
  ASSERT_TRUE(unpacked.ok()) << unpacked.ToString();
  EXPECT_FALSE(fs::exists(to / "stale"));
  EXPECT_EQ(Read(to / "notes.txt"), "hello\n");
  EXPECT_EQ(Read(to / "deep/er/data.bin"), Read(from / "deep/er/data.bin"));
  EXPECT_TRUE(fs::exists(to / "empty"));
  EXPECT_EQ(fs::file_size(to / "empty"), 0u);
  EXPECT_TRUE(fs::is_directory(to / "empty-dir"));
  ASSERT_TRUE(fs::is_symlink(to / "link"));
  EXPECT_EQ(fs::read_symlink(to / "link"), "/etc/passwd");
  struct stat info {};
  ASSERT_EQ(::stat((to / "notes.txt").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  // The same tree makes the same bytes again: a restarted move can compare checksums.
  core::Result<ArchiveInfo> again = MakeVolumeArchive(to, dir.File("again.tar"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->size, made->size);
}

TEST(VolumeArchiveTest, EntriesThatLeaveTheVolumeAreRefused) {
  TempDir dir;
  const fs::path outside = dir.File("outside");
  fs::create_directories(outside);
  for (const std::vector<RawEntry>& entries : std::vector<std::vector<RawEntry>>{
           {{"../escaped", "x", ""}},
           {{"/abs", "x", ""}},
           {{"a/../../escaped", "x", ""}},
           {{"link", "", outside.string()}, {"link/escaped", "x", ""}},
       }) {
    SCOPED_TRACE(entries.back().path);
    const fs::path archive = dir.File("bad.tar");
    WriteRaw(archive, entries);
    const core::Status unpacked = UnpackVolumeArchive(archive, dir.File("volume"));
    EXPECT_FALSE(unpacked.ok());
    EXPECT_FALSE(fs::exists(dir.File("escaped")));
    EXPECT_FALSE(fs::exists(outside / "escaped"));
  }
}

TEST(VolumeArchiveTest, AMissingDirectoryIsNotFoundAndACorruptArchiveIsAnError) {
  TempDir dir;
  EXPECT_EQ(MakeVolumeArchive(dir.File("absent"), dir.File("a.tar")).status().code(),
            core::StatusCode::kNotFound);
  Write(dir.File("junk.tar"), std::string(1000, 'j'));
  EXPECT_FALSE(UnpackVolumeArchive(dir.File("junk.tar"), dir.File("v")).ok());
  EXPECT_EQ(DigestFile(dir.File("absent")).status().code(), core::StatusCode::kNotFound);
}

}  // namespace
}  // namespace suanli::agent
