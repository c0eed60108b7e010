#include "wire/views.h"

#include <boost/json/parse.hpp>
#include <charconv>

#include "billing/spend.h"
#include "core/pod_state.h"

namespace suanli::wire {
namespace {

namespace json = boost::json;
using core::FormatTime;

json::array ToArray(const std::vector<std::string>& items) {
  json::array out;
  for (const std::string& item : items) out.emplace_back(item);
  return out;
}

json::object ToObject(const std::map<std::string, std::string>& items) {
  json::object out;
  for (const auto& entry : items) out[entry.first] = entry.second;
  return out;
}

}  // namespace

std::string_view RoleName(core::Role role) { return role == core::Role::kAdmin ? "admin" : "user"; }

std::string_view DesiredStateName(core::DesiredState desired) {
  switch (desired) {
    case core::DesiredState::kRunning:
      return "running";
    case core::DesiredState::kStopped:
      return "stopped";
    case core::DesiredState::kTerminated:
      return "terminated";
  }
  return "running";
}

core::DesiredState ParseDesiredState(std::string_view name) {
  return name == "stopped"      ? core::DesiredState::kStopped
         : name == "terminated" ? core::DesiredState::kTerminated
                                : core::DesiredState::kRunning;
}

std::string_view LedgerKindName(core::LedgerKind kind) {
  switch (kind) {
    case core::LedgerKind::kCredit:
      return "credit";
    case core::LedgerKind::kGpu:
      return "gpu";
    case core::LedgerKind::kStorage:
      return "storage";
  }
  return "credit";
}

core::Result<core::PortSpec> ParsePort(std::string_view text) {
  const size_t slash = text.find('/');
  const std::string_view number = text.substr(0, slash);
  const std::string_view protocol =
      slash == std::string_view::npos ? "tcp" : text.substr(slash + 1);
  int port = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), port);
  if (error != std::errc() || end != number.data() + number.size() || port < 1 || port > 65535 ||
      (protocol != "tcp" && protocol != "http" && protocol != "udp")) {
    return core::InvalidArgumentError("port '" + std::string(text) +
                                      "' must look like 22/tcp, 8888/http or 5000/udp (1-65535)");
  }
  return core::PortSpec{port, std::string(protocol)};
}

std::string PortText(const core::PortSpec& port) {
  return std::to_string(port.container_port) + "/" + port.protocol;
}

json::array PortsView(const std::vector<core::PortSpec>& ports) {
  json::array out;
  for (const core::PortSpec& port : ports) out.emplace_back(PortText(port));
  return out;
}

int64_t UptimeSeconds(const core::Pod& pod, core::TimePoint now) {
  if (!pod.running_since || now < *pod.running_since) return 0;
  return std::chrono::duration_cast<std::chrono::seconds>(now - *pod.running_since).count();
}

json::array VolumeMountsView(const std::vector<core::VolumeMount>& mounts) {
  json::array out;
  for (const core::VolumeMount& mount : mounts) {
    json::object view{{"volume_id", mount.volume_id},
                      {"mount_path", mount.mount_path},
                      {"read_only", mount.read_only}};
    if (mount.shared) view["shared"] = true;  // only then: agents of before the backend read it
    if (mount.size_gb > 0) view["size_gb"] = mount.size_gb;
    out.push_back(std::move(view));
  }
  return out;
}

json::object UserView(const core::User& user) {
  return {{"id", user.id},
          {"name", user.name},
          {"role", RoleName(user.role)},
          {"balance_micros", user.balance.micros()},
          {"spend_cap_per_hour_micros", user.spend_cap_per_hour.micros()},
          {"created_at", FormatTime(user.created_at)},
          {"notices", ToArray(user.notices)},
          {"max_pods", user.max_pods},
          {"max_pending_pods", user.max_pending_pods},
          {"max_endpoints", user.max_endpoints},
          {"monthly_budget_micros", user.monthly_budget.micros()},
          {"budget_action", BudgetActionName(user.budget_action)}};
}

