#include "cli/api_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "cli/text_table.h"
#include "core/gpu_share.h"
#include "core/money.h"

namespace suanli::cli {
namespace {

using Align = TextTable::Align;

// "Label:  value" lines with the values aligned; empty values are left out.
class Detail {
 public:
  void Add(std::string label, std::string value) {
    if (!value.empty()) lines_.emplace_back(std::move(label), std::move(value));
  }
  std::string Render() const {
    size_t width = 0;
    for (const auto& line : lines_) width = std::max(width, line.first.size());
    std::string out;
    for (const auto& [label, value] : lines_) {
      out += label + ":" + std::string(width - label.size() + 2, ' ') + value + "\n";
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> lines_;
};

std::string OrDash(std::string text) { return text.empty() ? "-" : text; }

std::string Join(const boost::json::array& items, std::string_view separator) {
  std::string out;
  for (const boost::json::value& item : items) {
    if (!out.empty()) out += separator;
    out += item.is_string() ? std::string(item.as_string()) : boost::json::serialize(item);
  }
  return out;
}

std::string GbText(const boost::json::value& object, std::string_view key) {
  const int64_t gb = JsonInteger(object, key);
  return gb > 0 ? std::to_string(gb) + " GB" : "";
}

std::string PortMappingsText(const boost::json::value& pod) {
  std::string out;
  for (const boost::json::value& mapping : JsonArray(pod, "port_mappings")) {
    if (!out.empty()) out += ", ";
    out += JsonText(mapping, "container_port") + "/" + JsonText(mapping, "protocol");
    const std::string host_port = JsonText(mapping, "host_port");
    if (!host_port.empty() && host_port != "0") out += " -> host port " + host_port;
  }
  return out;
}

// A node's GPUs grouped by type: "4x RTX 4090 (simulated)".
std::string NodeGpusText(const boost::json::value& node) {
  std::vector<std::pair<std::string, int>> counts;
  for (const boost::json::value& gpu : JsonArray(node, "gpus")) {
    std::string type = JsonText(gpu, "type");
    if (!JsonText(gpu, "mig_profile").empty()) type += " MIG slice";
    if (JsonBool(gpu, "simulated")) type += " (simulated)";
    auto found = std::find_if(counts.begin(), counts.end(),
                              [&type](const auto& entry) { return entry.first == type; });
    if (found == counts.end()) {
      counts.emplace_back(type, 1);
    } else {
      ++found->second;
    }
  }
  std::string out;
  for (const auto& entry : counts) {
    out += (out.empty() ? "" : ", ") + std::to_string(entry.second) + "x " + entry.first;
  }
  return OrDash(out);
}

std::string NodeStateText(const boost::json::value& node) {
  std::string state = JsonText(node, "state");
  if (JsonBool(node, "draining")) state += ",draining";
  if (JsonBool(node, "cordoned")) state += ",cordoned";
  return state;
}

std::string SecondsOrNever(const boost::json::value& object, std::string_view key) {
  const boost::json::value* value = JsonField(object, key);
  if (value == nullptr || !value->is_number()) return "-";
  return DurationText(JsonInteger(object, key));
}

// "0.75 (most 0.5 on one GPU)", or "-" when no device is partly used.
std::string SharedFreeText(const boost::json::value& gpu) {
  const int64_t shared = JsonInteger(gpu, "shared_free_milli");
  if (shared <= 0) return "-";
  const int64_t most = JsonInteger(gpu, "largest_share_free_milli");
  if (most == shared) return core::MilliGpuText(shared);
  return core::MilliGpuText(shared) + " (most " + core::MilliGpuText(most) + " on one GPU)";
}

}  // namespace

const boost::json::value* JsonField(const boost::json::value& object, std::string_view key) {
  const boost::json::object* fields = object.if_object();
  if (fields == nullptr) return nullptr;
  const boost::json::value* value = fields->if_contains(key);
  return value == nullptr || value->is_null() ? nullptr : value;
}

std::string JsonText(const boost::json::value& object, std::string_view key) {
  const boost::json::value* value = JsonField(object, key);
  if (value == nullptr) return "";
  if (value->is_string()) return std::string(value->as_string());
  if (value->is_int64()) return std::to_string(value->as_int64());
  if (value->is_uint64()) return std::to_string(value->as_uint64());
  if (value->is_double()) return fmt::format("{:g}", value->as_double());
  if (value->is_bool()) return value->as_bool() ? "true" : "false";
  return "";
}

int64_t JsonInteger(const boost::json::value& object, std::string_view key) {
  const boost::json::value* value = JsonField(object, key);
  if (value == nullptr) return 0;
  if (value->is_int64()) return value->as_int64();
  if (value->is_uint64()) return static_cast<int64_t>(value->as_uint64());
  if (value->is_double()) return static_cast<int64_t>(value->as_double());
  return 0;
}

bool JsonBool(const boost::json::value& object, std::string_view key) {
  const boost::json::value* value = JsonField(object, key);
  return value != nullptr && value->is_bool() && value->as_bool();
}

const boost::json::array& JsonArray(const boost::json::value& object, std::string_view key) {
  static const boost::json::array kEmpty;
  const boost::json::value* value = JsonField(object, key);
  return value != nullptr && value->is_array() ? value->as_array() : kEmpty;
}

std::string MoneyText(const boost::json::value& object, std::string_view key) {
  const boost::json::value* value = JsonField(object, key);
  if (value == nullptr || !value->is_number()) return "-";
  return core::Money::FromMicros(JsonInteger(object, key)).ToString();
}

std::string DurationText(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 60) return std::to_string(seconds) + "s";
  if (seconds < 3600) return fmt::format("{}m{:02}s", seconds / 60, seconds % 60);
  if (seconds < 86400) return fmt::format("{}h{:02}m", seconds / 3600, seconds % 3600 / 60);
  return fmt::format("{}d{:02}h", seconds / 86400, seconds % 86400 / 3600);
}

std::string TimeText(std::string_view rfc3339) {
  if (rfc3339.empty()) return "-";
  // YYYY-MM-DDTHH:MM...
  if (rfc3339.size() >= 16 && rfc3339[10] == 'T') {
    return std::string(rfc3339.substr(0, 10)) + " " + std::string(rfc3339.substr(11, 5));
  }
  return std::string(rfc3339);
}

std::string PodGpuText(const boost::json::value& pod) {
  const int64_t count = JsonInteger(pod, "gpu_count");
  const std::string type = JsonText(pod, "gpu_type");
  if (count <= 0 || type.empty()) return "-";
  // A share of one GPU: "0.5x RTX 4090" (servers before shares send no gpu_milli: whole GPUs).
  const int64_t milli =
      JsonField(pod, "gpu_milli") != nullptr ? JsonInteger(pod, "gpu_milli") : 1000;
  return (milli < 1000 ? core::MilliGpuText(milli) : std::to_string(count)) + "x " + type;
}

std::string PodsTable(const boost::json::array& pods) {
  TextTable table;
  table.AddColumn("ID", Align::kLeft);
  table.AddColumn("NAME", Align::kLeft);
  table.AddColumn("STATE", Align::kLeft);
  table.AddColumn("GPU", Align::kLeft);
  table.AddColumn("NODE", Align::kLeft);
  table.AddColumn("COST", Align::kRight);
  table.AddColumn("UPTIME", Align::kRight);
  table.AddColumn("AGE", Align::kLeft);
  table.AddColumn("REASON", Align::kLeft);
  for (const boost::json::value& pod : pods) {
    table.AddRow({JsonText(pod, "id"), OrDash(JsonText(pod, "name")), JsonText(pod, "state"),
                  PodGpuText(pod), OrDash(JsonText(pod, "node_id")), MoneyText(pod, "cost_micros"),
                  DurationText(JsonInteger(pod, "uptime_s")), TimeText(JsonText(pod, "created_at")),
                  JsonText(pod, "state_reason")});
  }
  return table.Render();
}

std::string TemplatesTable(const boost::json::array& templates) {
  TextTable table;
  table.AddColumn("ID", Align::kLeft);
  table.AddColumn("NAME", Align::kLeft);
  table.AddColumn("IMAGE", Align::kLeft);
  table.AddColumn("PORTS", Align::kLeft);
  table.AddColumn("DISK GB", Align::kRight);
  table.AddColumn("VOLUME GB", Align::kRight);
  table.AddColumn("VISIBILITY", Align::kLeft);
  for (const boost::json::value& spec : templates) {
    const std::string visibility = JsonBool(spec, "built_in") ? "built-in"
                                   : JsonBool(spec, "public") ? "public"
                                                              : "private";
    table.AddRow({JsonText(spec, "id"), JsonText(spec, "name"), JsonText(spec, "image"),
                  OrDash(Join(JsonArray(spec, "ports"), ",")),
                  std::to_string(JsonInteger(spec, "container_disk_gb")),
                  std::to_string(JsonInteger(spec, "volume_gb")), visibility});
  }
  return table.Render();
}

namespace {

// The GPUs of `node` that pods are bound to: distinct indices, since GPU shares can put several
// pods on one GPU.
size_t GpusInUse(const boost::json::value& node, const boost::json::array& pods) {
  const std::string id = JsonText(node, "id");
  std::set<int64_t> indices;
  for (const boost::json::value& pod : pods) {
    if (JsonText(pod, "node_id") != id) continue;
    for (const boost::json::value& index : JsonArray(pod, "gpu_indices")) {
      if (index.is_int64()) indices.insert(index.as_int64());
    }
  }
  return indices.size();
}

}  // namespace

std::string NodesTable(const boost::json::array& nodes, const boost::json::array& pods) {
  TextTable table;
  table.AddColumn("ID", Align::kLeft);
  table.AddColumn("NAME", Align::kLeft);
  table.AddColumn("STATE", Align::kLeft);
  table.AddColumn("GPUS", Align::kLeft);
  table.AddColumn("USED", Align::kRight);
  table.AddColumn("VCPU", Align::kRight);
  table.AddColumn("MEM GB", Align::kRight);
  table.AddColumn("AGENT", Align::kLeft);
  table.AddColumn("LAST HEARTBEAT", Align::kLeft);
  for (const boost::json::value& node : nodes) {
    table.AddRow(
        {JsonText(node, "id"), JsonText(node, "name"), NodeStateText(node), NodeGpusText(node),
         std::to_string(GpusInUse(node, pods)) + "/" +
             std::to_string(JsonArray(node, "gpus").size()),
         std::to_string(JsonInteger(node, "vcpu")), std::to_string(JsonInteger(node, "memory_gb")),
         OrDash(JsonText(node, "agent_version")), TimeText(JsonText(node, "last_heartbeat"))});
  }
  return table.Render();
}

std::string UsersTable(const boost::json::array& users) {
  TextTable table;
  table.AddColumn("ID", Align::kLeft);
  table.AddColumn("NAME", Align::kLeft);
  table.AddColumn("ROLE", Align::kLeft);
  table.AddColumn("BALANCE", Align::kRight);
  table.AddColumn("CAP $/H", Align::kRight);
  table.AddColumn("CREATED (UTC)", Align::kLeft);
  for (const boost::json::value& user : users) {
    const bool capped = JsonInteger(user, "spend_cap_per_hour_micros") > 0;
    table.AddRow({JsonText(user, "id"), JsonText(user, "name"), JsonText(user, "role"),
                  MoneyText(user, "balance_micros"),
                  capped ? MoneyText(user, "spend_cap_per_hour_micros") : "-",
                  TimeText(JsonText(user, "created_at"))});
  }
  return table.Render();
}

std::string TokensTable(const boost::json::array& tokens) {
  TextTable table;
  table.AddColumn("ID", Align::kLeft);
  table.AddColumn("NAME", Align::kLeft);
  table.AddColumn("PREFIX", Align::kLeft);
  table.AddColumn("ACCESS", Align::kLeft);
  table.AddColumn("CREATED (UTC)", Align::kLeft);
  for (const boost::json::value& token : tokens) {
    table.AddRow({JsonText(token, "id"), JsonText(token, "name"), JsonText(token, "prefix"),
                  std::string(JsonBool(token, "read_only") ? "read-only" : "full") +
                      (JsonText(token, "project_id").empty()
                           ? ""
                           : " (project " + JsonText(token, "project_id") + ")"),
                  TimeText(JsonText(token, "created_at"))});
  }
  return table.Render();
}

std::string SshKeysTable(const boost::json::array& keys) {
  TextTable table;
  table.AddColumn("ID", Align::kLeft);
  table.AddColumn("NAME", Align::kLeft);
  table.AddColumn("FINGERPRINT", Align::kLeft);
  table.AddColumn("CREATED (UTC)", Align::kLeft);
  for (const boost::json::value& key : keys) {
    table.AddRow({JsonText(key, "id"), JsonText(key, "name"), JsonText(key, "fingerprint"),
                  TimeText(JsonText(key, "created_at"))});
  }
  return table.Render();
}

std::string JoinTokensTable(const boost::json::array& tokens) {
  TextTable table;
  table.AddColumn("ID", Align::kLeft);
  table.AddColumn("PREFIX", Align::kLeft);
  table.AddColumn("NOTE", Align::kLeft);
  table.AddColumn("CREATED (UTC)", Align::kLeft);
  table.AddColumn("EXPIRES (UTC)", Align::kLeft);
  for (const boost::json::value& token : tokens) {
    table.AddRow({JsonText(token, "id"), JsonText(token, "prefix"), JsonText(token, "note"),
                  TimeText(JsonText(token, "created_at")),
                  TimeText(JsonText(token, "expires_at"))});
  }
  return table.Render();
}

std::string UsageTable(const boost::json::array& usage, std::string_view by) {
  TextTable table;
  table.AddColumn(by == "day" ? "DAY" : "POD", Align::kLeft);
  table.AddColumn("GPU HOURS", Align::kRight);
  table.AddColumn("GPU", Align::kRight);
  table.AddColumn("STORAGE", Align::kRight);
  table.AddColumn("TOTAL", Align::kRight);
  int64_t total = 0;
  for (const boost::json::value& row : usage) {
    table.AddRow(
        {JsonText(row, "key"),
         fmt::format("{:.2f}", static_cast<double>(JsonInteger(row, "gpu_seconds")) / 3600),
         MoneyText(row, "gpu_micros"), MoneyText(row, "storage_micros"),
         MoneyText(row, "total_micros")});
    total += JsonInteger(row, "total_micros");
  }
  return table.Render() + "total: " + core::Money::FromMicros(total).ToString() + "\n";
}

std::string LedgerTable(const boost::json::array& entries) {
  TextTable table;
  table.AddColumn("SEQ", Align::kRight);
  table.AddColumn("AT (UTC)", Align::kLeft);
  table.AddColumn("KIND", Align::kLeft);
  table.AddColumn("AMOUNT", Align::kRight);
  table.AddColumn("POD", Align::kLeft);
  table.AddColumn("NOTE", Align::kLeft);
  for (const boost::json::value& entry : entries) {
    table.AddRow({JsonText(entry, "seq"), TimeText(JsonText(entry, "at")), JsonText(entry, "kind"),
                  MoneyText(entry, "amount_micros"), OrDash(JsonText(entry, "pod_id")),
                  JsonText(entry, "note")});
  }
  return table.Render();
}

std::string EventsTable(const boost::json::array& events) {
  TextTable table;
  table.AddColumn("ID", Align::kRight);
  table.AddColumn("TIME (UTC)", Align::kLeft);
  table.AddColumn("KIND", Align::kLeft);
  table.AddColumn("OBJECT", Align::kLeft);
  table.AddColumn("MESSAGE", Align::kLeft);
  for (const boost::json::value& event : events) {
    table.AddRow({JsonText(event, "id"), JsonText(event, "time"), JsonText(event, "kind"),
                  OrDash(JsonText(event, "object_id")), JsonText(event, "message")});
  }
  return table.Render();
}

std::string AuditTable(const boost::json::array& entries) {
  TextTable table;
  table.AddColumn("ID", Align::kRight);
  table.AddColumn("TIME (UTC)", Align::kLeft);
  table.AddColumn("USER", Align::kLeft);
  table.AddColumn("TOKEN", Align::kLeft);
  table.AddColumn("ACTION", Align::kLeft);
  table.AddColumn("OBJECT", Align::kLeft);
  table.AddColumn("RESULT", Align::kLeft);
  for (const boost::json::value& entry : entries) {
    const std::string error = JsonText(entry, "error_code");
    table.AddRow({JsonText(entry, "id"), JsonText(entry, "time"),
                  OrDash(JsonText(entry, "user_id")), OrDash(JsonText(entry, "token_id")),
                  JsonText(entry, "action"), OrDash(JsonText(entry, "object_id")),
                  JsonText(entry, "status") + (error.empty() ? "" : " " + error)});
  }
  return table.Render();
}

// One event as a line of `events -f`: "2026-12-02T14:46:25.123Z  pod.state  pod_1  message".
std::string EventLine(const boost::json::value& event) {
  return JsonText(event, "time") + "  " + JsonText(event, "kind") + "  " +
         OrDash(JsonText(event, "object_id")) + "  " + JsonText(event, "message") + "\n";
}

std::string TransitionsTable(const boost::json::array& transitions) {
  TextTable table;
  table.AddColumn("SEQ", Align::kRight);
  table.AddColumn("AT (UTC)", Align::kLeft);
  table.AddColumn("FROM", Align::kLeft);
  table.AddColumn("TO", Align::kLeft);
  table.AddColumn("REASON", Align::kLeft);
  for (const boost::json::value& transition : transitions) {
    table.AddRow({JsonText(transition, "seq"), TimeText(JsonText(transition, "at")),
                  OrDash(JsonText(transition, "from")), JsonText(transition, "to"),
                  JsonText(transition, "reason")});
  }
  return table.Render();
}

std::string AvailabilityTable(const boost::json::array& gpus) {
  TextTable table;
  table.AddColumn("GPU", Align::kLeft);
  table.AddColumn("FREE", Align::kRight);
  table.AddColumn("TOTAL", Align::kRight);
  table.AddColumn("MAX ON ONE NODE", Align::kRight);
  table.AddColumn("SHARED FREE", Align::kRight);  // left on devices that shares use
  table.AddColumn("$/H", Align::kRight);
  int64_t stranded = 0;
  for (const boost::json::value& gpu : gpus) {
    std::string type = JsonText(gpu, "gpu_type");
    if (JsonBool(gpu, "simulated")) type += " (simulated)";
    std::string free = std::to_string(JsonInteger(gpu, "free"));
    if (JsonInteger(gpu, "stranded") > 0) {
      free += " (+" + std::to_string(JsonInteger(gpu, "stranded")) + " idle*)";
      stranded += JsonInteger(gpu, "stranded");
    }
    table.AddRow({type, free, std::to_string(JsonInteger(gpu, "total")),
                  std::to_string(JsonInteger(gpu, "largest_free_on_one_node")), SharedFreeText(gpu),
                  MoneyText(gpu, "price_per_hour_micros")});
  }
  std::string out = table.Render();
  if (stranded > 0) {
    out +=
        "* idle GPUs whose node lacks the vCPU or RAM a pod needs beside them (2 vCPU and 8 GB "
        "each by default): not free\n";
  }
  return out;
}

std::string PodDetail(const boost::json::value& pod, std::string_view server_url) {
  Detail detail;
  detail.Add("ID", JsonText(pod, "id"));
  detail.Add("Name", JsonText(pod, "name"));
  std::string state = JsonText(pod, "state");
  const std::string desired = JsonText(pod, "desired_state");
  if (!desired.empty() && desired != state) state += " (desired: " + desired + ")";
  detail.Add("State", state);
  if (JsonText(pod, "state") == "running") {
    detail.Add("Ready", JsonBool(pod, "ready") ? "yes: its ports answer"
                                               : "not yet: its ports do not answer");
  }
  detail.Add("Reason", JsonText(pod, "state_reason"));
  detail.Add("Image", JsonText(pod, "image"));
  detail.Add("Template", JsonText(pod, "template_id"));
  std::string gpu = PodGpuText(pod);
  const std::string indices = Join(JsonArray(pod, "gpu_indices"), ",");
  if (!indices.empty()) gpu += " (GPU " + indices + ")";
  detail.Add("GPU", gpu);
  detail.Add("Node", JsonText(pod, "node_id"));
  const int64_t vcpu = JsonInteger(pod, "vcpu");
  detail.Add("vCPU", vcpu > 0 ? std::to_string(vcpu) : "");
  detail.Add("Memory", GbText(pod, "memory_gb"));
  detail.Add("Disk", GbText(pod, "container_disk_gb"));
  std::string volume = GbText(pod, "volume_gb");
  const std::string mount = JsonText(pod, "volume_mount_path");
  if (!volume.empty() && !mount.empty()) volume += " at " + mount;
  detail.Add("Volume", volume);
  // Volumes of the owner's own (suanli volumes) that the pod mounts.
  std::string mounted;
  for (const boost::json::value& named : JsonArray(pod, "volumes")) {
    if (!mounted.empty()) mounted += ", ";
    mounted += JsonText(named, "volume_id") + " at " + JsonText(named, "mount_path") +
               (JsonBool(named, "read_only") ? " (read-only)" : "");
  }
  detail.Add("Volumes", mounted);
  detail.Add("Interruptible", JsonBool(pod, "interruptible") ? "yes" : "");
  const int64_t stop_after = JsonInteger(pod, "stop_after_s");
  const int64_t idle_stop_after = JsonInteger(pod, "idle_stop_after_s");
  detail.Add("Stop after", stop_after > 0 ? DurationText(stop_after) + " of running" : "");
  detail.Add("Idle stop",
             idle_stop_after > 0 ? "after " + DurationText(idle_stop_after) + " idle" : "");
  detail.Add("Pre-stop", JsonText(pod, "pre_stop_command"));
  const int64_t terminate_after = JsonInteger(pod, "terminate_after_stopped_s");
  detail.Add("Terminate",
             terminate_after > 0 ? "after " + DurationText(terminate_after) + " stopped" : "");
  // Ports only while a container runs (older servers kept a stopped pod's).
  const std::string live_state = JsonText(pod, "state");
  const bool live = live_state == "running" || live_state == "starting";
  detail.Add("Ports", live ? PortMappingsText(pod) : "");
  std::string ignored;
  if (const std::vector<std::string> ssh = SshArguments(pod, "root", 22, ignored);
      live && !ssh.empty()) {
    detail.Add("SSH", "ssh " + ssh[0] + " " + ssh[1] + " " + ssh[2] + "  (or: suanli pods ssh " +
                          JsonText(pod, "id") + ")");
  }
  const std::string link = JsonText(pod, "link_token");
  if (!server_url.empty() && !link.empty() && JsonText(pod, "state") == "running") {
    for (const boost::json::value& mapping : JsonArray(pod, "port_mappings")) {
      if (JsonText(mapping, "protocol") != "http") continue;
      // Of several replicas' URLs, the first: any replica serves the link.
      detail.Add("Open", std::string(server_url.substr(0, server_url.find(','))) + "/v1/pods/" +
                             JsonText(pod, "id") + "/proxy/" + JsonText(mapping, "container_port") +
                             "/?suanli_link=" + link);
    }
  }
  detail.Add("Jupyter token", JsonText(pod, "jupyter_token"));
  // Jupyter's kernels talk over WebSockets, which the proxy does not carry: the direct address.
  const std::string address = JsonText(pod, "node_address");
  if (!JsonText(pod, "jupyter_token").empty() && !address.empty() &&
      JsonText(pod, "state") == "running") {
    for (const boost::json::value& mapping : JsonArray(pod, "port_mappings")) {
      if (JsonInteger(mapping, "container_port") != 8888) continue;
      const bool ipv6 = address.find(':') != std::string::npos;
      detail.Add("Jupyter", "http://" + (ipv6 ? "[" + address + "]" : address) + ":" +
                                JsonText(mapping, "host_port") +
                                "/lab?token=" + JsonText(pod, "jupyter_token"));
    }
  }
  std::string price;
  if (JsonField(pod, "gpu_price_per_hour_micros") != nullptr) {
    price = MoneyText(pod, "gpu_price_per_hour_micros") + "/h GPU";
    if (JsonInteger(pod, "storage_price_per_hour_micros") > 0) {
      price += " + " + MoneyText(pod, "storage_price_per_hour_micros") + "/h storage";
    }
  }
  detail.Add("Price", price);
  detail.Add("Cost", MoneyText(pod, "cost_micros"));
  detail.Add("Uptime", DurationText(JsonInteger(pod, "uptime_s")));
  detail.Add("Created", TimeText(JsonText(pod, "created_at")) + " UTC");
  detail.Add("Actions", Join(JsonArray(pod, "actions"), ", "));
  return detail.Render();
}

std::string TemplateDetail(const boost::json::value& spec) {
  Detail detail;
  detail.Add("ID", JsonText(spec, "id"));
  detail.Add("Name", JsonText(spec, "name"));
  detail.Add("Description", JsonText(spec, "description"));
  detail.Add("Image", JsonText(spec, "image"));
  detail.Add("Command", Join(JsonArray(spec, "command"), " "));
  std::string env;
  if (const boost::json::value* vars = JsonField(spec, "env"); vars && vars->is_object()) {
    for (const auto& var : vars->as_object()) {
      env += (env.empty() ? "" : " ") + std::string(var.key()) + "=" + JsonText(*vars, var.key());
    }
  }
  detail.Add("Env", env);
  detail.Add("Ports", Join(JsonArray(spec, "ports"), ", "));
  detail.Add("Disk", GbText(spec, "container_disk_gb"));
  std::string volume = GbText(spec, "volume_gb");
  const std::string mount = JsonText(spec, "volume_mount_path");
  if (!volume.empty() && !mount.empty()) volume += " at " + mount;
  detail.Add("Volume", volume);
  detail.Add("Visibility", JsonBool(spec, "built_in") ? "built-in"
                           : JsonBool(spec, "public") ? "public"
                                                      : "private");
  return detail.Render();
}

std::string PullBar(int64_t current_bytes, int64_t total_bytes) {
  const auto size = [](int64_t bytes) {
    return bytes >= (int64_t{1} << 30)
               ? fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (int64_t{1} << 30))
               : fmt::format("{} MiB", bytes >> 20);
  };
  if (total_bytes <= 0) return "[...] " + size(current_bytes);
  constexpr int kWidth = 20;
  const int64_t done = std::clamp<int64_t>(current_bytes, 0, total_bytes);
  const int filled = static_cast<int>(done * kWidth / total_bytes);
  return fmt::format("[{}{}] {:3}% of {}", std::string(filled, '#'),
                     std::string(kWidth - filled, '-'), done * 100 / total_bytes,
                     size(total_bytes));
}

std::vector<std::string> SshArguments(const boost::json::value& pod, std::string_view user,
                                      int ssh_port, std::string& why_not) {
  const std::string id = JsonText(pod, "id");
  if (JsonText(pod, "state") != "running") {
    why_not = "pod " + id + " is " + JsonText(pod, "state") + "; start it (suanli pods start " +
              id + " --wait)";
    return {};
  }
  std::string host_port;
  for (const boost::json::value& mapping : JsonArray(pod, "port_mappings")) {
    if (JsonInteger(mapping, "container_port") == ssh_port)
      host_port = JsonText(mapping, "host_port");
  }
  if (host_port.empty() || host_port == "0") {
    why_not = "pod " + id + " publishes no port " + std::to_string(ssh_port) +
              (PortMappingsText(pod).empty() ? "" : " (it has " + PortMappingsText(pod) + ")") +
              "; deploy it from a template with 22/tcp, or pass --port";
    return {};
  }
  const std::string address = JsonText(pod, "node_address");
  if (address.empty()) {
    why_not =
        "the address of pod " + id + "'s node is unknown; its agent sets one with --public-address";
    return {};
  }
  return {"-p", host_port, std::string(user) + "@" + address};
}

std::string NodeDetail(const boost::json::value& node, const boost::json::array& pods) {
  Detail detail;
  detail.Add("ID", JsonText(node, "id"));
  detail.Add("Name", JsonText(node, "name"));
  detail.Add("State", NodeStateText(node));
  if (const std::string reason = JsonText(node, "drain_reason"); !reason.empty()) {
    detail.Add("Drained", reason + "; after a look, `suanli nodes uncordon` takes it back");
  }
  detail.Add("GPUs", NodeGpusText(node));
  detail.Add("GPUs in use", std::to_string(GpusInUse(node, pods)) + " of " +
                                std::to_string(JsonArray(node, "gpus").size()));
  detail.Add("vCPU", JsonText(node, "vcpu"));
  detail.Add("Memory", GbText(node, "memory_gb"));
  detail.Add("Disk", GbText(node, "disk_gb"));
  std::string labels;
  if (const boost::json::value* map = JsonField(node, "labels"); map && map->is_object()) {
    for (const auto& label : map->as_object()) {
      labels += (labels.empty() ? "" : " ") + std::string(label.key()) + "=" +
                JsonText(*map, label.key());
    }
  }
  detail.Add("Labels", labels);
  detail.Add("Address", OrDash(JsonText(node, "address")));
  detail.Add("Agent", JsonText(node, "agent_version"));
  detail.Add("Last heartbeat", TimeText(JsonText(node, "last_heartbeat")) + " UTC");
  std::string out = detail.Render();
  const boost::json::array& gpus = JsonArray(node, "gpus");
  if (!gpus.empty()) {
    TextTable table;
    table.AddColumn("INDEX", Align::kRight);
    table.AddColumn("TYPE", Align::kLeft);
    // GPUs with the same LINK share NVLink or a PCIe switch: multi-GPU pods get them together.
    table.AddColumn("LINK", Align::kRight);
    table.AddColumn("MEM GB", Align::kRight);
    table.AddColumn("UTIL", Align::kRight);
    table.AddColumn("USED GB", Align::kRight);
    table.AddColumn("TEMP", Align::kRight);
    table.AddColumn("POWER", Align::kRight);
    table.AddColumn("XID", Align::kRight);
    table.AddColumn("UUID", Align::kLeft);
    for (const boost::json::value& gpu : gpus) {
      // Health: the agent's last NVML reading of this GPU (none for simulated ones).
      const boost::json::value* health = nullptr;
      for (const boost::json::value& reading : JsonArray(node, "gpu_health")) {
        if (JsonText(reading, "index") == JsonText(gpu, "index")) health = &reading;
      }
      const auto figure = [&](std::string_view key, std::string_view unit, int decimals = 0) {
        const std::string text = health ? JsonText(*health, key) : "";
        if (text.empty()) return std::string("-");
        return fmt::format("{:.{}f}{}", std::strtod(text.c_str(), nullptr), decimals, unit);
      };
      const std::string mig = JsonText(gpu, "mig_profile");
      table.AddRow({JsonText(gpu, "index"),
                    JsonText(gpu, "type") + (mig.empty() ? "" : " MIG " + mig) +
                        (JsonBool(gpu, "simulated") ? " (simulated)" : ""),
                    OrDash(JsonText(gpu, "link_group")), JsonText(gpu, "memory_gb"),
                    figure("utilization_percent", "%"), figure("memory_used_gb", "", 1),
                    figure("temperature_c", "C"), figure("power_w", "W"), figure("xid_errors", ""),
                    JsonText(gpu, "uuid")});
    }
    for (const boost::json::value& reading : JsonArray(node, "gpu_health")) {
      if (const std::string problem = JsonText(reading, "problem"); !problem.empty()) {
        out += "GPU " + JsonText(reading, "index") + " cannot be read: " + problem + "\n";
      }
    }
    out += "\n" + table.Render();
  }
  return out;
}

std::string UserDetail(const boost::json::value& user) {
  Detail detail;
  detail.Add("ID", JsonText(user, "id"));
  detail.Add("Name", JsonText(user, "name"));
  detail.Add("Role", JsonText(user, "role"));
  detail.Add("Balance", MoneyText(user, "balance_micros"));
  detail.Add("Spend cap", JsonInteger(user, "spend_cap_per_hour_micros") > 0
                              ? MoneyText(user, "spend_cap_per_hour_micros") + "/h"
                              : "none");
  if (JsonInteger(user, "monthly_budget_micros") > 0) {
    detail.Add("Monthly budget", MoneyText(user, "monthly_budget_micros") + ", then " +
                                     JsonText(user, "budget_action"));
  }
  detail.Add("Created", TimeText(JsonText(user, "created_at")) + " UTC");
  if (JsonField(user, "max_pods") != nullptr) {
    std::string quota = std::to_string(JsonInteger(user, "max_pods")) + " pods, " +
                        std::to_string(JsonInteger(user, "max_pending_pods")) + " of them pending";
    if (JsonField(user, "max_endpoints") != nullptr) {
      quota += "; " + std::to_string(JsonInteger(user, "max_endpoints")) + " endpoints";
    }
    detail.Add("Quota", quota);
  }
  std::string out = detail.Render();
  for (const boost::json::value& notice : JsonArray(user, "notices")) {
    if (notice.is_string()) out += "notice: " + std::string(notice.as_string()) + "\n";
  }
  return out;
}

std::string BalanceDetail(const boost::json::value& balance) {
  Detail detail;
  detail.Add("Balance", MoneyText(balance, "balance_micros"));
  detail.Add("Spending", MoneyText(balance, "spend_rate_per_hour_micros") + "/h");
  detail.Add("Runway", JsonField(balance, "runway_s") == nullptr
                           ? "- (nothing is charged now)"
                           : SecondsOrNever(balance, "runway_s"));
  detail.Add("Spend cap", JsonInteger(balance, "spend_cap_per_hour_micros") > 0
                              ? MoneyText(balance, "spend_cap_per_hour_micros") + "/h"
                              : "none");
  detail.Add("Storage", MoneyText(balance, "storage_per_gb_month_micros") + " per GB-month");
  return detail.Render();
}

}  // namespace suanli::cli
