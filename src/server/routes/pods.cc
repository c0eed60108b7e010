// Routes for a person's pods: create, read, the lifecycle actions, and the state changes. (Logs
// and the proxy to a pod's ports are relayed to its node: relay.cc.)
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "wire/agent_protocol.h"
#include "wire/json_fields.h"
#include "wire/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

// A page holds at most this many pods; without ?limit=, kDefaultPodPage.
constexpr int64_t kMaxPodPage = 1000;
constexpr int64_t kDefaultPodPage = 500;

void ListPods(Call& call) {
  PodPage page;
  page.after = call.request.QueryValue("after").value_or("");
  const std::optional<std::string> limit = call.request.QueryValue("limit");
  const std::optional<int64_t> parsed =
      limit ? ParseInteger(*limit, 1, kMaxPodPage) : std::optional<int64_t>(kDefaultPodPage);
  if (!parsed) {
    return call.Respond(core::InvalidArgumentError("limit must be a whole number from 1 to " +
                                                   std::to_string(kMaxPodPage) + ", not '" +
                                                   *limit + "'"));
  }
  page.limit = static_cast<size_t>(*parsed);
  page.project = call.request.QueryValue("project").value_or("");
  const std::string view = call.request.QueryValue("view").value_or("full");
  if (view != "full" && view != "compact") {
    return call.Respond(
        core::InvalidArgumentError("view must be full or compact, not '" + view + "'"));
  }
  // The hot read: written from views cached per pod revision.
  call.Respond(call.pod_list().Json(call.plane(), call.principal, call.clock().Now(), page,
                                    view == "full" ? PodList::View::kFull : PodList::View::kCompact,
                                    call.request.Header("if-none-match")));
}

void CreatePod(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  PodSpec spec;
  fields.String("name", &spec.name, {.max_length = 64});
  fields.String("template", &spec.template_id, {.max_length = 64});
  fields.String("project", &spec.project, {.max_length = 64});
  fields.String("image", &spec.image, {.max_length = 512});
  fields.OptionalStringList("command", &spec.command);
  fields.StringMap("env", &spec.env);
  bool has_ports = false;
  std::vector<core::PortSpec> ports = ReadPorts(fields, &has_ports);
  if (has_ports) spec.ports = std::move(ports);
  fields.String("gpu_type", &spec.gpu_type, {.max_length = 128});
  ReadGpuCount(fields, &spec.gpu_count, &spec.gpu_milli);
  fields.OptionalInt("vcpu", &spec.vcpu, {1, 1024});
  fields.OptionalInt("memory_gb", &spec.memory_gb, {1, 16'384});
  fields.OptionalInt("container_disk_gb", &spec.container_disk_gb, {1, 10'000});
  fields.OptionalInt("volume_gb", &spec.volume_gb, {0, 100'000});
  std::string mount;
  fields.String("volume_mount_path", &mount, {.max_length = 256});
  if (!mount.empty()) spec.volume_mount_path = mount;
  fields.Bool("interruptible", &spec.interruptible);
  ReadDuration(fields, "stop_after", &spec.stop_after_s);
  ReadDuration(fields, "idle_stop_after", &spec.idle_stop_after_s);
  ReadDuration(fields, "terminate_after_stopped", &spec.terminate_after_stopped_s);
  fields.Bool("terminate_deletes_volume", &spec.terminate_deletes_volume);
  fields.String("pre_stop_command", &spec.pre_stop_command, {.max_length = 4096});
  fields.Bool("queue", &spec.queue);
  fields.StringMap("node_selector", &spec.node_selector, 32);
  spec.volumes = ReadVolumeRequests(fields).value_or(std::vector<VolumeRequest>{});
  spec.workload = ReadWorkload(fields, call.zoo());
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(
      call.plane().CreatePod(call.principal, std::move(spec)),
      [&call](const core::Pod& pod) { return PodView(call, pod); }, 201);
}

void GetPod(Call& call) {
  call.Respond(call.plane().GetPod(call.principal, call.param(0)),
               [&call](const core::Pod& pod) { return PodView(call, pod); });
}

void ActOnPod(Call& call, core::PodAction action) {
  const bool force = call.request.QueryValue("force").value_or("") == "true";
  call.Respond(call.plane().Act(call.principal, call.param(0), action, force),
               [&call](const core::Pod& pod) { return PodView(call, pod); });
}

void StopPod(Call& call) { ActOnPod(call, core::PodAction::kStop); }

void StartPod(Call& call) { ActOnPod(call, core::PodAction::kStart); }

void RestartPod(Call& call) { ActOnPod(call, core::PodAction::kRestart); }

void TerminatePod(Call& call) { ActOnPod(call, core::PodAction::kTerminate); }

void PodTransitions(Call& call) {
  Result<std::vector<core::Transition>> transitions =
      call.plane().Transitions(call.principal, call.param(0));
  if (!transitions.ok()) return call.Respond(transitions.status());
  call.Respond(ListOf("transitions", *transitions, wire::TransitionView), call.queue().submitted());
}

// clang-format off
constexpr Route kPodRoutes[] = {
  {{"GET", "/v1/pods", RouteAccess::kUser, "Your pods"}, ListPods},
  {{"POST", "/v1/pods", RouteAccess::kUser, "Create a pod"}, CreatePod},
  {{"GET", "/v1/pods/{id}", RouteAccess::kUser, "A pod, with the actions allowed now"}, GetPod},
  {{"POST", "/v1/pods/{id}/stop", RouteAccess::kUser, "Stop a pod (its volume is kept and billed)"}, StopPod},
  {{"POST", "/v1/pods/{id}/start", RouteAccess::kUser, "Start a stopped pod"}, StartPod},
  {{"POST", "/v1/pods/{id}/restart", RouteAccess::kUser, "Restart a running pod's container"}, RestartPod},
  {{"DELETE", "/v1/pods/{id}", RouteAccess::kUser, "Terminate a pod (?force=true deletes its volume)"}, TerminatePod},
  {{"GET", "/v1/pods/{id}/transitions", RouteAccess::kUser, "A pod's state changes"}, PodTransitions},
};
// clang-format on

}  // namespace

std::span<const Route> PodRoutes() { return kPodRoutes; }

}  // namespace suanli::server
