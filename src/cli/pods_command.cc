// suanli pods: create, list, inspect, stop, start, restart, remove and wait for pods, read their
// logs, and log into them over SSH.
#include <unistd.h>

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <string_view>

#include "cli/api_client.h"
#include "cli/api_command.h"
#include "cli/api_views.h"
#include "cli/files.h"
#include "cli/flags.h"
#include "cli/pod_wait.h"
#include "net/http_client.h"

namespace suanli::cli {
namespace {

// The pod states, and "ready": running with every port answering.
const std::vector<std::string> kWaitStates = {"pending", "starting",   "running",
                                              "ready",   "stopping",   "stopped",
                                              "exited",  "terminated", "failed"};

struct PodsFlags {
  bool json = false;
  std::string id;
  // create
  std::string name;
  std::string project;
  std::string template_id;
  std::string image;
  std::string gpu_type;
  std::string gpu_count;  // "2", or a share of one GPU: "0.5"
  std::optional<int> vcpu;
  std::optional<int> memory_gb;
  std::optional<int> disk_gb;
  std::optional<int> volume_gb;
  std::string volume_path;
  std::vector<std::string> volumes;  // NAME:/path[:ro]
  std::vector<std::string> env;
  std::vector<std::string> ports;
  std::vector<std::string> selector;
  bool interruptible = false;
  std::string stop_after;
  std::string terminate_after_stopped;
  bool terminate_deletes_volume = false;
  std::string idle_stop_after;
  std::string pre_stop_command;
  bool queue = false;
  bool wait = false;
  double timeout_s = 300;
  // rm
  bool force = false;
  // wait
  std::string state = "running";
  // logs
  std::optional<int> tail;
  bool follow = false;
  bool timestamps = false;
  // ssh
  std::string user = "root";
  int ssh_port = 22;
  bool print = false;
  std::string identity;
  std::vector<std::string> remote_command;
};

std::chrono::milliseconds Milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// "pod_3k2 running" and the reason when there is one: the id first, for scripts, then the state
// the pod is in. A stop or terminate that its node has yet to carry out shows where it is going
// ("pod_3k2 running -> terminated (terminated by its owner)"), so that the line never claims a
// state the pod is not in.
std::string PodLine(const boost::json::value& pod) {
  const std::string state = JsonText(pod, "state");
  const std::string desired = JsonText(pod, "desired_state");
  const bool down = state == "stopped" || state == "exited" || state == "failed";
  std::string line = JsonText(pod, "id") + " " + state;
  if ((desired == "terminated" && state != "terminated") ||
      (desired == "stopped" && !down && state != "terminated")) {
    line += " -> " + desired;
  }
  const std::string reason = JsonText(pod, "state_reason");
  if (!reason.empty()) line += " (" + reason + ")";
  return line + "\n";
}

// "2" or "0.5" as the API's gpu_count: whole GPUs 1 to 64, or a share of one with at most three
// decimals.
core::Result<boost::json::value> GpuCount(const std::string& text, std::string_view flag) {
  const std::string rule = std::string(flag) +
                           ": give a whole number of GPUs from 1 to 64 or a share of one GPU "
                           "from 0.001 to 0.999 (0.5 is half a GPU), not '" +
                           text + "'";
  const size_t dot = text.find('.');
  const std::string whole = text.substr(0, dot);
  const std::string decimals = dot == std::string::npos ? "" : text.substr(dot + 1);
  auto digits = [](const std::string& part) {
    return std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (text.empty() || !digits(whole) || !digits(decimals) || whole.size() > 2 ||
      decimals.size() > 3 || (dot != std::string::npos && decimals.empty())) {
    return core::InvalidArgumentError(rule);
  }
  const int count = whole.empty() ? 0 : std::stoi(whole);
  const int milli = decimals.empty() ? 0 : std::stoi((decimals + "00").substr(0, 3));
  if (milli == 0 && count >= 1 && count <= 64) return boost::json::value(count);
  if (count == 0 && milli > 0) return boost::json::value(milli / 1000.0);
  return core::InvalidArgumentError(rule);
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
  set_text("project", flags.project);
  set_text("template", flags.template_id);
  set_text("image", flags.image);
  // --gpu TYPE:COUNT ("4090:0.5", "a100:2"), or --gpu TYPE with --gpu-count.
  std::string gpu_type = flags.gpu_type;
  std::string gpu_count = flags.gpu_count;
  std::string_view count_flag = "--gpu-count";
  if (const size_t colon = gpu_type.rfind(':'); colon != std::string::npos) {
    if (!gpu_count.empty()) {
      return core::InvalidArgumentError("--gpu " + gpu_type +
                                        " already names a count; leave out --gpu-count");
    }
    gpu_count = gpu_type.substr(colon + 1);
    gpu_type.resize(colon);
    count_flag = "--gpu TYPE:COUNT";
  }
  set_text("gpu_type", gpu_type);
  if (!gpu_count.empty()) {
    core::Result<boost::json::value> count = GpuCount(gpu_count, count_flag);
    if (!count.ok()) return count.status();
    body["gpu_count"] = *count;
  }
  set_int("vcpu", flags.vcpu);
  set_int("memory_gb", flags.memory_gb);
  set_int("container_disk_gb", flags.disk_gb);
  set_int("volume_gb", flags.volume_gb);
  set_text("volume_mount_path", flags.volume_path);
  if (!flags.volumes.empty()) {
    core::Result<boost::json::array> volumes = ParseVolumeFlags(flags.volumes);
    if (!volumes.ok()) return volumes.status();
    body["volumes"] = std::move(*volumes);
  }
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
  // As typed ("2h", "1800"): the server parses and checks them, and names the field when wrong.
  if (!flags.stop_after.empty()) body["stop_after"] = flags.stop_after;
  if (!flags.idle_stop_after.empty()) body["idle_stop_after"] = flags.idle_stop_after;
  if (!flags.terminate_after_stopped.empty()) {
    body["terminate_after_stopped"] = flags.terminate_after_stopped;
  }
  if (flags.terminate_deletes_volume) body["terminate_deletes_volume"] = true;
  if (!flags.pre_stop_command.empty()) body["pre_stop_command"] = flags.pre_stop_command;
  if (flags.queue) body["queue"] = true;
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
  core::Result<boost::json::value> running = WaitForPodState(
      **api, *context.api_env, id, "ready", Milliseconds(flags.timeout_s), &context.err);
  if (!running.ok()) {
    return running.status().WithContext("created " + id + ", but it did not start");
  }
  return PrintResult(context, flags.json, running, [&api](const boost::json::value& ready) {
    return PodLine(ready) + PodDetail(ready, (*api)->config().url);
  });
}

core::Status RunList(const PodsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  const std::string target =
      flags.project.empty() ? "/v1/pods" : "/v1/pods?project=" + net::PercentEncode(flags.project);
  core::Result<boost::json::value> pods = (*api)->GetEveryPage(target, "pods");
  return PrintResult(context, flags.json, pods, [&](const boost::json::value& list) {
    const boost::json::array& rows = JsonArray(list, "pods");
    if (rows.empty()) {
      context.err << (flags.project.empty() ? "no pods"
                                            : "project " + flags.project + " has no pods")
                  << "; create one with `suanli pods create --template NAME --gpu TYPE"
                  << (flags.project.empty() ? "" : " --project " + flags.project) << "`\n";
      return std::string();
    }
    return PodsTable(rows);
  });
}

core::Status RunGet(const PodsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json, (*api)->Get(IdTarget("pods", flags.id)),
      [&api](const boost::json::value& pod) { return PodDetail(pod, (*api)->config().url); });
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
  core::Result<boost::json::value> pod =
      (*api)->Post(IdTarget("pods", flags.id, "/" + std::string(action)), boost::json::object());
  if (!pod.ok() || !flags.wait) return PrintResult(context, flags.json, pod, PodLine);
  // A stop ends when the node says the container has stopped; a start or restart when it runs
  // again and its ports answer.
  return PrintResult(
      context, flags.json,
      WaitForPodState(**api, *context.api_env, flags.id, action == "stop" ? "stopped" : "ready",
                      Milliseconds(flags.timeout_s), &context.err),
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
                                     Milliseconds(flags.timeout_s), &context.err),
                     PodLine);
}

// Prints the lines of `text` that were not printed before. With --follow, lines are asked for with
// their times (the agent writes them fixed-width UTC, so they compare as text) and each new batch
// starts at the last time seen, which the engine includes again: lines at exactly that time that
// were printed already are skipped.
class LogPrinter {
 public:
  LogPrinter(std::ostream& out, bool keep_timestamps) : out_(out), keep_(keep_timestamps) {}

