// The host inventory: what this machine offers besides its GPUs (gpus.h), as the agent reports it
// when it registers and with each heartbeat.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "agent/gpus.h"

namespace suanli::agent {

struct HostResources {
  int vcpu = 0;       // hardware threads, at least 1
  int memory_gb = 0;  // physical memory, GiB rounded down
  int disk_gb = 0;    // GiB free to unprivileged users on the file system of `dir`; 0 if unknown
};

// The host name, or "node" when the system has none: the default name of the node.
std::string HostName();

// Reads the host's CPUs, memory and the free disk where `dir` (the state directory) lives. Never
// fails: what cannot be read is 0.
HostResources ReadResources(const std::filesystem::path& dir);

// A host with simulated GPUs (`suanli up` on a laptop) reports at least the vCPU and memory their
// pods take when they do not ask (sched::DefaultNeeds: 2 vCPU and 8 GB a GPU), oversubscribed on
// purpose: on a 2-core machine the first demo pod took both cores and the README's second command
// waited forever. Real GPUs are reported as they are.
HostResources WithRoomForSimulatedGpus(HostResources host, const std::vector<Gpu>& gpus);

}  // namespace suanli::agent
