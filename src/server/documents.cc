#include "server/documents.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <set>

#include "core/pod_state.h"
#include "net/base64.h"
#include "server/endpoint_documents.h"
#include "server/project_documents.h"
#include "server/volume_documents.h"
#include "wire/json_fields.h"
#include "wire/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::FormatTime;
using core::Result;
using wire::JsonFields;

// Stored strings are the server's own: bounded only against a corrupt store.
constexpr size_t kLong = size_t{1} << 20;
constexpr wire::TextRule kText{.max_length = kLong};
constexpr wire::RangeRule<int> kAnyInt{INT32_MIN, INT32_MAX};
constexpr wire::RangeRule<int64_t> kAnyInt64{INT64_MIN, INT64_MAX};
constexpr wire::MicrosRule kAnyMicros{.allow_negative = true};

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

JsonFields Reader(const json::object& document) {
  return JsonFields(document, wire::UnknownFields::kIgnore);
}

// Bytes stored as base64 text (a container's output, a key): `out` is left as it is when absent.
void Base64Field(JsonFields& fields, std::string_view key, wire::TextRule rule, std::string* out) {
  std::string text;
  fields.String(key, &text, rule);
  if (text.empty()) return;
  Result<std::string> bytes = net::Base64Decode(text);
  if (bytes.ok()) {
    *out = std::move(*bytes);
  } else {
    fields.Fail(std::string(key) + ": " + bytes.status().message());
  }
}

// The entity, or the first bad field with the entity's kind and id ("pod pod_1: ...").
template <typename T>
Result<T> Finished(JsonFields& fields, std::string_view kind, T&& value) {
  if (core::Status status = fields.Finish(); !status.ok()) {
    return core::InternalError("the stored " + std::string(kind) + " " + value.id +
                               " is corrupt: " + status.message());
  }
  return std::move(value);
}

void ReadPorts(JsonFields& fields, std::vector<core::PortSpec>* out) {
  std::vector<std::string> texts;
  fields.StringList("ports", &texts, 1024);
  for (const std::string& text : texts) {
    Result<core::PortSpec> port = wire::ParsePort(text);
    if (!port.ok()) return fields.Fail("ports: " + port.status().message());
    out->push_back(*port);
  }
}

}  // namespace

json::object ToDocument(const core::User& user) {
  return {{"id", user.id},
          {"name", user.name},
          {"role", wire::RoleName(user.role)},
          {"balance_micros", user.balance.micros()},
          {"spend_cap_per_hour_micros", user.spend_cap_per_hour.micros()},
          {"created_at", FormatTime(user.created_at)},
          {"notices", ToArray(user.notices)},
          {"max_pods", user.max_pods},
          {"max_pending_pods", user.max_pending_pods},
          {"max_endpoints", user.max_endpoints},
          {"monthly_budget_micros", user.monthly_budget.micros()},
          {"budget_action", wire::BudgetActionName(user.budget_action)},
          {"budget_warned_month", user.budget_warned_month},
          {"budget_reached_month", user.budget_reached_month}};
}

Result<core::User> UserFromDocument(const json::object& document) {
  JsonFields fields = Reader(document);
  core::User user;
  std::string role;
  fields.String("id", &user.id, kText);
  fields.String("name", &user.name, kText);
  fields.String("role", &role, kText);
  user.role = role == "admin" ? core::Role::kAdmin : core::Role::kUser;
  fields.Micros("balance_micros", &user.balance, kAnyMicros);
  fields.Micros("spend_cap_per_hour_micros", &user.spend_cap_per_hour, kAnyMicros);
  fields.Time("created_at", &user.created_at);
  fields.StringList("notices", &user.notices, 1 << 16);
  fields.Int("max_pods", &user.max_pods, kAnyInt);  // absent before quotas: the default
  fields.Int("max_pending_pods", &user.max_pending_pods, kAnyInt);
  fields.Int("max_endpoints", &user.max_endpoints, kAnyInt);  // absent before its quota: default
  fields.Micros("monthly_budget_micros", &user.monthly_budget, kAnyMicros);  // absent: none
  std::string action = "notify";
  fields.String("budget_action", &action, kText);
  user.budget_action = wire::ParseBudgetAction(action).value_or(core::BudgetAction::kNotify);
  fields.String("budget_warned_month", &user.budget_warned_month, kText);
  fields.String("budget_reached_month", &user.budget_reached_month, kText);
  return Finished(fields, "user", std::move(user));
}