  void Print(std::string_view text) {
    std::multiset<std::string> printed_at_last = printed_at_last_;
    while (!text.empty()) {
      const size_t end = text.find('\n');
      const std::string_view line = text.substr(0, end);
      text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
      const size_t space = line.find(' ');
      const std::string_view time = line.substr(0, space);
      if (time < last_time_) continue;
      if (time == last_time_) {
        const auto seen = printed_at_last.find(std::string(line));
        if (seen != printed_at_last.end()) {
          printed_at_last.erase(seen);
          continue;
        }
      } else {
        last_time_ = std::string(time);
        printed_at_last_.clear();
      }
      printed_at_last_.insert(std::string(line));
      const std::string_view shown =
          keep_ || space == std::string_view::npos ? line : line.substr(space + 1);
      out_ << shown << '\n';
    }
    out_.flush();
  }

  const std::string& last_time() const { return last_time_; }

 private:
  std::ostream& out_;
  const bool keep_;
  std::string last_time_;
  std::multiset<std::string> printed_at_last_;  // the lines at last_time_
};

bool IsDownState(std::string_view state) {
  return state == "stopped" || state == "exited" || state == "failed" || state == "terminated";
}

core::Status RunLogs(const PodsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  const std::string logs_target = IdTarget("pods", flags.id, "/logs");
  std::string query = flags.follow || flags.timestamps ? "?timestamps=true" : "?timestamps=false";
  if (flags.tail) query += "&tail=" + std::to_string(*flags.tail);
  core::Result<std::string> text = (*api)->GetText(logs_target + query);
  if (!text.ok()) return text.status();
  if (!flags.follow) {
    context.out << *text;
    return core::Status::Ok();
  }
  LogPrinter printer(context.out, flags.timestamps);
  printer.Print(*text);
  // Until Ctrl-C (which ends the process) or the pod stops.
  while (true) {
    context.api_env->sleep(std::chrono::seconds(1));
    core::Result<boost::json::value> pod = (*api)->Get(IdTarget("pods", flags.id));
    if (!pod.ok()) return pod.status();
    const std::string state = JsonText(*pod, "state");
    std::string since_query = "?timestamps=true";
    if (!printer.last_time().empty()) {
      since_query += "&since=" + net::PercentEncode(printer.last_time());
    }
    text = (*api)->GetText(logs_target + since_query);
    if (text.ok()) {
      printer.Print(*text);
    } else if (text.status().code() != core::StatusCode::kFailedPrecondition) {
      return text.status();
    }
    if (!text.ok() || IsDownState(state)) {
      context.err << "pod " << flags.id << " is " << (text.ok() ? state : "no longer on a node")
                  << "; no more logs\n";
      return core::Status::Ok();
    }
  }
}

// The known_hosts file of suanli's pods, beside the login file, with `alias`'s line made `key`:
// each pod's own host key (the server made it with the pod), so ssh checks it from the first
// login, and it stays right after the pod restarts or moves.
core::Result<std::string> RememberHostKey(const ApiEnvironment& env, const std::string& alias,
                                          const std::string& key) {
  const std::string config = ConfigFilePath(env);
  if (config.empty())
    return core::FailedPreconditionError("neither XDG_CONFIG_HOME nor HOME is set");
  const std::string path = (std::filesystem::path(config).parent_path() / "known_hosts").string();
  std::string text;
  if (core::Result<std::string> known = ReadFile(path); known.ok()) {
    std::istringstream lines(*known);
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with(alias + " ")) text += line + "\n";
    }
  }
  text += alias + " " + key + "\n";
  SUANLI_RETURN_IF_ERROR(WritePrivateFile(path, text));
  return path;
}

