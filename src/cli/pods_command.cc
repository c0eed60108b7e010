// suanli pods: create, list, inspect, stop, start, restart, remove and wait for pods.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <memory>
#include <ostream>

#include "cli/api_command.h"
#include "cli/api_views.h"
#include "cli/flags.h"
#include "cli/pod_wait.h"

namespace suanli::cli {
namespace {

const std::vector<std::string> kPodStates = {"pending", "starting", "running", "stopping",
                                             "stopped", "exited",   "failed",  "terminated"};

struct PodsFlags {
  bool json = false;
  std::string id;
  // create
  std::string name;
  std::string template_id;
  std::string image;
  std::string gpu_type;
  std::optional<int> gpu_count;
  std::optional<int> vcpu;
  std::optional<int> memory_gb;
  std::optional<int> disk_gb;
  std::optional<int> volume_gb;
  std::string volume_path;
  std::vector<std::string> env;
  std::vector<std::string> ports;
  std::vector<std::string> selector;
  bool interruptible = false;
  bool wait = false;
  double timeout_s = 300;
  // rm
  bool force = false;
  // wait
  std::string state = "running";
};

std::chrono::milliseconds Milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// "pod_3k2 running" and the reason when there is one: the id first, for scripts.
std::string PodLine(const boost::json::value& pod) {
  std::string line = JsonText(pod, "id") + " " + JsonText(pod, "state");
  const std::string reason = JsonText(pod, "state_reason");
  if (!reason.empty()) line += " (" + reason + ")";
  return line + "\n";
}

core::Result<boost::json::object> CreateBody(const PodsFlags& flags) {
  if (flags.template_id.empty() && flags.image.empty()) {
    return core::InvalidArgumentError(
        "a pod needs --template or --image; see `suanli templates` for the templates");
  }
  boost::json::object body;
  auto set_text = [&body](const char* key, const std::string& value) {
    if (!value.empty()) body[key] = value;
  };
  auto set_int = [&body](const char* key, const std::optional<int>& value) {
    if (value) body[key] = *value;
  };
  set_text("name", flags.name);
  set_text("template", flags.template_id);
  set_text("image", flags.image);
  set_text("gpu_type", flags.gpu_type);
  set_int("gpu_count", flags.gpu_count);
  set_int("vcpu", flags.vcpu);
  set_int("memory_gb", flags.memory_gb);
  set_int("container_disk_gb", flags.disk_gb);
  set_int("volume_gb", flags.volume_gb);
  set_text("volume_mount_path", flags.volume_path);
  if (!flags.env.empty()) {
    core::Result<boost::json::object> env = ParseKeyValues(flags.env, "--env");
    if (!env.ok()) return env.status();
    body["env"] = std::move(*env);
  }
  if (!flags.selector.empty()) {
    core::Result<boost::json::object> selector = ParseKeyValues(flags.selector, "--selector");
    if (!selector.ok()) return selector.status();
    body["node_selector"] = std::move(*selector);
  }
  if (!flags.ports.empty()) {
    boost::json::array ports;
    for (const std::string& port : flags.ports) ports.emplace_back(port);
    body["ports"] = std::move(ports);
  }
  if (flags.interruptible) body["interruptible"] = true;
  return body;
}

core::Status RunCreate(const PodsFlags& flags, CommandContext& context) {
  core::Result<boost::json::object> body = CreateBody(flags);
  if (!body.ok()) return body.status();
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  core::Result<boost::json::value> pod = (*api)->Post("/v1/pods", *body);
  if (!pod.ok() || !flags.wait) return PrintResult(context, flags.json, pod, PodLine);
  const std::string id = JsonText(*pod, "id");
  core::Result<boost::json::value> running =
      WaitForPodState(**api, *context.api_env, id, "running", Milliseconds(flags.timeout_s));
  if (!running.ok()) {
    return running.status().WithContext("created " + id + ", but it did not start");
  }
  return PrintResult(context, flags.json, running, [](const boost::json::value& ready) {
    return PodLine(ready) + PodDetail(ready);
  });
}

core::Status RunList(const PodsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  core::Result<boost::json::value> pods = (*api)->Get("/v1/pods");
  return PrintResult(context, flags.json, pods, [&context](const boost::json::value& list) {
    const boost::json::array& rows = JsonArray(list, "pods");
    if (rows.empty()) {
      context.err << "no pods; create one with `suanli pods create --template NAME --gpu TYPE`\n";
      return std::string();
    }
    return PodsTable(rows);
  });
}

core::Status RunGet(const PodsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Get(IdTarget("pods", flags.id)), PodDetail);
}

core::Status RunHistory(const PodsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Get(IdTarget("pods", flags.id, "/transitions")),
                     [](const boost::json::value& list) {
                       return TransitionsTable(JsonArray(list, "transitions"));
                     });
}

