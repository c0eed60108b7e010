#include "server/domain_json.h"

#include <charconv>
#include <cstdio>
#include <ctime>

namespace suanli::server {
namespace {

namespace json = boost::json;

// Lenient readers for documents the server wrote: a missing or mistyped field keeps the default.
std::string Str(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}
int64_t Int(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr) return 0;
  if (value->is_int64()) return value->as_int64();
  if (value->is_uint64()) return static_cast<int64_t>(value->as_uint64());
  return 0;
}
int Int32(const json::object& object, std::string_view key) {
  return static_cast<int>(Int(object, key));
}
bool Bool(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_bool() && value->as_bool();
}
core::Money Micros(const json::object& object, std::string_view key) {
  return core::Money::FromMicros(Int(object, key));
}
core::TimePoint Time(const json::object& object, std::string_view key) {
  core::Result<core::TimePoint> time = ParseTime(Str(object, key));
  return time.ok() ? *time : core::TimePoint{};
}
std::vector<std::string> Strings(const json::object& object, std::string_view key) {
  std::vector<std::string> out;
  if (const json::value* value = object.if_contains(key); value != nullptr && value->is_array()) {
    for (const json::value& item : value->as_array()) {
      if (item.is_string()) out.emplace_back(item.as_string());
    }
  }
  return out;
}
std::map<std::string, std::string> StringMap(const json::object& object, std::string_view key) {
  std::map<std::string, std::string> out;
  if (const json::value* value = object.if_contains(key); value != nullptr && value->is_object()) {
    for (const auto& entry : value->as_object()) {
      if (entry.value().is_string()) out[entry.key()] = std::string(entry.value().as_string());
    }
  }
  return out;
}
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
std::vector<core::PortSpec> Ports(const json::object& object) {
  std::vector<core::PortSpec> out;
  for (const std::string& text : Strings(object, "ports")) {
    if (core::Result<core::PortSpec> port = ParsePort(text); port.ok()) out.push_back(*port);
  }
  return out;
}

}  // namespace

core::TimePoint TruncateToMillis(core::TimePoint time) {
  return core::TimePoint(
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()));
}

int64_t UptimeSeconds(const core::Pod& pod, core::TimePoint now) {
  if (!pod.running_since || now < *pod.running_since) return 0;
  return std::chrono::duration_cast<std::chrono::seconds>(now - *pod.running_since).count();
}

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

json::array PortsToJson(const std::vector<core::PortSpec>& ports) {
  json::array out;
  for (const core::PortSpec& port : ports) out.emplace_back(PortText(port));
  return out;
}

json::object ToJson(const core::User& user) {
  return {{"id", user.id},
          {"name", user.name},
          {"role", RoleName(user.role)},
          {"balance_micros", user.balance.micros()},
          {"spend_cap_per_hour_micros", user.spend_cap_per_hour.micros()},
          {"created_at", FormatTime(user.created_at)},
          {"notices", ToArray(user.notices)}};
}

core::Result<core::User> UserFromJson(const json::object& json) {
  core::User user;
  user.id = Str(json, "id");
  user.name = Str(json, "name");
  user.role = Str(json, "role") == "admin" ? core::Role::kAdmin : core::Role::kUser;
  user.balance = Micros(json, "balance_micros");
  user.spend_cap_per_hour = Micros(json, "spend_cap_per_hour_micros");
  user.created_at = Time(json, "created_at");
  user.notices = Strings(json, "notices");
  return user;
}

json::object ToJson(const core::ApiToken& token) {
  return {{"id", token.id},
          {"user_id", token.user_id},
          {"name", token.name},
          {"secret_hash", token.secret_hash},
          {"prefix", token.secret_prefix},
          {"created_at", FormatTime(token.created_at)}};
}

core::Result<core::ApiToken> ApiTokenFromJson(const json::object& json) {
  core::ApiToken token;
  token.id = Str(json, "id");
  token.user_id = Str(json, "user_id");
  token.name = Str(json, "name");
  token.secret_hash = Str(json, "secret_hash");
  token.secret_prefix = Str(json, "prefix");
  token.created_at = Time(json, "created_at");
  return token;
}

