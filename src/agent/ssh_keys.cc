#include "agent/ssh_keys.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "agent/container_spec.h"
#include "agent/reconcile.h"
#include "agent/tar.h"
#include "net/ssh_host_key.h"

namespace suanli::agent {

using core::Result;
using core::Status;
using core::StatusCode;

namespace {

// Time for `sh -c 'test -f ...'` in a pod: a busy pod may take a moment to fork.
constexpr std::chrono::seconds kCheckTimeout{10};

// The engine answered that the container is gone or not running: nothing to rewrite.
bool Gone(const Status& status) {
  return status.code() == StatusCode::kNotFound || status.code() == StatusCode::kFailedPrecondition;
}

}  // namespace

Status PutAuthorizedKeys(Engine& engine, const std::string& container_id,
                         const std::string& volume_path, const std::string& keys) {
  Result<std::string> tar = MakeTar(
      {TarEntry::Directory(".ssh", 0700), TarEntry::File(".ssh/authorized_keys", 0600, keys)});
  if (!tar.ok()) return tar.status();
  return engine.PutArchive(container_id, volume_path, *tar);
}

Status PutHostKey(Engine& engine, const std::string& container_id, const core::Pod& pod) {
  if (pod.ssh_host_key_seed.empty()) return Status::Ok();
  Result<net::SshHostKey> key = net::SshHostKeyFromSeed(pod.ssh_host_key_seed);
  if (!key.ok()) return key.status();
  Result<std::string> tar =
      MakeTar({TarEntry::Directory("etc/ssh", 0755),
               TarEntry::File("etc/ssh/ssh_host_ed25519_key", 0600,
                              net::OpenSshPrivateKeyFile(*key, "root@" + pod.id)),
               TarEntry::File("etc/ssh/ssh_host_ed25519_key.pub", 0644,
                              net::OpenSshPublicKey(*key) + " root@" + pod.id + "\n"),
               TarEntry::Directory("etc/dropbear", 0755),
               TarEntry::File("etc/dropbear/dropbear_ed25519_host_key", 0600,
                              net::DropbearPrivateKeyFile(*key))});
  if (!tar.ok()) return tar.status();
  return engine.PutArchive(container_id, "/", *tar);
}

Status RewriteAuthorizedKeys(Engine& engine, const std::string& container_id, const core::Pod& pod,
                             const std::string& keys) {
  const bool has_volume = pod.volume_gb > 0 && !pod.volume_mount_path.empty();
  if (has_volume) {
    Status put = PutAuthorizedKeys(engine, container_id, pod.volume_mount_path, keys);
    if (Gone(put)) return Status::Ok();
    if (!put.ok()) return put;
    if (pod.volume_mount_path == "/root") return Status::Ok();  // the same file
  }
  // Only a file that is there: Podman makes a missing directory of PutArchive's, and a key file
  // where the image's SSH server reads none would be a surprise. Docker answers NOT_FOUND instead.
  Result<ExecResult> found = engine.Exec(
      container_id, {"sh", "-c", "test -f " + std::string(kRootAuthorizedKeys)}, kCheckTimeout);
  if (!found.ok()) {
    // No sh (or no exec at all) is no file to rewrite; an engine that did not answer is asked
    // again.
    return found.status().code() == StatusCode::kUnavailable ? found.status() : Status::Ok();
  }
  if (found->exit_code != 0) return Status::Ok();
  Result<std::string> tar = MakeTar({TarEntry::File("authorized_keys", 0600, keys)});
  if (!tar.ok()) return tar.status();
  Status put = engine.PutArchive(container_id, "/root/.ssh", *tar);
  return Gone(put) ? Status::Ok() : put;
}

std::vector<StaleKeys> StaleAuthorizedKeys(const std::vector<wire::DesiredPod>& desired,
                                           const std::vector<ContainerInfo>& containers,
                                           const std::map<std::string, std::string>& written) {
  std::map<std::string, std::string> running;  // pod id -> its running container
  for (const ContainerInfo& container : containers) {
    const auto pod = container.labels.find(std::string(kPodLabel));
    if (container.running && pod != container.labels.end()) running[pod->second] = container.id;
  }
  std::vector<StaleKeys> stale;
  for (const wire::DesiredPod& entry : desired) {
    if (entry.pod.desired != core::DesiredState::kRunning) continue;
    const auto container = running.find(entry.pod.id);
    if (container == running.end()) continue;
    std::string keys = AuthorizedKeys(entry);
    const auto last = written.find(entry.pod.id);
    if (last != written.end() && last->second == keys) continue;
    stale.push_back({&entry, container->second, std::move(keys)});
  }
  return stale;
}

void FollowAuthorizedKeys(Engine& engine, const std::vector<wire::DesiredPod>& desired,
                          const std::vector<ContainerInfo>& containers,
                          std::map<std::string, std::string>& written,
                          const std::function<void(const std::string&)>& log) {
  for (StaleKeys& stale : StaleAuthorizedKeys(desired, containers, written)) {
    const std::string& pod_id = stale.pod->pod.id;
    if (Status put = RewriteAuthorizedKeys(engine, stale.container_id, stale.pod->pod, stale.keys);
        !put.ok()) {
      log("could not rewrite the SSH keys of " + pod_id + " (tried again): " + put.message());
      continue;
    }
    log("rewrote the SSH keys of " + pod_id + ": " +
        std::to_string(std::ranges::count(stale.keys, '\n')) + " now");
    written[pod_id] = std::move(stale.keys);
  }
  std::set<std::string> ids;
  for (const wire::DesiredPod& entry : desired) ids.insert(entry.pod.id);
  std::erase_if(written, [&ids](const auto& entry) { return !ids.contains(entry.first); });
}

}  // namespace suanli::agent