std::string_view BudgetActionName(core::BudgetAction action) {
  switch (action) {
    case core::BudgetAction::kNotify:
      return "notify";
    case core::BudgetAction::kStopInterruptible:
      return "stop_interruptible";
    case core::BudgetAction::kStopAll:
      return "stop_all";
  }
  return "notify";
}

std::optional<core::BudgetAction> ParseBudgetAction(std::string_view name) {
  for (core::BudgetAction action :
       {core::BudgetAction::kNotify, core::BudgetAction::kStopInterruptible,
        core::BudgetAction::kStopAll}) {
    if (BudgetActionName(action) == name) return action;
  }
  return std::nullopt;
}

json::object ApiTokenView(const core::ApiToken& token) {
  return {{"id", token.id},
          {"user_id", token.user_id},
          {"name", token.name},
          {"prefix", token.secret_prefix},
          {"created_at", FormatTime(token.created_at)},
          {"read_only", token.read_only},
          {"project_id", token.project_id}};
}

json::object SshKeyView(const core::SshKey& key) {
  return {{"id", key.id},
          {"user_id", key.user_id},
          {"name", key.name},
          {"public_key", key.public_key},
          {"fingerprint", key.fingerprint},
          {"created_at", FormatTime(key.created_at)}};
}

json::object TemplateView(const core::Template& spec) {
  return {{"id", spec.id},
          {"owner_id", spec.owner_id},
          {"public", spec.is_public},
          {"built_in", spec.owner_id.empty()},
          {"name", spec.name},
          {"description", spec.description},
          {"image", spec.image},
          {"command", ToArray(spec.command)},
          {"env", ToObject(spec.env)},
          {"ports", PortsView(spec.ports)},
          {"container_disk_gb", spec.container_disk_gb},
          {"volume_gb", spec.volume_gb},
          {"volume_mount_path", spec.volume_mount_path},
          {"created_at", FormatTime(spec.created_at)}};
}

json::object JoinTokenView(const core::JoinToken& token) {
  return {{"id", token.id},
          {"prefix", token.secret_prefix},
          {"note", token.note},
          {"created_at", FormatTime(token.created_at)},
          {"expires_at", FormatTime(token.expires_at)}};
}

json::object GpuHealthView(const core::GpuHealth& health) {
  json::object out{{"index", health.index}};
  if (health.utilization_percent >= 0) out["utilization_percent"] = health.utilization_percent;
  if (health.memory_used_gb >= 0) out["memory_used_gb"] = health.memory_used_gb;
  if (health.temperature_c >= 0) out["temperature_c"] = health.temperature_c;
  if (health.power_w >= 0) out["power_w"] = health.power_w;
  if (health.ecc_uncorrected_errors >= 0) {
    out["ecc_uncorrected_errors"] = health.ecc_uncorrected_errors;
  }
  if (health.xid_errors >= 0) {
    out["xid_errors"] = health.xid_errors;
    out["last_xid"] = health.last_xid;
  }
  if (!health.problem.empty()) out["problem"] = health.problem;
  return out;
}

json::object GpuMeasurementView(const core::GpuMeasurement& measurement) {
  json::object out{{"index", measurement.index},
                   {"memory_bandwidth_gbps", measurement.memory_bandwidth_gbps},
                   {"fp16_tflops", measurement.fp16_tflops}};
  if (measurement.bf16_tflops) out["bf16_tflops"] = *measurement.bf16_tflops;
  if (measurement.fp8_tflops) out["fp8_tflops"] = *measurement.fp8_tflops;
  return out;
}

