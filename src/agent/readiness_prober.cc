#include "agent/readiness_prober.h"

#include <algorithm>
#include <map>
#include <utility>

#include "agent/readiness_probe.h"

namespace suanli::agent {

ReadinessProber::ReadinessProber(AgentContext& context, StatusReporter& reporter, PortCheck check)
    : context_(context), reporter_(reporter), check_(check ? std::move(check) : PortAnswers) {}

void ReadinessProber::Probe() {
  const std::map<std::string, UnreadyPod> unready = reporter_.Unready();
  const std::string address = context_.ProbeAddress();
  for (const auto& [pod_id, pod] : unready) {
    const bool all_answer =
        std::all_of(pod.ports.begin(), pod.ports.end(),
                    [&](const core::PortMapping& port) { return check_(address, port); });
    if (!all_answer) continue;
    {
      PodReportFields report(pod_id, core::PodState::kRunning, context_.clock().Now());
      report.container_id = pod.container_id;
      report.port_mappings = pod.ports;
      report.ready = true;
      reporter_.Queue(report);
    }
    context_.Log(pod_id + " is ready: its ports answer");
  }
}

}  // namespace suanli::agent