json::object ToJson(const core::SshKey& key) {
  return {{"id", key.id},
          {"user_id", key.user_id},
          {"name", key.name},
          {"public_key", key.public_key},
          {"fingerprint", key.fingerprint},
          {"created_at", FormatTime(key.created_at)}};
}

core::Result<core::SshKey> SshKeyFromJson(const json::object& json) {
  core::SshKey key;
  key.id = Str(json, "id");
  key.user_id = Str(json, "user_id");
  key.name = Str(json, "name");
  key.public_key = Str(json, "public_key");
  key.fingerprint = Str(json, "fingerprint");
  key.created_at = Time(json, "created_at");
  return key;
}

json::object ToJson(const core::Template& spec) {
  return {{"id", spec.id},
          {"owner_id", spec.owner_id},
          {"public", spec.is_public},
          {"built_in", spec.owner_id.empty()},
          {"name", spec.name},
          {"description", spec.description},
          {"image", spec.image},
          {"command", ToArray(spec.command)},
          {"env", ToObject(spec.env)},
          {"ports", PortsToJson(spec.ports)},
          {"container_disk_gb", spec.container_disk_gb},
          {"volume_gb", spec.volume_gb},
          {"volume_mount_path", spec.volume_mount_path},
          {"created_at", FormatTime(spec.created_at)}};
}

core::Result<core::Template> TemplateFromJson(const json::object& json) {
  core::Template spec;
  spec.id = Str(json, "id");
  spec.owner_id = Str(json, "owner_id");
  spec.is_public = Bool(json, "public");
  spec.name = Str(json, "name");
  spec.description = Str(json, "description");
  spec.image = Str(json, "image");
  spec.command = Strings(json, "command");
  spec.env = StringMap(json, "env");
  spec.ports = Ports(json);
  spec.container_disk_gb = Int32(json, "container_disk_gb");
  spec.volume_gb = Int32(json, "volume_gb");
  spec.volume_mount_path = Str(json, "volume_mount_path");
  spec.created_at = Time(json, "created_at");
  return spec;
}

json::object ToJson(const core::Pod& pod) {
  json::array indices;
  for (int index : pod.gpu_indices) indices.emplace_back(index);
  json::array mappings;
  for (const core::PortMapping& mapping : pod.port_mappings) {
    mappings.emplace_back(json::object{{"container_port", mapping.container_port},
                                       {"protocol", mapping.protocol},
                                       {"host_port", mapping.host_port}});
  }
  json::object out{{"id", pod.id},
                   {"owner_id", pod.owner_id},
                   {"name", pod.name},
                   {"template_id", pod.template_id},
                   {"image", pod.image},
                   {"command", ToArray(pod.command)},
                   {"env", ToObject(pod.env)},
                   {"ports", PortsToJson(pod.ports)},
                   {"gpu_type", pod.gpu_type},
                   {"gpu_count", pod.gpu_count},
                   {"vcpu", pod.vcpu},
                   {"memory_gb", pod.memory_gb},
                   {"container_disk_gb", pod.container_disk_gb},
                   {"volume_gb", pod.volume_gb},
                   {"volume_mount_path", pod.volume_mount_path},
                   {"interruptible", pod.interruptible},
                   {"priority", pod.priority},
                   {"node_selector", ToObject(pod.node_selector)},
                   {"sequence", pod.sequence},
                   {"desired_state", DesiredStateName(pod.desired)},
                   {"state", core::PodStateName(pod.state)},
                   {"state_reason", pod.state_reason},
                   {"state_since", FormatTime(pod.state_since)},
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
                   {"cost_micros", pod.cost.micros()},
                   {"volume_confirmed_empty", pod.volume_confirmed_empty},
                   {"ready", pod.ready},
                   {"jupyter_token", pod.jupyter_token},
                   {"link_token", pod.link_token}};
  out["running_since"] = pod.running_since ? json::value(FormatTime(*pod.running_since)) : nullptr;
  out["pull"] = pod.pull ? json::value(json::object{{"current_bytes", pod.pull->current_bytes},
                                                    {"total_bytes", pod.pull->total_bytes}})
                         : nullptr;
  return out;
}