json::object ToDocument(const core::ApiToken& token) {
  return {{"id", token.id},
          {"user_id", token.user_id},
          {"name", token.name},
          {"secret_hash", token.secret_hash},
          {"prefix", token.secret_prefix},
          {"created_at", FormatTime(token.created_at)},
          {"read_only", token.read_only},
          {"project_id", token.project_id}};
}

Result<core::ApiToken> ApiTokenFromDocument(const json::object& document) {
  JsonFields fields = Reader(document);
  core::ApiToken token;
  fields.String("id", &token.id, kText);
  fields.String("user_id", &token.user_id, kText);
  fields.String("name", &token.name, kText);
  fields.String("secret_hash", &token.secret_hash, kText);
  fields.String("prefix", &token.secret_prefix, kText);
  fields.Time("created_at", &token.created_at);
  fields.Bool("read_only", &token.read_only);  // absent before read-only tokens: a full token
  fields.String("project_id", &token.project_id, kText);  // absent before project tokens: none
  return Finished(fields, "API token", std::move(token));
}

json::object ToDocument(const core::SshKey& key) {
  return {{"id", key.id},
          {"user_id", key.user_id},
          {"name", key.name},
          {"public_key", key.public_key},
          {"fingerprint", key.fingerprint},
          {"created_at", FormatTime(key.created_at)}};
}

Result<core::SshKey> SshKeyFromDocument(const json::object& document) {
  JsonFields fields = Reader(document);
  core::SshKey key;
  fields.String("id", &key.id, kText);
  fields.String("user_id", &key.user_id, kText);
  fields.String("name", &key.name, kText);
  fields.String("public_key", &key.public_key, kText);
  fields.String("fingerprint", &key.fingerprint, kText);
  fields.Time("created_at", &key.created_at);
  return Finished(fields, "SSH key", std::move(key));
}

json::object ToDocument(const core::Template& spec) {
  return {{"id", spec.id},
          {"owner_id", spec.owner_id},
          {"public", spec.is_public},
          {"name", spec.name},
          {"description", spec.description},
          {"image", spec.image},
          {"command", ToArray(spec.command)},
          {"env", ToObject(spec.env)},
          {"ports", wire::PortsView(spec.ports)},
          {"container_disk_gb", spec.container_disk_gb},
          {"volume_gb", spec.volume_gb},
          {"volume_mount_path", spec.volume_mount_path},
          {"created_at", FormatTime(spec.created_at)}};
}

Result<core::Template> TemplateFromDocument(const json::object& document) {
  JsonFields fields = Reader(document);
  core::Template spec;
  fields.String("id", &spec.id, kText);
  fields.String("owner_id", &spec.owner_id, kText);
  fields.Bool("public", &spec.is_public);
  fields.String("name", &spec.name, kText);
  fields.String("description", &spec.description, kText);
  fields.String("image", &spec.image, kText);
  fields.StringList("command", &spec.command, 1 << 16);
  fields.StringMap("env", &spec.env, 1 << 16);
  ReadPorts(fields, &spec.ports);
  fields.Int("container_disk_gb", &spec.container_disk_gb, kAnyInt);
  fields.Int("volume_gb", &spec.volume_gb, kAnyInt);
  fields.String("volume_mount_path", &spec.volume_mount_path, kText);
  fields.Time("created_at", &spec.created_at);
  return Finished(fields, "template", std::move(spec));
}

