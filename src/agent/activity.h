// What the agent tells the server about its running pods' use, for the idle rule
// (billing/auto_stop.h): CPU from the engine's stats, open SSH sessions from the host's TCP table.
// GPU use is in the heartbeat's gpu_health already (NVML), which the server maps to the pod.
//
// SSH: a pod's sshd listens on its 22/tcp, published on a host port; a session is an ESTABLISHED
// TCP connection whose local port is that host port in /proc/net/tcp or tcp6 (the agent runs in
// the host's network namespace, where Docker's and Podman's port forwarders accept the
// connection). A pod that publishes no 22/tcp has ssh_known false: SSH cannot be its activity.
//
// Thread-compatible: one ActivitySampler per heartbeat thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agent/engine.h"
#include "core/clock.h"
#include "wire/agent_protocol.h"

namespace suanli::agent {

// ESTABLISHED (state 01) connections in a /proc/net/tcp or tcp6 text whose local port is `port`.
// Lines that do not parse are skipped.
int CountEstablished(std::string_view proc_net_tcp, int port);

// CPU use between two readings of a container's CPU time (nanoseconds), in percent of one CPU
// over `wall`; 0 when `wall` is not positive or the counter went back (a restart).
double CpuPercent(uint64_t before_ns, uint64_t after_ns, core::Duration wall);

class ActivitySampler {
 public:
  // `read_file` returns a file's text ("" when unreadable): /proc/net/tcp and tcp6.
  ActivitySampler(Engine& engine, const core::Clock& clock,
                  std::function<std::string(const std::string&)> read_file)
      : engine_(engine), clock_(clock), read_file_(std::move(read_file)) {}
  ActivitySampler(const ActivitySampler&) = delete;
  ActivitySampler& operator=(const ActivitySampler&) = delete;

  // One sample of each of `pod_ids` whose container runs. A pod's first sample has no CPU
  // figure yet (0); pods not asked for are forgotten.
  std::vector<wire::PodActivity> Sample(const std::vector<std::string>& pod_ids);

 private:
  struct Reading {
    uint64_t cpu_ns = 0;
    core::TimePoint at;
  };

  Engine& engine_;
  const core::Clock& clock_;
  std::function<std::string(const std::string&)> read_file_;
  std::map<std::string, Reading> last_;  // by pod id
};

}  // namespace suanli::agent