json::object PodViewWithoutTime(const core::Pod& pod) {
  json::object view = ToJson(pod);
  view.erase("cost_micros");
  view.erase("jupyter_token");  // secrets: AddPodSecrets adds them back for those who may see them
  view.erase("link_token");
  json::array actions;
  if (pod.desired != core::DesiredState::kTerminated) {
    for (core::PodAction action : core::AllowedActions(pod.state)) {
      actions.emplace_back(core::PodActionName(action));
    }
  }
  view["actions"] = std::move(actions);
  const int64_t storage_per_month = pod.storage_price_per_gb_month.micros() * pod.volume_gb;
  view["storage_price_per_hour_micros"] = (storage_per_month + 719) / 720;
  view["storage_price_per_month_micros"] = storage_per_month;
  return view;
}

core::Result<core::Pod> PodFromJson(const json::object& json) {
  core::Pod pod;
  pod.id = Str(json, "id");
  pod.owner_id = Str(json, "owner_id");
  pod.name = Str(json, "name");
  pod.template_id = Str(json, "template_id");
  pod.image = Str(json, "image");
  pod.command = Strings(json, "command");
  pod.env = StringMap(json, "env");
  pod.ports = Ports(json);
  pod.gpu_type = Str(json, "gpu_type");
  pod.gpu_count = Int32(json, "gpu_count");
  pod.vcpu = Int32(json, "vcpu");
  pod.memory_gb = Int32(json, "memory_gb");
  pod.container_disk_gb = Int32(json, "container_disk_gb");
  pod.volume_gb = Int32(json, "volume_gb");
  pod.volume_mount_path = Str(json, "volume_mount_path");
  pod.interruptible = Bool(json, "interruptible");
  pod.priority = Int32(json, "priority");
  pod.node_selector = StringMap(json, "node_selector");
  pod.sequence = static_cast<uint64_t>(Int(json, "sequence"));
  const std::string desired = Str(json, "desired_state");
  pod.desired = desired == "stopped"      ? core::DesiredState::kStopped
                : desired == "terminated" ? core::DesiredState::kTerminated
                                          : core::DesiredState::kRunning;
  core::Result<core::PodState> state = core::ParsePodState(Str(json, "state"));
  if (!state.ok()) return state.status().WithContext("pod " + pod.id);
  pod.state = *state;
  pod.state_reason = Str(json, "state_reason");
  pod.state_since = Time(json, "state_since");
  pod.generation = Int(json, "generation");
  pod.report_seq = Int(json, "report_seq");
  pod.restarts = Int(json, "restarts");
  pod.node_id = Str(json, "node_id");
  pod.last_node_id = Str(json, "last_node_id");
  if (const json::value* indices = json.if_contains("gpu_indices");
      indices && indices->is_array()) {
    for (const json::value& index : indices->as_array()) {
      if (index.is_int64()) pod.gpu_indices.push_back(static_cast<int>(index.as_int64()));
    }
  }
  pod.container_id = Str(json, "container_id");
  if (const json::value* mappings = json.if_contains("port_mappings");
      mappings && mappings->is_array()) {
    for (const json::value& mapping : mappings->as_array()) {
      if (!mapping.is_object()) continue;
      pod.port_mappings.push_back({Int32(mapping.as_object(), "container_port"),
                                   Str(mapping.as_object(), "protocol"),
                                   Int32(mapping.as_object(), "host_port")});
    }
  }
  pod.gpu_price_per_hour = Micros(json, "gpu_price_per_hour_micros");
  pod.storage_price_per_gb_month = Micros(json, "storage_price_per_gb_month_micros");
  pod.created_at = Time(json, "created_at");
  if (!Str(json, "running_since").empty()) pod.running_since = Time(json, "running_since");
  pod.gpu_billed_to = Time(json, "gpu_billed_to");
  pod.storage_billed_to = Time(json, "storage_billed_to");
  pod.cost = Micros(json, "cost_micros");
  pod.volume_confirmed_empty = Bool(json, "volume_confirmed_empty");
  pod.ready = Bool(json, "ready");
  pod.jupyter_token = Str(json, "jupyter_token");
  if (const json::value* pull = json.if_contains("pull"); pull && pull->is_object()) {
    pod.pull = core::PullProgress{Int(pull->as_object(), "current_bytes"),
                                  Int(pull->as_object(), "total_bytes")};
  }
  pod.link_token = Str(json, "link_token");
  return pod;
}