core::Status RunAction(const PodsFlags& flags, CommandContext& context, std::string_view action) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json,
      (*api)->Post(IdTarget("pods", flags.id, "/" + std::string(action)), boost::json::object()),
      PodLine);
}

core::Status RunRemove(const PodsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json,
                     (*api)->Delete(IdTarget("pods", flags.id, flags.force ? "?force=true" : "")),
                     PodLine);
}

core::Status RunWait(const PodsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json,
                     WaitForPodState(**api, *context.api_env, flags.id, flags.state,
                                     Milliseconds(flags.timeout_s)),
                     PodLine);
}

void AddId(CLI::App& command, PodsFlags& flags) {
  command.add_option("id", flags.id, "The pod's ID")->required();
}

void AddTimeout(CLI::App& command, PodsFlags& flags) {
  command.add_option("--timeout", flags.timeout_s, "Seconds to wait before giving up (300)")
      ->check(PositiveNumber(7 * 86400));
}

}  // namespace

CommandRun DefinePodsCommand(CLI::App& command) {
  auto flags = std::make_shared<PodsFlags>();
  CommandGroup group(command);
  AddJsonFlag(command, flags->json);

  CLI::App& list = group.Add("list", "List your pods (the default)",
                             [flags](CommandContext& context) { return RunList(*flags, context); });
  AddJsonFlag(list, flags->json);

  CLI::App& create =
      group.Add("create", "Deploy a pod from a template or an image",
                [flags](CommandContext& context) { return RunCreate(*flags, context); });
  create.add_option("--template", flags->template_id, "Template ID or name (see `templates`)");
  create.add_option("--image", flags->image, "Container image, e.g. pytorch/pytorch:latest");
  create.add_option("--gpu", flags->gpu_type, "GPU type, e.g. 'RTX 4090' or a100-80g");
  create.add_option("--gpu-count", flags->gpu_count, "Number of GPUs (1)")
      ->check(PositiveInteger(64));
  create.add_option("--name", flags->name, "A name for people");
  create.add_option("--vcpu", flags->vcpu, "vCPUs")->check(PositiveInteger(4096));
  create.add_option("--memory-gb", flags->memory_gb, "Memory in GB")
      ->check(PositiveInteger(1 << 20));
  create.add_option("--disk-gb", flags->disk_gb, "Container disk in GB")
      ->check(PositiveInteger(1 << 20));
  create.add_option("--volume-gb", flags->volume_gb, "A persistent volume of this many GB")
      ->check(CLI::Range(0, 1 << 20));
  create.add_option("--volume-path", flags->volume_path, "Where the volume is mounted");
  create.add_option("--env", flags->env, "An environment variable, KEY=VALUE (repeatable)");
  create.add_option("--port", flags->ports,
                    "A port to expose, e.g. 22/tcp, 8888/http (repeatable)");
  create.add_option("--selector", flags->selector, "Only nodes with this label, KEY=VALUE");
  create.add_flag("--interruptible", flags->interruptible,
                  "Cheaper, but on-demand pods may preempt it");
  create.add_flag("--wait", flags->wait, "Wait until the pod is running");
  AddTimeout(create, *flags);
  AddJsonFlag(create, flags->json);

  CLI::App& get = group.Add("get", "Show one pod: state, GPUs, ports, price and cost",
                            [flags](CommandContext& context) { return RunGet(*flags, context); });
  AddId(get, *flags);
  AddJsonFlag(get, flags->json);

  CLI::App& history =
      group.Add("history", "Show a pod's state transitions",
                [flags](CommandContext& context) { return RunHistory(*flags, context); });
  AddId(history, *flags);
  AddJsonFlag(history, flags->json);

  for (const char* action : {"stop", "start", "restart"}) {
    const std::string name = action;
    const std::string help = name == "stop"    ? "Stop a pod: GPU billing stops, the volume stays"
                             : name == "start" ? "Start a stopped pod again"
                                               : "Restart a pod's container";
    CLI::App& sub = group.Add(name, help, [flags, name](CommandContext& context) {
      return RunAction(*flags, context, name);
    });
    AddId(sub, *flags);
    AddJsonFlag(sub, flags->json);
  }

  CLI::App& remove =
      group.Add("rm", "Terminate a pod (with --force even when its volume may hold data)",
                [flags](CommandContext& context) { return RunRemove(*flags, context); });
  AddId(remove, *flags);
  remove.add_flag("--force", flags->force, "Terminate even when the volume may hold data");
  AddJsonFlag(remove, flags->json);

  CLI::App& wait = group.Add("wait", "Wait until a pod reaches a state (running by default)",
                             [flags](CommandContext& context) { return RunWait(*flags, context); });
  AddId(wait, *flags);
  wait.add_option("--state", flags->state, "The state to wait for")
      ->check(CLI::IsMember(kPodStates));
  AddTimeout(wait, *flags);
  AddJsonFlag(wait, flags->json);
  return group.Build();
}

}  // namespace suanli::cli