json::object NodeView(const core::Node& node) {
  json::array gpus;
  for (const core::GpuDevice& gpu : node.gpus) {
    json::object device{{"index", gpu.index},         {"uuid", gpu.uuid},
                        {"type", gpu.type},           {"memory_gb", gpu.memory_gb},
                        {"simulated", gpu.simulated}, {"link_group", gpu.link_group}};
    if (!gpu.mig_profile.empty()) {
      device["mig_profile"] = gpu.mig_profile;
      device["capacity_milli"] = gpu.capacity_milli;
    }
    gpus.emplace_back(std::move(device));
  }
  json::array health;
  for (const core::GpuHealth& reading : node.gpu_health)
    health.emplace_back(GpuHealthView(reading));
  json::array measurements;
  for (const core::GpuMeasurement& gpu : node.gpu_measurements)
    measurements.emplace_back(GpuMeasurementView(gpu));
  return {{"id", node.id},
          {"name", node.name},
          {"state", node.state == core::NodeState::kReady ? "ready" : "unreachable"},
          {"cordoned", node.cordoned},
          {"draining", node.draining},
          {"labels", ToObject(node.labels)},
          {"gpus", std::move(gpus)},
          {"vcpu", node.vcpu},
          {"memory_gb", node.memory_gb},
          {"disk_gb", node.disk_gb},
          {"agent_version", node.agent_version},
          {"address", node.address},
          {"drain_reason", node.drain_reason},
          {"generation", node.generation},
          {"registered_at", FormatTime(node.registered_at)},
          {"last_heartbeat", FormatTime(node.last_heartbeat)},
          {"gpu_health", std::move(health)},
          {"gpu_measurements", std::move(measurements)}};
}

json::object TransitionView(const core::Transition& transition) {
  return {{"seq", transition.seq},
          {"pod_id", transition.pod_id},
          {"user_id", transition.user_id},
          {"at", FormatTime(transition.at)},
          {"from", core::PodStateName(transition.from)},
          {"to", core::PodStateName(transition.to)},
          {"node_id", transition.node_id},
          {"gpu_type", transition.gpu_type},
          {"gpu_count", transition.gpu_count},
          {"gpu_price_per_hour_micros", transition.gpu_price_per_hour.micros()},
          {"reason", transition.reason}};
}

json::object EventView(const core::Event& event) {
  // The detail is JSON the control plane wrote; should a row hold anything else, it is shown as
  // its text rather than failing the whole list.
  boost::system::error_code error;
  json::value detail = json::parse(event.detail, error);
  if (error || !detail.is_object()) detail = json::string(event.detail);
  return {{"id", event.seq},
          {"time", FormatTime(event.at)},
          {"kind", event.kind},
          {"object_id", event.object_id},
          {"user_id", event.user_id},
          {"message", event.message},
          {"detail", std::move(detail)}};
}

json::object AuditEntryView(const core::AuditEntry& entry) {
  return {{"id", entry.seq},          {"time", FormatTime(entry.at)},
          {"user_id", entry.user_id}, {"token_id", entry.token_id},
          {"action", entry.action},   {"object_id", entry.object_id},
          {"status", entry.status},   {"error_code", entry.error_code}};
}

json::object LedgerEntryView(const core::LedgerEntry& entry) {
  return {{"seq", entry.seq},
          {"user_id", entry.user_id},
          {"pod_id", entry.pod_id},
          {"kind", LedgerKindName(entry.kind)},
          {"amount_micros", entry.amount.micros()},
          {"from", FormatTime(entry.from)},
          {"to", FormatTime(entry.to)},
          {"at", FormatTime(entry.at)},
          {"note", entry.note}};
}