json::object ToJson(const core::GpuHealth& health) {
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

json::object ToJson(const core::Node& node) {
  json::array gpus;
  for (const core::GpuDevice& gpu : node.gpus) {
    gpus.emplace_back(json::object{{"index", gpu.index},
                                   {"uuid", gpu.uuid},
                                   {"type", gpu.type},
                                   {"memory_gb", gpu.memory_gb},
                                   {"simulated", gpu.simulated}});
  }
  return {{"id", node.id},
          {"name", node.name},
          {"token_hash", node.token_hash},
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
          {"last_heartbeat", FormatTime(node.last_heartbeat)}};
}

core::Result<core::Node> NodeFromJson(const json::object& json) {
  core::Node node;
  node.id = Str(json, "id");
  node.name = Str(json, "name");
  node.token_hash = Str(json, "token_hash");
  node.state =
      Str(json, "state") == "unreachable" ? core::NodeState::kUnreachable : core::NodeState::kReady;
  node.cordoned = Bool(json, "cordoned");
  node.draining = Bool(json, "draining");
  node.labels = StringMap(json, "labels");
  if (const json::value* gpus = json.if_contains("gpus"); gpus && gpus->is_array()) {
    for (const json::value& gpu : gpus->as_array()) {
      if (!gpu.is_object()) continue;
      const json::object& fields = gpu.as_object();
      core::GpuDevice device;
      device.index = Int32(fields, "index");
      device.uuid = Str(fields, "uuid");
      device.type = Str(fields, "type");
      if (const json::value* memory = fields.if_contains("memory_gb"); memory) {
        device.memory_gb = memory->is_double() ? memory->as_double()
                                               : static_cast<double>(Int(fields, "memory_gb"));
      }
      device.simulated = Bool(fields, "simulated");
      node.gpus.push_back(std::move(device));
    }
  }
  node.vcpu = Int32(json, "vcpu");
  node.memory_gb = Int32(json, "memory_gb");
  node.disk_gb = Int32(json, "disk_gb");
  node.agent_version = Str(json, "agent_version");
  node.address = Str(json, "address");
  node.drain_reason = Str(json, "drain_reason");
  node.generation = Int(json, "generation");
  node.registered_at = Time(json, "registered_at");
  node.last_heartbeat = Time(json, "last_heartbeat");
  return node;
}

json::object ToJson(const core::JoinToken& token) {
  return {{"id", token.id},
          {"secret_hash", token.secret_hash},
          {"prefix", token.secret_prefix},
          {"note", token.note},
          {"created_at", FormatTime(token.created_at)},
          {"expires_at", FormatTime(token.expires_at)}};
}

core::Result<core::JoinToken> JoinTokenFromJson(const json::object& json) {
  core::JoinToken token;
  token.id = Str(json, "id");
  token.secret_hash = Str(json, "secret_hash");
  token.secret_prefix = Str(json, "prefix");
  token.note = Str(json, "note");
  token.created_at = Time(json, "created_at");
  token.expires_at = Time(json, "expires_at");
  return token;
}

json::object ToJson(const core::Transition& transition) {
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

json::object ToJson(const core::LedgerEntry& entry) {
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

}  // namespace suanli::server