json::object ToDocument(const core::Pod& pod) {
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
                   {"project_id", pod.project_id},
                   {"created_by", pod.created_by},
                   {"name", pod.name},
                   {"template_id", pod.template_id},
                   {"image", pod.image},
                   {"command", ToArray(pod.command)},
                   {"env", ToObject(pod.env)},
                   {"ports", wire::PortsView(pod.ports)},
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
                   {"desired_state", wire::DesiredStateName(pod.desired)},
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
                   {"ran", pod.ran},
                   {"ready", pod.ready},
                   {"jupyter_token", pod.jupyter_token},
                   {"link_token", pod.link_token}};
  if (!pod.volumes.empty()) out["volumes"] = VolumeMountsDocument(pod.volumes);
  if (!pod.moves.empty()) out["moves"] = VolumeMovesDocument(pod.moves);
  out["running_since"] = pod.running_since ? json::value(FormatTime(*pod.running_since)) : nullptr;
  out["pull"] = pod.pull ? json::value(json::object{{"current_bytes", pod.pull->current_bytes},
                                                    {"total_bytes", pod.pull->total_bytes}})
                         : nullptr;
  // Bytes as the container wrote them, not always UTF-8.
  if (!pod.last_logs.empty()) out["last_logs_base64"] = net::Base64Encode(pod.last_logs);
  if (!pod.ssh_host_key_seed.empty()) {
    out["ssh_host_key_seed_base64"] = net::Base64Encode(pod.ssh_host_key_seed);
    out["ssh_host_key"] = pod.ssh_host_key;
  }
  return out;
}

