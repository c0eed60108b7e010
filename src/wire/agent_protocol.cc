#include "wire/agent_protocol.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cstdint>

#include "core/pod_state.h"
#include "net/base64.h"
#include "net/ssh_host_key.h"
#include "wire/json_fields.h"
#include "wire/views.h"

namespace suanli::wire {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

constexpr int64_t kMaxMemoryMb = 10'000'000;

json::array MappingsJson(const std::vector<core::PortMapping>& mappings) {
  json::array out;
  for (const core::PortMapping& mapping : mappings) {
    out.emplace_back(json::object{{"container_port", mapping.container_port},
                                  {"protocol", mapping.protocol},
                                  {"host_port", mapping.host_port}});
  }
  return out;
}

void ReadMappings(JsonFields& fields, std::vector<core::PortMapping>* out) {
  fields.Objects("port_mappings", kMaxPortMappings, [out](JsonFields& mapping) {
    core::PortMapping parsed;
    mapping.Int("container_port", &parsed.container_port, {1, 65535, true});
    mapping.String("protocol", &parsed.protocol, {.required = true, .max_length = 8});
    mapping.Int("host_port", &parsed.host_port, {1, 65535, true});
    out->push_back(std::move(parsed));
  });
}

// `text` cut to at most `limit` bytes, not inside a UTF-8 sequence (JSON parsers refuse half a
// character).
std::string ShortenUtf8(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end));
}

template <typename T>
Result<T> Finished(JsonFields& fields, T value) {
  if (Status status = fields.Finish(); !status.ok()) return status;
  return value;
}

}  // namespace

std::string EncodeNodeReport(const NodeReport& report) {
  json::array gpus;
  for (const core::GpuDevice& gpu : report.gpus) {
    json::object device{
        {"index", gpu.index},         {"uuid", gpu.uuid},
        {"type", gpu.type},           {"memory_mb", static_cast<int64_t>(gpu.memory_gb * 1024)},
        {"simulated", gpu.simulated}, {"link_group", gpu.link_group}};
    if (!gpu.mig_profile.empty()) {
      device["mig_profile"] = gpu.mig_profile;
      device["capacity_milli"] = gpu.capacity_milli;
    }
    gpus.emplace_back(std::move(device));
  }
  json::object body{{"vcpu", report.vcpu},
                    {"memory_gb", report.memory_gb},
                    {"disk_gb", report.disk_gb},
                    {"agent_version", report.agent_version},
                    {"gpus", std::move(gpus)}};
  if (!report.gpu_health.empty()) {
    json::array readings;
    for (const core::GpuHealth& reading : report.gpu_health) {
      readings.emplace_back(GpuHealthView(reading));
    }
    body["gpu_health"] = std::move(readings);
  }
  if (!report.gpu_measurements.empty()) {
    json::array measurements;
    for (const core::GpuMeasurement& gpu : report.gpu_measurements) {
      measurements.emplace_back(GpuMeasurementView(gpu));
    }
    body["gpu_measurements"] = std::move(measurements);
  }
  if (!report.pod_activity.empty()) {
    json::array pods;
    for (const PodActivity& pod : report.pod_activity) {
      pods.emplace_back(json::object{{"pod_id", pod.pod_id},
                                     {"cpu_percent", pod.cpu_percent},
                                     {"ssh_sessions", pod.ssh_sessions},
                                     {"ssh_known", pod.ssh_known}});
    }
    body["pod_activity"] = std::move(pods);
  }
  if (!report.name.empty()) body["name"] = report.name;
  if (!report.address.empty()) body["address"] = report.address;
  if (!report.labels.empty()) {
    json::object labels;
    for (const auto& [key, value] : report.labels) labels[key] = value;
    body["labels"] = std::move(labels);
  }
  return json::serialize(body);
}