json::object PodViewWithoutTime(const core::Pod& pod) {
  json::array indices;
  for (int index : pod.gpu_indices) indices.emplace_back(index);
  json::array mappings;
  for (const core::PortMapping& mapping : pod.port_mappings) {
    mappings.emplace_back(json::object{{"container_port", mapping.container_port},
                                       {"protocol", mapping.protocol},
                                       {"host_port", mapping.host_port}});
  }
  json::array actions;
  if (pod.desired != core::DesiredState::kTerminated) {
    for (core::PodAction action : core::AllowedActions(pod.state)) {
      actions.emplace_back(core::PodActionName(action));
    }
  }
  const int64_t storage_per_month = pod.storage_price_per_gb_month.micros() * pod.volume_gb;
  json::object view{
      {"id", pod.id},
      {"owner_id", pod.owner_id},
      {"project_id", pod.project_id},
      {"created_by", pod.created_by.empty() ? pod.owner_id : pod.created_by},
      {"name", pod.name},
      {"template_id", pod.template_id},
      {"image", pod.image},
      {"command", ToArray(pod.command)},
      {"env", ToObject(pod.env)},
      {"ports", PortsView(pod.ports)},
      {"gpu_type", pod.gpu_type},
      {"gpu_count", pod.gpu_count},
      {"gpu_milli", pod.gpu_milli},
      {"vcpu", pod.vcpu},
      {"memory_gb", pod.memory_gb},
      {"container_disk_gb", pod.container_disk_gb},
      {"volume_gb", pod.volume_gb},
      {"volume_mount_path", pod.volume_mount_path},
      {"interruptible", pod.interruptible},
      {"stop_after_s", pod.stop_after_s},
      {"terminate_after_stopped_s", pod.terminate_after_stopped_s},
      {"idle_stop_after_s", pod.idle_stop_after_s},
      {"pre_stop_command", pod.pre_stop_command},
      {"priority", pod.priority},
      {"node_selector", ToObject(pod.node_selector)},
      {"sequence", pod.sequence},
      {"desired_state", DesiredStateName(pod.desired)},
      {"state", core::PodStateName(pod.state)},
      {"state_reason", pod.state_reason},
      {"state_since", FormatTime(pod.state_since)},
      {"ssh_host_key", pod.ssh_host_key},
      {"generation", pod.generation},
      {"report_seq", pod.report_seq},
      {"restarts", pod.restarts},
      {"node_id", pod.node_id},
      {"last_node_id", pod.last_node_id},
      {"gpu_indices", std::move(indices)},
      {"container_id", pod.container_id},
      {"port_mappings", std::move(mappings)},
      {"gpu_price_per_hour_micros", pod.gpu_price_per_hour.micros()},
      {"storage_price_per_gb_month_micros", pod.storage_price_per_gb_month.micros()},
      {"created_at", FormatTime(pod.created_at)},
      {"gpu_billed_to", FormatTime(pod.gpu_billed_to)},
      {"storage_billed_to", FormatTime(pod.storage_billed_to)},
      {"volume_confirmed_empty", pod.volume_confirmed_empty},
      {"ready", pod.ready},
      {"actions", std::move(actions)},
      {"storage_price_per_hour_micros",
       billing::StoragePerHour(pod.storage_price_per_gb_month, pod.volume_gb).micros()},
      {"storage_price_per_month_micros", storage_per_month}};
  view["running_since"] = pod.running_since ? json::value(FormatTime(*pod.running_since)) : nullptr;
  view["pull"] = pod.pull ? json::value(json::object{{"current_bytes", pod.pull->current_bytes},
                                                     {"total_bytes", pod.pull->total_bytes}})
                          : nullptr;
  view["volumes"] = VolumeMountsView(pod.volumes);
  json::array moves;
  for (const core::VolumeMove& move : pod.moves) {
    moves.push_back(json::object{{"id", move.id},
                                 {"volume", move.volume},
                                 {"from_node_id", move.from_node_id},
                                 {"started_at", FormatTime(move.started_at)}});
  }
  view["moves"] = std::move(moves);
  return view;
}

std::string_view VolumeStateName(core::VolumeState state) {
  switch (state) {
    case core::VolumeState::kMoving:
      return "moving";
    case core::VolumeState::kRestoring:
      return "restoring";
    case core::VolumeState::kAvailable:
      break;
  }
  return "available";
}