Result<core::Pod> PodFromDocument(const json::object& document) {
  JsonFields fields = Reader(document);
  core::Pod pod;
  std::string desired, state;
  int64_t sequence = 0;
  fields.String("id", &pod.id, kText);
  fields.String("owner_id", &pod.owner_id, kText);
  fields.String("project_id", &pod.project_id, kText);  // absent before projects: none
  fields.String("created_by", &pod.created_by, kText);
  fields.String("name", &pod.name, kText);
  fields.String("template_id", &pod.template_id, kText);
  fields.String("image", &pod.image, kText);
  fields.StringList("command", &pod.command, 1 << 16);
  fields.StringMap("env", &pod.env, 1 << 16);
  ReadPorts(fields, &pod.ports);
  fields.String("gpu_type", &pod.gpu_type, kText);
  fields.Int("gpu_count", &pod.gpu_count, kAnyInt);
  fields.Int("gpu_milli", &pod.gpu_milli, {1, core::kMilliGpu});  // absent (older stores): whole
  fields.Int("vcpu", &pod.vcpu, kAnyInt);
  fields.Int("memory_gb", &pod.memory_gb, kAnyInt);
  fields.Int("container_disk_gb", &pod.container_disk_gb, kAnyInt);
  fields.Int("volume_gb", &pod.volume_gb, kAnyInt);
  fields.String("volume_mount_path", &pod.volume_mount_path, kText);
  ReadVolumeMounts(fields, &pod.volumes);
  ReadVolumeMoves(fields, &pod.moves);
  fields.Bool("interruptible", &pod.interruptible);
  fields.Int64("stop_after_s", &pod.stop_after_s, {0, INT64_MAX});  // absent (older stores): none
  fields.Int64("terminate_after_stopped_s", &pod.terminate_after_stopped_s, {0, INT64_MAX});
  fields.Int64("idle_stop_after_s", &pod.idle_stop_after_s, {0, INT64_MAX});
  fields.String("pre_stop_command", &pod.pre_stop_command, kText);
  fields.Int("priority", &pod.priority, kAnyInt);
  fields.StringMap("node_selector", &pod.node_selector, 1 << 16);
  fields.Int64("sequence", &sequence, {0, INT64_MAX});
  pod.sequence = static_cast<uint64_t>(sequence);
  fields.String("desired_state", &desired, kText);
  pod.desired = wire::ParseDesiredState(desired);
  fields.String("state", &state, {.required = true, .max_length = 32});
  fields.String("state_reason", &pod.state_reason, kText);
  fields.Time("state_since", &pod.state_since);
  fields.Int64("generation", &pod.generation, kAnyInt64);
  fields.Int64("report_seq", &pod.report_seq, kAnyInt64);
  fields.Int64("restarts", &pod.restarts, kAnyInt64);
  fields.String("node_id", &pod.node_id, kText);
  fields.String("last_node_id", &pod.last_node_id, kText);
  if (const json::value* indices = fields.Raw("gpu_indices"); indices != nullptr) {
    if (!indices->is_array()) {
      fields.Fail("gpu_indices: must be an array");
    } else {
      for (const json::value& index : indices->as_array()) {
        if (!index.is_int64()) {
          fields.Fail("gpu_indices: every index must be an integer");
          break;
        }
        pod.gpu_indices.push_back(static_cast<int>(index.as_int64()));
      }
    }
  }
  fields.String("container_id", &pod.container_id, kText);
  fields.Objects("port_mappings", 1 << 16, [&pod](JsonFields& mapping) {
    core::PortMapping parsed;
    mapping.Int("container_port", &parsed.container_port, kAnyInt);
    mapping.String("protocol", &parsed.protocol, kText);
    mapping.Int("host_port", &parsed.host_port, kAnyInt);
    pod.port_mappings.push_back(std::move(parsed));
  });
  fields.Micros("gpu_price_per_hour_micros", &pod.gpu_price_per_hour, kAnyMicros);
  fields.Micros("storage_price_per_gb_month_micros", &pod.storage_price_per_gb_month, kAnyMicros);
  fields.Time("created_at", &pod.created_at);
  if (const json::value* since = fields.Raw("running_since"); since && !since->is_null()) {
    core::TimePoint running_since;
    fields.Time("running_since", &running_since);
    pod.running_since = running_since;
  }
  fields.Time("gpu_billed_to", &pod.gpu_billed_to);
  fields.Time("storage_billed_to", &pod.storage_billed_to);
  fields.Micros("cost_micros", &pod.cost, kAnyMicros);
  fields.Bool("volume_confirmed_empty", &pod.volume_confirmed_empty);
  Base64Field(fields, "last_logs_base64", kText, &pod.last_logs);
  Base64Field(fields, "ssh_host_key_seed_base64", {.max_length = 64}, &pod.ssh_host_key_seed);
  fields.String("ssh_host_key", &pod.ssh_host_key, {.max_length = 256});
  // A pod stored before "ran" existed may have run if it was ever on a node: assume it did, so
  // that its volume stays protected by --force and billed as before.
  std::optional<bool> ran;
  fields.OptionalBool("ran", &ran);
  pod.ran = ran.value_or(pod.running_since.has_value() || !pod.node_id.empty() ||
                         !pod.last_node_id.empty());
  fields.Bool("ready", &pod.ready);
  fields.String("jupyter_token", &pod.jupyter_token, kText);
  fields.String("link_token", &pod.link_token, kText);
  if (const json::value* pull = fields.Raw("pull"); pull && !pull->is_null()) {
    core::PullProgress progress;
    fields.Object("pull", [&progress](JsonFields& read) {
      read.Int64("current_bytes", &progress.current_bytes, kAnyInt64);
      read.Int64("total_bytes", &progress.total_bytes, kAnyInt64);
    });
    pod.pull = progress;
  }
  if (fields.ok()) {
    Result<core::PodState> parsed = core::ParsePodState(state);
    if (!parsed.ok()) {
      fields.Fail("state: " + parsed.status().message());
    } else {
      pod.state = *parsed;
    }
  }
  return Finished(fields, "pod", std::move(pod));
}

