// Routes of the node agent's protocol: it registers with a join token, reports its node's
// resources, long-polls for the pods it should run, and reports each pod's actual state.
#include <fmt/format.h>

#include <boost/json/value.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "server/domain_json.h"
#include "server/json_fields.h"
#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

// Reads `fields` of a node report (registration and heartbeat).
NodeReport ReadNodeReport(JsonFields& fields, bool with_name) {
  NodeReport report;
  if (with_name) fields.String("name", &report.name, true, 64);
  fields.Int("vcpu", &report.vcpu, 0, 100'000);
  fields.Int("memory_gb", &report.memory_gb, 0, 100'000'000);
  fields.Int("disk_gb", &report.disk_gb, 0, 1'000'000'000);
  fields.String("agent_version", &report.agent_version, false, 64);
  fields.String("address", &report.address, false, 253);
  fields.StringMap("labels", &report.labels, 64);
  fields.Objects("gpus", 64, [&report](JsonFields& gpu) {
    core::GpuDevice device;
    gpu.Int("index", &device.index, 0, 63, true);
    gpu.String("uuid", &device.uuid, false, 128);
    gpu.String("type", &device.type, true, 128);
    int memory_mb = 0;
    gpu.Int("memory_mb", &memory_mb, 0, 10'000'000);
    device.memory_gb = memory_mb / 1024.0;
    gpu.Bool("simulated", &device.simulated);
    report.gpus.push_back(std::move(device));
  });
  fields.Objects("gpu_health", 64, [&report](JsonFields& reading) {
    core::GpuHealth gpu;
    reading.Int("index", &gpu.index, 0, 63, true);
    reading.Int("utilization_percent", &gpu.utilization_percent, 0, 100);
    reading.Number("memory_used_gb", &gpu.memory_used_gb, 0, 1e6);
    reading.Int("temperature_c", &gpu.temperature_c, 0, 200);
    reading.Number("power_w", &gpu.power_w, 0, 1e5);
    reading.Int64("ecc_uncorrected_errors", &gpu.ecc_uncorrected_errors, 0, INT64_MAX);
    reading.Int64("xid_errors", &gpu.xid_errors, 0, INT64_MAX);
    reading.Int("last_xid", &gpu.last_xid, 0, 1'000'000);
    reading.String("problem", &gpu.problem, false, 256);
    report.gpu_health.push_back(std::move(gpu));
  });
  return report;
}

void RegisterNode(Call& call) {
  // Who is calling comes first: a stranger learns nothing about what a good body looks like.
  if (Status token = call.plane().CheckJoinToken(call.bearer); !token.ok()) {
    return call.Respond(token);
  }
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  NodeReport report = ReadNodeReport(fields, true);
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  if (report.address.empty()) report.address = call.request.remote_address;
  call.Respond(
      call.plane().RegisterNode(call.bearer, std::move(report)),
      [](const std::pair<core::Node, std::string>& registered) {
        return json::object{{"node", NodeView(registered.first)}, {"token", registered.second}};
      },
      201);
}

void Heartbeat(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  NodeReport report = ReadNodeReport(fields, false);
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  if (report.address.empty()) report.address = call.request.remote_address;
  call.Respond(call.plane().Heartbeat(call.principal, std::move(report)), NodeView);
}

void AgentPods(Call& call) {
  int64_t after = -1;
  int64_t wait_s = 0;
  // Absent: the default; present: an integer from -1 (after: none seen yet) to `max`.
  const auto number = [&](std::string_view name, int64_t* out, int64_t max) {
    const std::optional<std::string> text = call.request.QueryValue(name);
    if (!text) return true;
    const std::optional<int64_t> value = ParseInteger(*text, -1, max);
    if (value) *out = *value;
    return value.has_value();
  };
  if (!number("after", &after, INT64_MAX) ||
      !number("wait_s", &wait_s, call.plane().long_poll_limit_s())) {
    return call.Respond(core::InvalidArgumentError(fmt::format(
        "after must be a generation and wait_s 0 to {}", call.plane().long_poll_limit_s())));
  }
  auto shared = std::make_shared<Call>(std::move(call));
  auto answer = [shared] {
    Result<DesiredPods> desired = shared->plane().DesiredFor(shared->principal);
    if (!desired.ok()) return shared->Respond(desired.status());
    json::array pods;
    for (const core::Pod& pod : desired->pods) {
      json::object view = PodView(*shared, pod);
      json::array keys;
      for (const std::string& key : desired->ssh_keys[pod.owner_id]) keys.emplace_back(key);
      view["ssh_keys"] = std::move(keys);
      pods.emplace_back(std::move(view));
    }
    // A binding is durable before an agent sees it.
    shared->Respond(
        json::value(json::object{{"generation", desired->generation}, {"pods", std::move(pods)}}),
        shared->queue().submitted());
  };
  shared->plane().WhenNodeChanges(shared->principal, after,
                                  shared->clock().Now() + std::chrono::seconds(wait_s),
                                  std::move(answer));
}

void ReportPod(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  PodReport report;
  std::string state, at;
  fields.Int64("seq", &report.seq, 1, INT64_MAX, true);
  fields.String("state", &state, true, 32);
  fields.String("at", &at, true, 40);
  fields.String("container_id", &report.container_id, false, 128);
  fields.String("message", &report.message, false, 1024);
  if (fields.Raw("ready") != nullptr) {
    bool ready = false;
    fields.Bool("ready", &ready);
    report.ready = ready;
  }
  core::PullProgress progress;
  if (fields.Object("pull", [&progress](JsonFields& pull) {
        pull.Int64("current_bytes", &progress.current_bytes, 0, INT64_MAX, true);
        pull.Int64("total_bytes", &progress.total_bytes, 0, INT64_MAX, true);
      })) {
    report.pull = progress;
  }
  int exit_code = 0;
  if (fields.Raw("exit_code") != nullptr) {
    fields.Int("exit_code", &exit_code, -1'000'000, 1'000'000);
    report.exit_code = exit_code;
  }
  fields.Objects("port_mappings", 64, [&report](JsonFields& mapping) {
    core::PortMapping parsed;
    mapping.Int("container_port", &parsed.container_port, 1, 65535, true);
    mapping.String("protocol", &parsed.protocol, true, 8);
    mapping.Int("host_port", &parsed.host_port, 1, 65535, true);
    report.port_mappings.push_back(std::move(parsed));
  });
  if (fields.ok()) {
    Result<core::PodState> parsed_state = core::ParsePodState(state);
    if (!parsed_state.ok() || *parsed_state == core::PodState::kPending) {
      fields.Fail(
          "state: must be starting, running, stopping, stopped, exited, failed or "
          "terminated");
    } else {
      report.state = *parsed_state;
    }
    Result<core::TimePoint> parsed_at = ParseTime(at);
    if (!parsed_at.ok()) {
      fields.Fail("at: " + parsed_at.status().message());
    } else {
      report.at = *parsed_at;
    }
  }
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(call.plane().ReportPod(call.principal, call.param(0), report),
               [&call](const core::Pod& pod) { return PodView(call, pod); });
}

// clang-format off
constexpr Route kAgentRoutes[] = {
  {{"POST", "/v1/agent/register", Access::kJoin, "Agent: register a node"}, RegisterNode},
  {{"POST", "/v1/agent/heartbeat", Access::kNode, "Agent: report the node's resources"}, Heartbeat},
  {{"GET", "/v1/agent/pods", Access::kNode, "Agent: the node's desired pods (?after=GEN&wait_s=N long-polls)"}, AgentPods},
  {{"POST", "/v1/agent/pods/{id}/status", Access::kNode, "Agent: report a pod's actual state"}, ReportPod},
};
// clang-format on

}  // namespace

std::span<const Route> AgentRoutes() { return kAgentRoutes; }

}  // namespace suanli::server