std::string_view SnapshotStateName(core::SnapshotState state) {
  switch (state) {
    case core::SnapshotState::kReady:
      return "ready";
    case core::SnapshotState::kFailed:
      return "failed";
    case core::SnapshotState::kCreating:
      break;
  }
  return "creating";
}

json::object SnapshotView(const core::Snapshot& snapshot) {
  const bool ready = snapshot.state == core::SnapshotState::kReady;
  return {{"id", snapshot.id},
          {"owner_id", snapshot.owner_id},
          {"project_id", snapshot.project_id},
          {"name", snapshot.name},
          {"volume_id", snapshot.volume_id},
          {"volume_name", snapshot.volume_name},
          {"volume_size_gb", snapshot.volume_size_gb},
          {"node_id", snapshot.node_id},
          {"state", SnapshotStateName(snapshot.state)},
          {"state_reason", snapshot.state_reason},
          {"size_bytes", snapshot.size_bytes},
          {"sha256", snapshot.sha256},
          {"storage_price_per_gb_month_micros", snapshot.storage_price_per_gb_month.micros()},
          {"storage_price_per_hour_micros",
           ready ? billing::StoragePerHour(snapshot.storage_price_per_gb_month,
                                           billing::SnapshotGigabytes(snapshot))
                       .micros()
                 : 0},
          {"created_at", FormatTime(snapshot.created_at)},
          {"cost_micros", snapshot.cost.micros()}};
}

json::object VolumeView(const core::Volume& volume, const VolumeUse& use) {
  json::array pods;
  for (const std::string& pod_id : use.pod_ids) pods.emplace_back(pod_id);
  return {{"id", volume.id},
          {"owner_id", volume.owner_id},
          {"project_id", volume.project_id},
          {"name", volume.name},
          {"size_gb", volume.size_gb},
          {"home_node_id", volume.home_node_id},
          {"home_node", use.home_node_name},
          {"shared", volume.home_node_id == core::kAnyNode},
          {"state", VolumeStateName(volume.state)},
          {"moving_to_node_id", volume.moving_to_node_id},
          {"restored_from", volume.restored_from},
          {"attached_to", std::move(pods)},
          {"attached_read_write", use.read_write},
          {"storage_price_per_gb_month_micros", volume.storage_price_per_gb_month.micros()},
          {"storage_price_per_hour_micros",
           billing::StoragePerHour(volume.storage_price_per_gb_month, volume.size_gb).micros()},
          {"created_at", FormatTime(volume.created_at)},
          {"cost_micros", use.cost.micros()}};
}

json::object PodListViewWithoutTime(const core::Pod& pod) {
  json::object full = PodViewWithoutTime(pod);
  json::object compact;
  for (std::string_view key : {"id",
                               "owner_id",
                               "project_id",
                               "name",
                               "template_id",
                               "image",
                               "gpu_type",
                               "gpu_count",
                               "gpu_milli",
                               "interruptible",
                               "stop_after_s",
                               "terminate_after_stopped_s",
                               "idle_stop_after_s",
                               "desired_state",
                               "state",
                               "state_reason",
                               "state_since",
                               "ready",
                               "node_id",
                               "gpu_price_per_hour_micros",
                               "storage_price_per_hour_micros",
                               "created_at",
                               "actions"}) {
    compact[key] = std::move(full[key]);
  }
  return compact;
}

void AddPodViewContext(const core::Pod& pod, const PodViewContext& context, json::object& view) {
  if (context.with_jupyter_token) view["jupyter_token"] = pod.jupyter_token;
  if (context.with_link_token) view["link_token"] = pod.link_token;
  view["node_address"] = context.node_address;
  view["cost_micros"] = pod.cost.micros();
  view["uptime_s"] = UptimeSeconds(pod, context.now);
}

json::object PodView(const core::Pod& pod, const PodViewContext& context) {
  json::object view = PodViewWithoutTime(pod);
  AddPodViewContext(pod, context, view);
  return view;
}

}  // namespace suanli::wire