// Runs ssh in this process's place (so the terminal, signals and exit status are ssh's own), or
// prints the command for scripts and other SSH clients.
core::Status RunSsh(const PodsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  core::Result<boost::json::value> pod = (*api)->Get(IdTarget("pods", flags.id));
  if (!pod.ok()) return pod.status();
  std::string why_not;
  std::vector<std::string> arguments = SshArguments(*pod, flags.user, flags.ssh_port, why_not);
  if (arguments.empty()) return core::FailedPreconditionError(why_not);
  // Host keys are known per pod, not per host and port: a port is handed to another pod once this
  // one stops. A pod that has a host key of its own is held to it; one made before host keys
  // has its first key accepted and a changed one refused.
  const std::string alias = "suanli-" + JsonText(*pod, "id");
  std::vector<std::string> options = {"ssh", "-o", "HostKeyAlias=" + alias};
  const std::string host_key = JsonText(*pod, "ssh_host_key");
  core::Result<std::string> known_hosts =
      host_key.empty() ? core::Result<std::string>(core::NotFoundError("no host key"))
                       : RememberHostKey(*context.api_env, alias, host_key);
  if (known_hosts.ok()) {
    options.insert(options.end(),
                   {"-o", "UserKnownHostsFile=" + *known_hosts, "-o", "StrictHostKeyChecking=yes",
                    "-o", "HostKeyAlgorithms=ssh-ed25519"});
  } else {
    options.insert(options.end(), {"-o", "StrictHostKeyChecking=accept-new"});
  }
  if (!flags.identity.empty()) options.insert(options.end(), {"-i", flags.identity});
  arguments.insert(arguments.begin(), options.begin(), options.end());
  arguments.insert(arguments.end(), flags.remote_command.begin(), flags.remote_command.end());
  if (flags.print) {
    std::string line;
    for (const std::string& argument : arguments) line += (line.empty() ? "" : " ") + argument;
    context.out << line << "\n";
    return core::Status::Ok();
  }
  context.out.flush();
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  ::execvp("ssh", argv.data());
  return core::FailedPreconditionError(std::string("cannot run ssh: ") + std::strerror(errno) +
                                       "; install an SSH client (apt install openssh-client), or "
                                       "use --print and your own");
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
  list.add_option("--project", flags->project, "Only this project's pods (ID or name)");

  CLI::App& create =
      group.Add("create", "Deploy a pod from a template or an image",
                [flags](CommandContext& context) { return RunCreate(*flags, context); });
  create.add_option("--template", flags->template_id, "Template ID or name (see `templates`)");
  create.add_option("--image", flags->image, "Container image, e.g. pytorch/pytorch:latest");
  create.add_option("--gpu", flags->gpu_type,
                    "GPU type, e.g. 'RTX 4090' or a100-80g; TYPE:COUNT also gives the count "
                    "(4090:2, or 4090:0.5 for half of one GPU)");
  create.add_option("--gpu-count", flags->gpu_count,
                    "Number of GPUs (1), or a share of one: 0.5, 0.25");
  create.add_option("--name", flags->name, "A name for people");
  create.add_option("--project", flags->project,
                    "A project you are a member of (ID or name): its members see and run the pod, "
                    "its owner pays");
  create.add_option("--vcpu", flags->vcpu, "vCPUs")->check(PositiveInteger(4096));
  create.add_option("--memory-gb", flags->memory_gb, "Memory in GB")
      ->check(PositiveInteger(1 << 20));
  create.add_option("--disk-gb", flags->disk_gb, "Container disk in GB")
      ->check(PositiveInteger(1 << 20));
  create.add_option("--volume-gb", flags->volume_gb, "A persistent volume of this many GB")
      ->check(CLI::Range(0, 1 << 20));
  create.add_option("--volume-path", flags->volume_path, "Where the volume is mounted");
  create.add_option("--volume", flags->volumes,
                    "A volume of yours (suanli volumes), NAME:/path or NAME:/path:ro (repeatable)");
  create.add_option("--env", flags->env, "An environment variable, KEY=VALUE (repeatable)");
  create.add_option("--port", flags->ports,
                    "A port to expose, e.g. 22/tcp, 8888/http (repeatable)");
  create.add_option("--selector", flags->selector, "Only nodes with this label, KEY=VALUE");
  create.add_flag("--interruptible", flags->interruptible,
                  "Cheaper, but on-demand pods may preempt it");
  create.add_option("--stop-after", flags->stop_after,
                    "Stop the pod after it has run this long: 2h, 90m, 1d, or seconds");
  create.add_option("--idle-stop-after", flags->idle_stop_after,
                    "Stop the pod once it has been idle this long (GPU, CPU, SSH and HTTP all "
                    "quiet), e.g. 30m; a warning event comes first");
  create.add_option("--terminate-after-stopped", flags->terminate_after_stopped,
                    "Terminate the pod once it has been left stopped this long, e.g. 7d");
  create.add_flag("--terminate-deletes-volume", flags->terminate_deletes_volume,
                  "Agree that that termination deletes the pod's volume (volumes of your own "
                  "stay); needed with --terminate-after-stopped when it has one");
  create.add_option("--pre-stop-command", flags->pre_stop_command,
                    "A shell command run in the container before it is stopped (save a "
                    "checkpoint)");
  create.add_flag("--queue", flags->queue,
                  "Accept a request no node here can meet yet (a type or a size none has) and "
                  "wait for such a node");
  create.add_flag("--wait", flags->wait,
                  "Wait until the pod is running and its ports answer (see --timeout)");
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
    sub.add_flag("--wait", flags->wait,
                 name == "stop" ? "Wait until the node has stopped the container"
                                : "Wait until the pod runs again and its ports answer");
    AddTimeout(sub, *flags);
    AddJsonFlag(sub, flags->json);
  }

  CLI::App& remove =
      group.Add("rm", "Terminate a pod (with --force even when its volume may hold data)",
                [flags](CommandContext& context) { return RunRemove(*flags, context); });
  AddId(remove, *flags);
  remove.add_flag("--force", flags->force, "Terminate even when the volume may hold data");
  AddJsonFlag(remove, flags->json);

  CLI::App& logs = group.Add("logs", "Print a pod's logs (-f: follow them until it stops)",
                             [flags](CommandContext& context) { return RunLogs(*flags, context); });
  AddId(logs, *flags);
  logs.add_option("--tail", flags->tail, "Only the last N lines")->check(CLI::Range(0, 1'000'000));
  logs.add_flag("-f,--follow", flags->follow, "Print new lines as they come, until Ctrl-C");
  logs.add_flag("--timestamps", flags->timestamps, "Start each line with its time (UTC)");

  CLI::App& ssh = group.Add("ssh", "Log into a running pod over SSH (your registered keys)",
                            [flags](CommandContext& context) { return RunSsh(*flags, context); });
  AddId(ssh, *flags);
  ssh.add_option("--user", flags->user, "The user to log in as")->capture_default_str();
  ssh.add_option("--port", flags->ssh_port, "The pod's SSH port (in the container)")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  ssh.add_option("-i,--identity", flags->identity, "The private key to log in with (ssh -i)");
  ssh.add_flag("--print", flags->print,
               "Print the ssh command instead of running it (to add ssh options of your own)");
  ssh.add_option("command", flags->remote_command, "A command to run in the pod, after --");

  CLI::App& wait = group.Add("wait", "Wait until a pod reaches a state (running by default)",
                             [flags](CommandContext& context) { return RunWait(*flags, context); });
  AddId(wait, *flags);
  wait.add_option("--state", flags->state, "The state to wait for")
      ->check(CLI::IsMember(kWaitStates));
  AddTimeout(wait, *flags);
  AddJsonFlag(wait, flags->json);
  return group.Build();
}

}  // namespace suanli::cli
