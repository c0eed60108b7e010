#include "agent/host_inventory.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <thread>

namespace suanli::agent {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "node";
  return name;
}

HostResources ReadResources(const std::filesystem::path& dir) {
  HostResources resources;
  resources.vcpu = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) {
    resources.memory_gb = static_cast<int>((static_cast<int64_t>(pages) * page_size) >> 30);
  }
  struct statvfs disk {};
  if (statvfs(dir.c_str(), &disk) == 0) {
    resources.disk_gb =
        static_cast<int>((static_cast<int64_t>(disk.f_bavail) * disk.f_frsize) >> 30);
  }
  return resources;
}

HostResources WithRoomForSimulatedGpus(HostResources host, const std::vector<Gpu>& gpus) {
  const int simulated_gpus = static_cast<int>(std::ranges::count_if(gpus, &Gpu::simulated));
  if (simulated_gpus == 0) return host;
  host.vcpu = std::max(host.vcpu, 2 * simulated_gpus);
  host.memory_gb = std::max(host.memory_gb, 8 * simulated_gpus);
  return host;
}

}  // namespace suanli::agent
