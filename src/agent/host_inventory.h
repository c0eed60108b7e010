// The host inventory: what this machine offers besides its GPUs (gpus.h), as the agent reports it
// when it registers and with each heartbeat.
#pragma once

#include <filesystem>
#include <string>

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

}  // namespace suanli::agent
