// SSH keys in a pod: authorized_keys written where the pod's SSH server reads it, when its
// container is created and again whenever its holder's keys change while it runs (a project member
// removed, a key added or deleted), so that a removed member's key leaves a running pod within
// seconds rather than at its next start (docs/agent.md, "SSH").
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "agent/engine.h"
#include "core/domain.h"
#include "core/status.h"
#include "wire/agent_protocol.h"

namespace suanli::agent {

// Where images of the RunPod kind keep the keys their entrypoint copies from PUBLIC_KEY.
inline constexpr std::string_view kRootAuthorizedKeys = "/root/.ssh/authorized_keys";

// Writes `keys` (AuthorizedKeys: one a line) as .ssh/authorized_keys (0600, in a 0700 .ssh) under
// `volume_path`, the pod's volume, through the engine's archive API: at the container's creation,
// before it starts.
core::Status PutAuthorizedKeys(Engine& engine, const std::string& container_id,
                               const std::string& volume_path, const std::string& keys);

// Writes the pod's own SSH host key (core::Pod::ssh_host_key_seed, net/ssh_host_key.h) where
// OpenSSH (/etc/ssh/ssh_host_ed25519_key and its .pub) and Dropbear
// (/etc/dropbear/dropbear_ed25519_host_key) look for one, into a created container before it
// starts: both keep a key they find and make only the types they lack. OK and nothing written for
// a pod without one.
core::Status PutHostKey(Engine& engine, const std::string& container_id, const core::Pod& pod);

// A running container's keys made `keys` (even none): the volume's file as at its creation, when
// the pod has a volume, and kRootAuthorizedKeys when the container has that file (asked with
// `sh -c 'test -f ...'`; an image without sh has none). UNAVAILABLE when the engine did not answer
// (try again); a container that is gone or stopped meanwhile is OK (nothing runs to rewrite).
core::Status RewriteAuthorizedKeys(Engine& engine, const std::string& container_id,
                                   const core::Pod& pod, const std::string& keys);

// A running pod whose container holds other keys than its holder's now.
struct StaleKeys {
  const wire::DesiredPod* pod = nullptr;
  std::string container_id;
  std::string keys;  // AuthorizedKeys(*pod)
};

// The pods that should run and do (a running container of `containers`, this node's), whose keys
// differ from those `written` (by pod id) says went into them last; a pod missing from `written`
// (after the agent restarted) is stale. Pure: the caller writes them, and notes what it wrote.
std::vector<StaleKeys> StaleAuthorizedKeys(const std::vector<wire::DesiredPod>& desired,
                                           const std::vector<ContainerInfo>& containers,
                                           const std::map<std::string, std::string>& written);

// One pass of keeping running pods' keys their holders' (on the agent's reconcile thread): each
// stale pod's keys rewritten, and noted in `written`, which also loses the pods no longer desired.
// A failure is given to `log` and leaves the pod stale, so the next pass tries again; it never
// fails the pod (PUBLIC_KEY and the keys written before stay as they were).
void FollowAuthorizedKeys(Engine& engine, const std::vector<wire::DesiredPod>& desired,
                          const std::vector<ContainerInfo>& containers,
                          std::map<std::string, std::string>& written,
                          const std::function<void(const std::string&)>& log);

}  // namespace suanli::agent