Result<NodeReport> DecodeNodeReport(std::string_view text, NodeReportFor purpose) {
  Result<json::object> body = ParseJsonObject(text);
  if (!body.ok()) return body.status();
  JsonFields fields(*body);
  NodeReport report;
  if (purpose == NodeReportFor::kRegistration) {
    fields.String("name", &report.name, {.required = true, .max_length = kMaxNodeNameLength});
  }
  fields.Int("vcpu", &report.vcpu, {0, 100'000});
  fields.Int("memory_gb", &report.memory_gb, {0, 100'000'000});
  fields.Int("disk_gb", &report.disk_gb, {0, 1'000'000'000});
  fields.String("agent_version", &report.agent_version, {.max_length = kMaxAgentVersionLength});
  fields.String("address", &report.address, {.max_length = kMaxAddressLength});
  fields.StringMap("labels", &report.labels, kMaxNodeLabels);
  fields.Objects("gpus", kMaxNodeGpus, [&report](JsonFields& gpu) {
    core::GpuDevice device;
    gpu.Int("index", &device.index, {0, kMaxGpuIndex, true});
    gpu.String("uuid", &device.uuid, {.max_length = kMaxGpuTextLength});
    gpu.String("type", &device.type, {.required = true, .max_length = kMaxGpuTextLength});
    int64_t memory_mb = 0;
    gpu.Int64("memory_mb", &memory_mb, {0, kMaxMemoryMb});
    device.memory_gb = static_cast<double>(memory_mb) / 1024.0;
    gpu.Bool("simulated", &device.simulated);
    gpu.Int("link_group", &device.link_group, {0, kMaxGpuIndex});
    gpu.String("mig_profile", &device.mig_profile, {.max_length = kMaxGpuTextLength});
    gpu.Int("capacity_milli", &device.capacity_milli, {1, core::kMilliGpu});
    report.gpus.push_back(std::move(device));
  });
  fields.Objects("gpu_health", kMaxNodeGpus, [&report](JsonFields& reading) {
    core::GpuHealth gpu;
    reading.Int("index", &gpu.index, {0, kMaxGpuIndex, true});
    reading.Int("utilization_percent", &gpu.utilization_percent, {0, 100});
    reading.Number("memory_used_gb", &gpu.memory_used_gb, {0, 1e6});
    reading.Int("temperature_c", &gpu.temperature_c, {0, 200});
    reading.Number("power_w", &gpu.power_w, {0, 1e5});
    reading.Int64("ecc_uncorrected_errors", &gpu.ecc_uncorrected_errors, {0, INT64_MAX});
    reading.Int64("xid_errors", &gpu.xid_errors, {0, INT64_MAX});
    reading.Int("last_xid", &gpu.last_xid, {0, 1'000'000});
    reading.String("problem", &gpu.problem, {.max_length = kMaxProblemLength});
    report.gpu_health.push_back(std::move(gpu));
  });
  fields.Objects("gpu_measurements", kMaxNodeGpus, [&report](JsonFields& reading) {
    // Up to 100,000 GB/s and TFLOPS: ten times the fastest GPU made, as the probe's parser allows.
    constexpr double kMost = 100'000;
    core::GpuMeasurement gpu;
    reading.Int("index", &gpu.index, {0, kMaxGpuIndex, true});
    reading.Number("memory_bandwidth_gbps", &gpu.memory_bandwidth_gbps, {1e-3, kMost, true});
    reading.Number("fp16_tflops", &gpu.fp16_tflops, {1e-3, kMost, true});
    for (auto [key, figure] :
         {std::pair{"bf16_tflops", &gpu.bf16_tflops}, std::pair{"fp8_tflops", &gpu.fp8_tflops}}) {
      double value = 0;
      reading.Number(key, &value, {1e-3, kMost});
      if (value > 0) *figure = value;
    }
    report.gpu_measurements.push_back(gpu);
  });
  fields.Objects("pod_activity", kMaxDesiredPods, [&report](JsonFields& reading) {
    PodActivity pod;
    reading.String("pod_id", &pod.pod_id, {.required = true, .max_length = 64});
    reading.Number("cpu_percent", &pod.cpu_percent, {0, 1e6});
    reading.Int("ssh_sessions", &pod.ssh_sessions, {0, 1'000'000});
    reading.Bool("ssh_known", &pod.ssh_known);
    report.pod_activity.push_back(std::move(pod));
  });
  return Finished(fields, std::move(report));
}

std::string EncodeRegistration(const core::Node& node, std::string_view token) {
  return json::serialize(json::object{{"node", NodeView(node)}, {"token", token}});
}

Result<Registration> DecodeRegistration(std::string_view text) {
  Result<json::object> body = ParseJsonObject(text, "the server's answer to the registration");
  if (!body.ok()) return body.status();
  JsonFields fields(*body, UnknownFields::kIgnore);
  Registration registration;
  fields.String("token", &registration.node_token,
                {.required = true, .max_length = kMaxTokenLength});
  if (!fields.Object("node",
                     [&registration](JsonFields& node) {
                       node.String("id", &registration.node_id,
                                   {.required = true, .max_length = 64});
                     }) &&
      fields.ok()) {
    fields.Fail("node: is required");
  }
  if (fields.ok() && (registration.node_token.empty() || registration.node_id.empty())) {
    fields.Fail("the node's id and token must not be empty");
  }
  return Finished(fields, std::move(registration));
}

std::string SelectLogLines(std::string_view logs, int tail, std::optional<core::TimePoint> since,
                           bool timestamps) {
  // The times are fixed-width ("2026-03-01T10:00:00.123456789Z"), so they compare as text.
  std::string from;
  if (since) {
    from = core::FormatTime(*since);  // "...:00.123Z"
    from.insert(from.size() - 1, "000000");
  }
  std::vector<std::string_view> lines;
  while (!logs.empty()) {
    const size_t end = logs.find('\n');
    const std::string_view line =
        logs.substr(0, end == std::string_view::npos ? logs.size() : end + 1);
    logs.remove_prefix(line.size());
    if (!from.empty() && line.substr(0, from.size()) < from) continue;
    lines.push_back(line);
  }
  size_t first = 0;
  if (tail >= 0 && lines.size() > static_cast<size_t>(tail)) {
    first = lines.size() - static_cast<size_t>(tail);
  }
  std::string out;
  for (size_t i = first; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (!timestamps) {
      const size_t space = line.find(' ');
      if (space != std::string_view::npos) line.remove_prefix(space + 1);
    }
    out += line;
  }
  return out;
}

std::string EncodePodReport(const PodReport& report) {
  json::object body{{"seq", report.seq},
                    {"state", core::PodStateName(report.state)},
                    {"at", core::FormatTime(report.at)}};
  if (!report.container_id.empty()) body["container_id"] = report.container_id;
  if (!report.port_mappings.empty()) body["port_mappings"] = MappingsJson(report.port_mappings);
  if (!report.message.empty()) {
    body["message"] = ShortenUtf8(report.message, kMaxReportMessageLength);
  }
  if (report.exit_code) body["exit_code"] = *report.exit_code;
  if (report.ready) body["ready"] = *report.ready;
  if (report.pull) {
    body["pull"] = json::object{{"current_bytes", report.pull->current_bytes},
                                {"total_bytes", report.pull->total_bytes}};
  }
  if (report.move) {
    body["move"] = json::object{{"id", report.move->move_id},
                                {"bytes", report.move->bytes},
                                {"total_bytes", report.move->total_bytes},
                                {"elapsed_ms", report.move->elapsed_ms},
                                {"restarts", report.move->restarts},
                                {"done", report.move->done},
                                {"sha256", report.move->sha256}};
  }
  if (report.logs) body["logs_base64"] = net::Base64Encode(*report.logs);
  return json::serialize(body);
}

Result<PodReport> DecodePodReport(std::string_view text) {
  Result<json::object> body = ParseJsonObject(text);
  if (!body.ok()) return body.status();
  JsonFields fields(*body);
  PodReport report;
  std::string state;
  fields.Int64("seq", &report.seq, {1, INT64_MAX, true});
  fields.String("state", &state, {.required = true, .max_length = 32});
  fields.Time("at", &report.at, {.required = true});
  fields.String("container_id", &report.container_id, {.max_length = kMaxContainerIdLength});
  fields.String("message", &report.message, {.max_length = kMaxReportMessageLength});
  fields.OptionalBool("ready", &report.ready);
  core::PullProgress progress;
  if (fields.Object("pull", [&progress](JsonFields& pull) {
        pull.Int64("current_bytes", &progress.current_bytes, {0, INT64_MAX, true});
        pull.Int64("total_bytes", &progress.total_bytes, {0, INT64_MAX, true});
      })) {
    report.pull = progress;
  }
  MoveProgress move;
  if (fields.Object("move", [&move](JsonFields& read) {
        read.String("id", &move.move_id, {.required = true, .max_length = 64});
        read.Int64("bytes", &move.bytes, {0, INT64_MAX, true});
        read.Int64("total_bytes", &move.total_bytes, {0, INT64_MAX, true});
        read.Int64("elapsed_ms", &move.elapsed_ms, {0, INT64_MAX, true});
        read.Int("restarts", &move.restarts, {0, 1'000'000});
        read.Bool("done", &move.done);
        read.String("sha256", &move.sha256, {.max_length = 64});
      })) {
    report.move = move;
  }
  fields.OptionalInt("exit_code", &report.exit_code, {-1'000'000, 1'000'000});
  std::string logs_base64;
  fields.String("logs_base64", &logs_base64, {.max_length = (kMaxReportedLogBytes + 2) / 3 * 4});
  if (body->contains("logs_base64") && fields.ok()) {
    Result<std::string> logs = net::Base64Decode(logs_base64);
    if (!logs.ok()) {
      fields.Fail("logs_base64: " + logs.status().message());
    } else {
      report.logs = std::move(*logs);
    }
  }
  ReadMappings(fields, &report.port_mappings);
  if (fields.ok()) {
    Result<core::PodState> parsed = core::ParsePodState(state);
    if (!parsed.ok() || *parsed == core::PodState::kPending) {
      fields.Fail(
          "state: must be starting, running, stopping, stopped, exited, failed or terminated");
    } else {
      report.state = *parsed;
    }
  }
  return Finished(fields, std::move(report));
}

std::string EncodeDesiredPods(const DesiredPods& desired, core::TimePoint now) {
  json::array pods;
  for (const DesiredPod& entry : desired.pods) {
    json::object view =
        PodView(entry.pod, {.now = now, .node_address = {}, .with_jupyter_token = true});
    json::array keys;
    for (const std::string& key : entry.ssh_keys) keys.emplace_back(key);
    view["ssh_keys"] = std::move(keys);
    if (!entry.pod.ssh_host_key_seed.empty()) {
      view["ssh_host_key_seed_base64"] = net::Base64Encode(entry.pod.ssh_host_key_seed);
    }
    pods.emplace_back(std::move(view));
  }
  return json::serialize(
      json::object{{"generation", desired.generation}, {"pods", std::move(pods)}});
}

namespace {

// An id the agent makes names and paths of (containers, engine volumes, directories under
// --shared-volumes): the control plane's ids are letters, digits, '_' and '-', and anything else
// from a server (a "../") is refused before it reaches a path.
bool IsIdText(std::string_view id) {
  return !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

}  // namespace

Result<DesiredPods> DecodeDesiredPods(std::string_view text) {
  Result<json::object> body = ParseJsonObject(text, "the server's desired pods");
  if (!body.ok()) return body.status();
  JsonFields fields(*body, UnknownFields::kIgnore);
  DesiredPods desired;
  fields.Int64("generation", &desired.generation, {0, INT64_MAX, true});
  if (fields.Raw("pods") == nullptr) fields.Fail("pods: is required");
  fields.Objects("pods", kMaxDesiredPods, [&desired](JsonFields& view) {
    DesiredPod entry;
    core::Pod& pod = entry.pod;
    std::string desired_state, state;
    std::vector<std::string> ports;
    view.String("id", &pod.id, {.required = true, .max_length = 64});
    view.String("name", &pod.name);
    view.String("owner_id", &pod.owner_id, {.max_length = 64});
    view.String("image", &pod.image, {.required = true, .max_length = 1024});
    view.StringList("command", &pod.command, 256);
    view.StringMap("env", &pod.env);
    view.StringList("ports", &ports);
    view.String("gpu_type", &pod.gpu_type, {.max_length = kMaxGpuTextLength});
    view.Int("gpu_count", &pod.gpu_count, {0, static_cast<int>(kMaxNodeGpus)});
    view.Int("gpu_milli", &pod.gpu_milli, {1, core::kMilliGpu});  // absent (older servers): whole
    if (const boost::json::value* indices = view.Raw("gpu_indices"); indices != nullptr) {
      if (!indices->is_array() || indices->as_array().size() > kMaxNodeGpus) {
        view.Fail("gpu_indices: must be an array of GPU indices");
      } else {
        for (const boost::json::value& index : indices->as_array()) {
          if (!index.is_int64() || index.as_int64() < 0 || index.as_int64() > kMaxGpuIndex) {
            view.Fail("gpu_indices: every index must be an integer from 0 to " +
                      std::to_string(kMaxGpuIndex));
            break;
          }
          pod.gpu_indices.push_back(static_cast<int>(index.as_int64()));
        }
      }
    }
    view.Int("vcpu", &pod.vcpu, {0, 100'000});
    view.Int("memory_gb", &pod.memory_gb, {0, 100'000'000});
    view.Int("container_disk_gb", &pod.container_disk_gb, {0, 1'000'000'000});
    view.Int("volume_gb", &pod.volume_gb, {0, 1'000'000'000});
    view.String("volume_mount_path", &pod.volume_mount_path, {.max_length = 4096});
    view.Objects("volumes", kMaxPodVolumes, [&pod](JsonFields& read) {
      core::VolumeMount mount;
      read.String("volume_id", &mount.volume_id, {.required = true, .max_length = 64});
      read.String("mount_path", &mount.mount_path, {.required = true, .max_length = 4096});
      read.Bool("read_only", &mount.read_only);
      read.Bool("shared", &mount.shared);
      read.Int("size_gb", &mount.size_gb, {0, 1'000'000'000});
      pod.volumes.push_back(std::move(mount));
    });
    view.Objects("moves", kMaxPodVolumes + 1, [&pod](JsonFields& read) {
      core::VolumeMove move;
      read.String("id", &move.id, {.required = true, .max_length = 64});
      read.String("volume", &move.volume, {.required = true, .max_length = 128});
      read.String("from_node_id", &move.from_node_id, {.required = true, .max_length = 64});
      pod.moves.push_back(std::move(move));
    });
    view.String("desired_state", &desired_state, {.required = true, .max_length = 32});
    view.String("state", &state, {.required = true, .max_length = 32});
    view.Int64("generation", &pod.generation, {0, INT64_MAX});
    view.Int64("restarts", &pod.restarts, {0, INT64_MAX});
    view.String("node_id", &pod.node_id, {.max_length = 64});
    view.String("jupyter_token", &pod.jupyter_token, {.max_length = kMaxTokenLength});
    view.String("pre_stop_command", &pod.pre_stop_command, {.max_length = 4096});
    view.Int64("idle_stop_after_s", &pod.idle_stop_after_s, {0, INT64_MAX});
    view.StringList("ssh_keys", &entry.ssh_keys, 256);
    std::string host_key_seed;
    view.String("ssh_host_key_seed_base64", &host_key_seed, {.max_length = 64});
    if (!view.ok()) return;
    if (!host_key_seed.empty()) {
      Result<std::string> seed = net::Base64Decode(host_key_seed);
      if (!seed.ok() || seed->size() != net::kSshHostKeySeedBytes) {
        return view.Fail("ssh_host_key_seed_base64: not a 32-byte seed in base64");
      }
      pod.ssh_host_key_seed = std::move(*seed);
    }
    if (!IsIdText(pod.id)) return view.Fail("id: '" + pod.id + "' is not a pod id");
    for (const core::VolumeMount& mount : pod.volumes) {
      if (!IsIdText(mount.volume_id)) {
        return view.Fail("volumes: '" + mount.volume_id + "' is not a volume id");
      }
    }
    for (const std::string& port_text : ports) {
      Result<core::PortSpec> port = ParsePort(port_text);
      if (!port.ok()) return view.Fail("ports: " + port.status().message());
      pod.ports.push_back(*port);
    }
    if (desired_state != "running" && desired_state != "stopped" && desired_state != "terminated") {
      return view.Fail("desired_state: must be running, stopped or terminated, got '" +
                       desired_state + "'");
    }
    pod.desired = ParseDesiredState(desired_state);
    Result<core::PodState> parsed = core::ParsePodState(state);
    if (!parsed.ok()) return view.Fail("state: " + parsed.status().message());
    pod.state = *parsed;
    desired.pods.push_back(std::move(entry));
  });
  return Finished(fields, std::move(desired));
}

}  // namespace suanli::wire
