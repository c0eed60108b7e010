#include "agent/activity.h"

#include <charconv>
#include <chrono>

#include "agent/reconcile.h"

namespace suanli::agent {

int CountEstablished(std::string_view text, int port) {
  int count = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    // "  0: 0100007F:1F90 0100007F:A1B2 01 ...": sl, local address:port, remote, state (hex).
    std::vector<std::string_view> fields;
    size_t i = 0;
    while (i < line.size() && fields.size() < 4) {
      while (i < line.size() && line[i] == ' ') ++i;
      const size_t field_start = i;
      while (i < line.size() && line[i] != ' ') ++i;
      if (i > field_start) fields.push_back(line.substr(field_start, i - field_start));
    }
    if (fields.size() < 4 || fields[3] != "01") continue;
    const size_t colon = fields[1].rfind(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view hex = fields[1].substr(colon + 1);
    int local_port = 0;
    const auto [end_ptr, error] =
        std::from_chars(hex.data(), hex.data() + hex.size(), local_port, 16);
    if (error != std::errc() || end_ptr != hex.data() + hex.size()) continue;
    if (local_port == port) ++count;
  }
  return count;
}

double CpuPercent(uint64_t before_ns, uint64_t after_ns, core::Duration wall) {
  const auto wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count();
  if (wall_ns <= 0 || after_ns < before_ns) return 0;
  return 100.0 * static_cast<double>(after_ns - before_ns) / static_cast<double>(wall_ns);
}

std::vector<wire::PodActivity> ActivitySampler::Sample(const std::vector<std::string>& pod_ids) {
  std::vector<wire::PodActivity> out;
  std::map<std::string, Reading> next;
  std::string tcp;  // read once, only when a pod publishes SSH
  bool tcp_read = false;
  for (const std::string& pod_id : pod_ids) {
    const std::string name = ContainerName(pod_id);
    core::Result<ContainerInfo> info = engine_.Inspect(name);
    if (!info.ok() || !info->running) continue;
    core::Result<uint64_t> cpu = engine_.CpuUsage(name);
    if (!cpu.ok()) continue;
    const core::TimePoint now = clock_.Now();
    wire::PodActivity activity;
    activity.pod_id = pod_id;
    if (const auto last = last_.find(pod_id); last != last_.end()) {
      activity.cpu_percent = CpuPercent(last->second.cpu_ns, *cpu, now - last->second.at);
    }
    next[pod_id] = {*cpu, now};
    activity.ssh_known = false;
    for (const PublishedPort& port : info->ports) {
      if (port.container_port != 22 || port.protocol != "tcp" || port.host_port <= 0) continue;
      if (!tcp_read) {
        tcp = read_file_("/proc/net/tcp") + read_file_("/proc/net/tcp6");
        tcp_read = true;
      }
      activity.ssh_known = !tcp.empty();
      activity.ssh_sessions += CountEstablished(tcp, port.host_port);
    }
    out.push_back(std::move(activity));
  }
  last_ = std::move(next);
  return out;
}

}  // namespace suanli::agent
