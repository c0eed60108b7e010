#include "net/ssh_host_key.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "testing/temp_dir.h"

namespace suanli::net {
namespace {

std::string FromHex(std::string_view hex) {
  std::string bytes;
  for (size_t at = 0; at + 1 < hex.size(); at += 2) {
    bytes.push_back(static_cast<char>(std::stoi(std::string(hex.substr(at, 2)), nullptr, 16)));
  }
  return bytes;
}

// What a command printed on its standard output (its errors go to the test's log).
std::string Output(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 512> buffer{};
  size_t read = 0;
  while ((read = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    out.append(buffer.data(), read);
  ::pclose(pipe);
  return out;
}

std::string WriteFile(const testing::TempDir& dir, const std::string& name,
                      const std::string& text) {
  const std::string path = dir.File(name);
  std::ofstream(path, std::ios::binary) << text;
  ::chmod(path.c_str(), 0600);  // both tools refuse a private key others may read
  return path;
}

// RFC 8032, section 7.1, test 1.
const std::string kSeed =
    FromHex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
const std::string kPublic =
    FromHex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");

TEST(SshHostKeyTest, ThePublicKeyIsRfc8032s) {
  const core::Result<SshHostKey> key = SshHostKeyFromSeed(kSeed);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->public_key, kPublic);
  EXPECT_EQ(SshHostKeyFromSeed("short").status().code(), core::StatusCode::kInvalidArgument);
}

// The files are read by the real tools: OpenSSH's ssh-keygen and Dropbear's dropbearkey (both
// installed by scripts/install-deps.sh) print the public key they find in each, which must be ours.
TEST(SshHostKeyTest, OpenSshAndDropbearReadTheFilesAsTheSameKey) {
  const SshHostKey key = *SshHostKeyFromSeed(kSeed);
  const std::string expected = OpenSshPublicKey(key);
  EXPECT_EQ(expected,
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINdamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea");
  testing::TempDir dir;
  const std::string openssh =
      WriteFile(dir, "ssh_host_ed25519_key", OpenSshPrivateKeyFile(key, "pod_1"));
  EXPECT_EQ(Output("ssh-keygen -y -f " + openssh), expected + " pod_1\n");
  const std::string dropbear =
      WriteFile(dir, "dropbear_ed25519_host_key", DropbearPrivateKeyFile(key));
  const std::string printed = Output("dropbearkey -y -f " + dropbear);
  EXPECT_NE(printed.find(expected + " "), std::string::npos) << printed;
}

TEST(SshHostKeyTest, AnotherSeedIsAnotherKey) {
  std::string other = kSeed;
  other[0] = static_cast<char>(other[0] ^ 1);
  EXPECT_NE(SshHostKeyFromSeed(other)->public_key, kPublic);
}

}  // namespace
}  // namespace suanli::net