json::object ToDocument(const core::Node& node) {
  json::array gpus;
  for (const core::GpuDevice& gpu : node.gpus) {
    gpus.emplace_back(json::object{{"index", gpu.index},
                                   {"uuid", gpu.uuid},
                                   {"type", gpu.type},
                                   {"memory_gb", gpu.memory_gb},
                                   {"simulated", gpu.simulated},
                                   {"link_group", gpu.link_group},
                                   {"capacity_milli", gpu.capacity_milli},
                                   {"mig_profile", gpu.mig_profile}});
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

Result<core::Node> NodeFromDocument(const json::object& document) {
  JsonFields fields = Reader(document);
  core::Node node;
  std::string state;
  fields.String("id", &node.id, kText);
  fields.String("name", &node.name, kText);
  fields.String("token_hash", &node.token_hash, kText);
  fields.String("state", &state, kText);
  node.state = state == "unreachable" ? core::NodeState::kUnreachable : core::NodeState::kReady;
  fields.Bool("cordoned", &node.cordoned);
  fields.Bool("draining", &node.draining);
  fields.StringMap("labels", &node.labels, 1 << 16);
  fields.Objects("gpus", 1 << 16, [&node](JsonFields& gpu) {
    core::GpuDevice device;
    gpu.Int("index", &device.index, kAnyInt);
    gpu.String("uuid", &device.uuid, kText);
    gpu.String("type", &device.type, kText);
    gpu.Number("memory_gb", &device.memory_gb, {0, 1e9});
    gpu.Bool("simulated", &device.simulated);
    gpu.Int("link_group", &device.link_group, kAnyInt);
    gpu.Int("capacity_milli", &device.capacity_milli, {1, core::kMilliGpu});
    gpu.String("mig_profile", &device.mig_profile, kText);
    node.gpus.push_back(std::move(device));
  });
  fields.Int("vcpu", &node.vcpu, kAnyInt);
  fields.Int("memory_gb", &node.memory_gb, kAnyInt);
  fields.Int("disk_gb", &node.disk_gb, kAnyInt);
  fields.String("agent_version", &node.agent_version, kText);
  fields.String("address", &node.address, kText);
  fields.String("drain_reason", &node.drain_reason, kText);
  fields.Int64("generation", &node.generation, kAnyInt64);
  fields.Time("registered_at", &node.registered_at);
  fields.Time("last_heartbeat", &node.last_heartbeat);
  return Finished(fields, "node", std::move(node));
}

json::object ToDocument(const core::JoinToken& token) {
  return {{"id", token.id},
          {"secret_hash", token.secret_hash},
          {"prefix", token.secret_prefix},
          {"note", token.note},
          {"created_at", FormatTime(token.created_at)},
          {"expires_at", FormatTime(token.expires_at)}};
}

Result<core::JoinToken> JoinTokenFromDocument(const json::object& document) {
  JsonFields fields = Reader(document);
  core::JoinToken token;
  fields.String("id", &token.id, kText);
  fields.String("secret_hash", &token.secret_hash, kText);
  fields.String("prefix", &token.secret_prefix, kText);
  fields.String("note", &token.note, kText);
  fields.Time("created_at", &token.created_at);
  fields.Time("expires_at", &token.expires_at);
  return Finished(fields, "join token", std::move(token));
}

json::object ToDocument(const core::EventWebhook& hook) {
  return {{"id", hook.id},
          {"owner_id", hook.owner_id},
          {"url", hook.url},
          {"secret", hook.secret},
          {"kinds", ToArray(hook.kinds)},
          {"delivered_seq", hook.delivered_seq},
          {"created_at", FormatTime(hook.created_at)}};
}

Result<core::EventWebhook> WebhookFromDocument(const json::object& document) {
  JsonFields fields = Reader(document);
  core::EventWebhook hook;
  fields.String("id", &hook.id, kText);
  fields.String("owner_id", &hook.owner_id, kText);
  fields.String("url", &hook.url, kText);
  fields.String("secret", &hook.secret, kText);
  fields.StringList("kinds", &hook.kinds, 1024);
  fields.Int64("delivered_seq", &hook.delivered_seq, {0, INT64_MAX});
  fields.Time("created_at", &hook.created_at);
  return Finished(fields, "webhook", std::move(hook));
}

std::string DocumentText(const core::EventWebhook& hook) {
  return json::serialize(ToDocument(hook));
}

std::string DocumentText(const core::User& user) { return json::serialize(ToDocument(user)); }
std::string DocumentText(const core::ApiToken& token) { return json::serialize(ToDocument(token)); }
std::string DocumentText(const core::SshKey& key) { return json::serialize(ToDocument(key)); }
std::string DocumentText(const core::Template& spec) { return json::serialize(ToDocument(spec)); }
std::string DocumentText(const core::Pod& pod) { return json::serialize(ToDocument(pod)); }
std::string DocumentText(const core::Node& node) { return json::serialize(ToDocument(node)); }
std::string DocumentText(const core::JoinToken& token) {
  return json::serialize(ToDocument(token));
}

std::string PricesDocumentText(const std::map<std::string, core::Money>& gpu_prices) {
  json::object prices;
  for (const auto& [gpu, price] : gpu_prices) prices[gpu] = price.micros();
  return json::serialize(json::object{{"gpu_prices_per_hour_micros", std::move(prices)}});
}

namespace {

core::Status DecodePrices(const json::object& document, std::map<std::string, core::Money>* out) {
  const json::value* prices = document.if_contains("gpu_prices_per_hour_micros");
  if (prices == nullptr) return core::Status::Ok();
  const core::Status corrupt =
      core::InternalError("the stored GPU prices are corrupt: expected {\"<gpu>\": micros}");
  if (!prices->is_object()) return corrupt;
  for (const auto& entry : prices->as_object()) {
    if (!entry.value().is_int64()) return corrupt;
    (*out)[entry.key()] = core::Money::FromMicros(entry.value().as_int64());
  }
  return core::Status::Ok();
}

template <typename T>
core::Status Decode(Result<T> decoded, std::vector<T>* out) {
  if (!decoded.ok()) return decoded.status();
  out->push_back(std::move(*decoded));
  return core::Status::Ok();
}

// Moves the things of `things` for which `set_aside(thing)` names a reason into `unreadable`.
template <typename T, typename Why>
void SetAside(std::vector<T>& things, store::Collection collection, Why set_aside,
              std::vector<StoredEntities::Unreadable>& unreadable) {
  std::erase_if(things, [&](const T& thing) {
    std::string why = set_aside(thing);
    if (why.empty()) return false;
    unreadable.push_back({collection, thing.id, std::move(why)});
    return true;
  });
}

std::string CollectionWord(store::Collection collection) {
  using store::Collection;
  switch (collection) {
    case Collection::kUsers:
      return "user";
    case Collection::kApiTokens:
      return "API token";
    case Collection::kSshKeys:
      return "SSH key";
    case Collection::kTemplates:
      return "template";
    case Collection::kPods:
      return "pod";
    case Collection::kNodes:
      return "node";
    case Collection::kJoinTokens:
      return "join token";
    case Collection::kSettings:
      return "setting";
    case Collection::kEndpoints:
      return "endpoint";
    case Collection::kJobs:
      return "job";
    case Collection::kWebhooks:
      return "webhook";
    case Collection::kVolumes:
      return "volume";
    case Collection::kSnapshots:
      return "snapshot";
    case Collection::kProjects:
      return "project";
  }
  return "document";
}

}  // namespace

std::string Describe(const StoredEntities::Unreadable& record) {
  return CollectionWord(record.collection) + " " + record.id;
}

void SetAsideDependents(StoredEntities& entities) {
  using store::Collection;
  std::map<Collection, std::set<std::string>> gone;
  for (const auto& record : entities.unreadable) gone[record.collection].insert(record.id);
  const auto missing = [&](Collection collection, const std::string& id) {
    return !id.empty() && gone[collection].contains(id);
  };
  const auto because = [](std::string_view what, const std::string& id) {
    return "its " + std::string(what) + " " + id + " is unreadable";
  };
  auto& unreadable = entities.unreadable;
  // Owners first, so that a project of an unreadable owner takes its pods with it.
  SetAside(
      entities.projects, Collection::kProjects,
      [&](const core::Project& project) {
        return missing(Collection::kUsers, project.owner_id) ? because("owner", project.owner_id)
                                                             : "";
      },
      unreadable);
  for (const auto& record : unreadable) gone[record.collection].insert(record.id);
  const auto owned = [&](const std::string& owner_id, const std::string& project_id) {
    if (missing(Collection::kUsers, owner_id)) return because("owner", owner_id);
    if (missing(Collection::kProjects, project_id)) return because("project", project_id);
    return std::string();
  };
  SetAside(
      entities.tokens, Collection::kApiTokens,
      [&](const core::ApiToken& token) { return owned(token.user_id, token.project_id); },
      unreadable);
  SetAside(
      entities.ssh_keys, Collection::kSshKeys,
      [&](const core::SshKey& key) { return owned(key.user_id, ""); }, unreadable);
  SetAside(
      entities.templates, Collection::kTemplates,
      [&](const core::Template& spec) { return owned(spec.owner_id, ""); }, unreadable);
  SetAside(
      entities.pods, Collection::kPods,
      [&](const core::Pod& pod) {
        std::string why = owned(pod.owner_id, pod.project_id);
        if (why.empty() && missing(Collection::kNodes, pod.node_id))
          why = because("node", pod.node_id);
        return why;
      },
      unreadable);
  SetAside(
      entities.volumes, Collection::kVolumes,
      [&](const core::Volume& volume) { return owned(volume.owner_id, volume.project_id); },
      unreadable);
  SetAside(
      entities.snapshots, Collection::kSnapshots,
      [&](const core::Snapshot& snapshot) { return owned(snapshot.owner_id, snapshot.project_id); },
      unreadable);
  SetAside(
      entities.webhooks, Collection::kWebhooks,
      [&](const core::EventWebhook& hook) { return owned(hook.owner_id, ""); }, unreadable);
  SetAside(
      entities.endpoints, Collection::kEndpoints,
      [&](const serverless::Endpoint& endpoint) {
        return owned(endpoint.owner_id, endpoint.project_id);
      },
      unreadable);
  for (const auto& record : unreadable) gone[record.collection].insert(record.id);
  SetAside(
      entities.jobs, Collection::kJobs,
      [&](const serverless::Job& job) {
        return missing(Collection::kEndpoints, job.endpoint_id)
                   ? because("endpoint", job.endpoint_id)
                   : owned(job.owner_id, "");
      },
      unreadable);
}

StoredEntities DecodeDocuments(const std::vector<store::Document>& documents) {
  using store::Collection;
  StoredEntities entities;
  for (const store::Document& document : documents) {
    boost::system::error_code error;
    const json::value value = json::parse(document.json, error);
    if (error || !value.is_object()) {
      entities.unreadable.push_back({document.collection, document.id, "not a JSON object"});
      continue;
    }
    const json::object& object = value.as_object();
    core::Status status;
    switch (document.collection) {
      case Collection::kUsers:
        status = Decode(UserFromDocument(object), &entities.users);
        break;
      case Collection::kApiTokens:
        status = Decode(ApiTokenFromDocument(object), &entities.tokens);
        break;
      case Collection::kSshKeys:
        status = Decode(SshKeyFromDocument(object), &entities.ssh_keys);
        break;
      case Collection::kTemplates:
        status = Decode(TemplateFromDocument(object), &entities.templates);
        break;
      case Collection::kPods:
        status = Decode(PodFromDocument(object), &entities.pods);
        break;
      case Collection::kNodes:
        status = Decode(NodeFromDocument(object), &entities.nodes);
        break;
      case Collection::kJoinTokens:
        status = Decode(JoinTokenFromDocument(object), &entities.join_tokens);
        break;
      case Collection::kSettings:
        if (document.id == kPricesDocumentId) status = DecodePrices(object, &entities.gpu_prices);
        break;
      case Collection::kEndpoints:
        status = Decode(EndpointFromDocument(object), &entities.endpoints);
        break;
      case Collection::kJobs:
        status = Decode(JobFromDocument(object), &entities.jobs);
        break;
      case Collection::kWebhooks:
        status = Decode(WebhookFromDocument(object), &entities.webhooks);
        break;
      case Collection::kVolumes:
        status = Decode(VolumeFromDocument(object), &entities.volumes);
        break;
      case Collection::kSnapshots:
        status = Decode(SnapshotFromDocument(object), &entities.snapshots);
        break;
      case Collection::kProjects:
        status = Decode(ProjectFromDocument(object), &entities.projects);
        break;
    }
    if (!status.ok()) {
      entities.unreadable.push_back({document.collection, document.id, status.message()});
    }
  }
  SetAsideDependents(entities);
  return entities;
}

}  // namespace suanli::server
