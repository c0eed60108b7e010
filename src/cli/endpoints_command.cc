// suanli endpoints: serverless endpoints, whose workers (pods) scale with their job queue. Jobs are
// sent to the RunPod-compatible API under /v2/<endpoint id> (docs/api.md).
#include <boost/json/array.hpp>
#include <memory>
#include <optional>
#include <ostream>

#include "cli/api_command.h"
#include "cli/api_views.h"
#include "cli/flags.h"
#include "cli/text_table.h"

namespace suanli::cli {
namespace {

struct EndpointsFlags {
  bool json = false;
  std::string id;
  // create and update
  std::string name;
  std::string template_id;
  std::string image;
  std::string gpu;  // TYPE or TYPE:COUNT ("4090:0.5")
  std::vector<std::string> env;
  std::optional<int> volume_gb;
  std::vector<std::string> volumes;  // NAME:/path[:ro]
  std::optional<int> min_workers;
  std::optional<int> max_workers;
  std::optional<int> warm_buffer;
  std::optional<int> idle_timeout_s;
  std::string scaler;
  std::optional<int> scaler_value;
  std::optional<int> execution_timeout_s;
  std::optional<int> job_ttl_s;
  std::optional<int> max_retries;
  std::string worker_mode;
  std::optional<int> http_port;
  std::string http_path;
  std::optional<int> http_concurrency;
  std::string project;  // create: the project whose endpoint it is
};

std::string JobsText(const boost::json::value& endpoint) {
  const boost::json::value* jobs = JsonField(endpoint, "jobs");
  if (jobs == nullptr) return "-";
  return JsonText(*jobs, "in_queue") + " queued, " + JsonText(*jobs, "in_progress") + " running, " +
         JsonText(*jobs, "completed") + " completed, " + JsonText(*jobs, "failed") + " failed";
}

std::string WorkersText(const boost::json::value& endpoint) {
  return std::to_string(JsonArray(endpoint, "workers").size()) + " (" +
         JsonText(endpoint, "min_workers") + "-" + JsonText(endpoint, "max_workers") + ")";
}

std::string GpuText(const boost::json::value& endpoint) {
  const int64_t milli = JsonInteger(endpoint, "gpu_milli");
  if (milli > 0 && milli < 1000) {
    std::string share = std::to_string(milli);  // 500 -> "0.5"
    share = std::string(3 - share.size(), '0') + share;
    while (share.back() == '0') share.pop_back();
    return "0." + share + "x " + JsonText(endpoint, "gpu_type");
  }
  return JsonText(endpoint, "gpu_count") + "x " + JsonText(endpoint, "gpu_type");
}

std::string EndpointsTable(const boost::json::array& endpoints) {
  TextTable table;
  table.AddColumn("ID", TextTable::Align::kLeft);
  table.AddColumn("NAME", TextTable::Align::kLeft);
  table.AddColumn("WORKER", TextTable::Align::kLeft);
  table.AddColumn("GPU", TextTable::Align::kLeft);
  table.AddColumn("WORKERS", TextTable::Align::kLeft);
  table.AddColumn("JOBS", TextTable::Align::kLeft);
  for (const boost::json::value& endpoint : endpoints) {
    const std::string worker = JsonText(endpoint, "template").empty()
                                   ? JsonText(endpoint, "image")
                                   : JsonText(endpoint, "template");
    table.AddRow({JsonText(endpoint, "id"), JsonText(endpoint, "name"), worker, GpuText(endpoint),
                  WorkersText(endpoint), JobsText(endpoint)});
  }
  return table.Render();
}

std::string EndpointDetail(const boost::json::value& endpoint) {
  std::string out;
  const auto line = [&out](std::string_view label, const std::string& value) {
    out += std::string(label) + std::string(label.size() < 20 ? 20 - label.size() : 1, ' ') +
           (value.empty() ? "-" : value) + "\n";
  };
  line("ID:", JsonText(endpoint, "id"));
  line("Name:", JsonText(endpoint, "name"));
  if (!JsonText(endpoint, "project_id").empty()) line("Project:", JsonText(endpoint, "project_id"));
  line("Template:", JsonText(endpoint, "template"));
  line("Image:", JsonText(endpoint, "image"));
  line("GPU per worker:", GpuText(endpoint));
  line("Workers:", WorkersText(endpoint) + ", warm buffer " + JsonText(endpoint, "warm_buffer"));
  for (const boost::json::value& volume : JsonArray(endpoint, "volumes")) {
    line("Volume:", JsonText(volume, "volume_id") + " at " + JsonText(volume, "mount_path") +
                        (JsonBool(volume, "read_only") ? ", read-only" : ""));
  }
  line("Idle timeout:", JsonText(endpoint, "idle_timeout_s") + " s");
  line("Scaler:", JsonText(endpoint, "scaler") + " " + JsonText(endpoint, "scaler_value"));
  line("Execution timeout:", JsonText(endpoint, "execution_timeout_s") + " s");
  line("Job TTL:", JsonText(endpoint, "job_ttl_s") + " s");
  line("Max retries:", JsonText(endpoint, "max_retries"));
  if (JsonText(endpoint, "worker_mode") == "http") {
    line("Workers take jobs:", "posted to port " + JsonText(endpoint, "http_port") + " " +
                                   JsonText(endpoint, "http_path") + ", " +
                                   JsonText(endpoint, "http_concurrency") + " at a time each");
  } else {
    line("Workers take jobs:", "from the queue");
  }
  line("Jobs:", JobsText(endpoint));
  line("Job API:", JsonText(endpoint, "url"));
  if (!JsonText(endpoint, "scale_error").empty()) {
    line("Scaling:", JsonText(endpoint, "scale_error"));
  }
  for (const boost::json::value& worker : JsonArray(endpoint, "workers")) {
    std::string text = JsonText(worker, "id") + " " + JsonText(worker, "state");
    if (!JsonText(worker, "job_id").empty()) text += " (" + JsonText(worker, "job_id") + ")";
    line("Worker:", text);
  }
  return out;
}

// The body of a create or an update: only the flags given.
core::Result<boost::json::object> Body(const EndpointsFlags& flags) {
  boost::json::object body;
  if (!flags.name.empty()) body["name"] = flags.name;
  if (!flags.template_id.empty()) body["template"] = flags.template_id;
  if (!flags.image.empty()) body["image"] = flags.image;
  if (!flags.project.empty()) body["project"] = flags.project;
  if (!flags.gpu.empty()) {
    std::string type = flags.gpu;
    if (const size_t colon = type.rfind(':'); colon != std::string::npos) {
      const std::string count = type.substr(colon + 1);
      type.resize(colon);
      try {
        if (count.find('.') != std::string::npos) {
          body["gpu_count"] = std::stod(count);
        } else {
          body["gpu_count"] = std::stoi(count);
        }
      } catch (const std::exception&) {
        return core::InvalidArgumentError("--gpu TYPE:COUNT: '" + count +
                                          "' is not a count (2, or a share such as 0.5)");
      }
    }
    body["gpu_type"] = type;
  }
  if (!flags.env.empty()) {
    core::Result<boost::json::object> env = ParseKeyValues(flags.env, "--env");
    if (!env.ok()) return env.status();
    body["env"] = std::move(*env);
  }
  const auto number = [&body](std::string_view key, const std::optional<int>& value) {
    if (value) body[key] = *value;
  };
  number("volume_gb", flags.volume_gb);
  if (!flags.volumes.empty()) {
    core::Result<boost::json::array> volumes = ParseVolumeFlags(flags.volumes);
    if (!volumes.ok()) return volumes.status();
    body["volumes"] = std::move(*volumes);
  }
  number("min_workers", flags.min_workers);
  number("max_workers", flags.max_workers);
  number("warm_buffer", flags.warm_buffer);
  number("idle_timeout_s", flags.idle_timeout_s);
  if (!flags.scaler.empty()) body["scaler"] = flags.scaler;
  number("scaler_value", flags.scaler_value);
  number("execution_timeout_s", flags.execution_timeout_s);
  number("job_ttl_s", flags.job_ttl_s);
  number("max_retries", flags.max_retries);
  if (!flags.worker_mode.empty()) body["worker_mode"] = flags.worker_mode;
  number("http_port", flags.http_port);
  if (!flags.http_path.empty()) body["http_path"] = flags.http_path;
  number("http_concurrency", flags.http_concurrency);
  return body;
}

core::Status RunList(const EndpointsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json, (*api)->Get("/v1/endpoints"),
      [](const boost::json::value& list) { return EndpointsTable(JsonArray(list, "endpoints")); });
}

core::Status RunGet(const EndpointsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Get(IdTarget("endpoints", flags.id)),
                     EndpointDetail);
}

core::Status RunCreate(const EndpointsFlags& flags, CommandContext& context) {
  core::Result<boost::json::object> body = Body(flags);
  if (!body.ok()) return body.status();
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Post("/v1/endpoints", *body),
                     [](const boost::json::value& endpoint) {
                       return "created endpoint " + JsonText(endpoint, "id") + " (" +
                              JsonText(endpoint, "name") + "); send jobs to " +
                              JsonText(endpoint, "url") + "/run\n";
                     });
}

core::Status RunUpdate(const EndpointsFlags& flags, CommandContext& context) {
  core::Result<boost::json::object> body = Body(flags);
  if (!body.ok()) return body.status();
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Patch(IdTarget("endpoints", flags.id), *body),
                     EndpointDetail);
}

core::Status RunRemove(const EndpointsFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Delete(IdTarget("endpoints", flags.id)),
                     [&flags](const boost::json::value& /*answer*/) {
                       return "removed endpoint " + flags.id +
                              "; its workers stop and its jobs are deleted\n";
                     });
}

void AddSettings(CLI::App& command, EndpointsFlags& flags) {
  command.add_option("--template", flags.template_id, "The workers' template (demo-worker, ...)");
  command.add_option("--image", flags.image, "The workers' image (instead of a template)");
  command.add_option("--gpu", flags.gpu, "GPU type of each worker, TYPE or TYPE:COUNT (4090:0.5)");
  command.add_option("--env", flags.env, "An environment variable, KEY=VALUE (repeatable)");
  command.add_option("--volume-gb", flags.volume_gb, "Each worker's volume in GB")
      ->check(CLI::Range(0, 100'000));
  command.add_option("--volume", flags.volumes,
                     "A volume of yours every worker mounts, NAME:/path:ro (read-write only with "
                     "--max-workers 1; repeatable)");
  command.add_option("--min-workers", flags.min_workers, "Workers kept running (default 0)")
      ->check(CLI::Range(0, 100));
  command.add_option("--max-workers", flags.max_workers, "Most workers (default 3)")
      ->check(CLI::Range(1, 100));
  command.add_option("--warm-buffer", flags.warm_buffer, "Idle workers kept beyond busy ones")
      ->check(CLI::Range(0, 100));
  command
      .add_option("--idle-timeout", flags.idle_timeout_s,
                  "Seconds an idle worker waits before it stops (default 5)")
      ->check(PositiveInteger(3'600));
  command.add_option("--scaler", flags.scaler, "queue_delay (default) or request_count");
  command
      .add_option("--scaler-value", flags.scaler_value,
                  "Seconds of queue delay, or jobs per worker (default 4)")
      ->check(PositiveInteger(3'600));
  command
      .add_option("--execution-timeout", flags.execution_timeout_s,
                  "Seconds a job may run (default 600)")
      ->check(PositiveInteger(7 * 24 * 3'600));
  command.add_option("--job-ttl", flags.job_ttl_s, "Seconds a job and its result live (24 h)")
      ->check(PositiveInteger(7 * 24 * 3'600));
  command
      .add_option("--max-retries", flags.max_retries,
                  "Times a job is re-queued when its worker dies (default 3)")
      ->check(CLI::Range(0, 10));
  command.add_option("--worker-mode", flags.worker_mode,
                     "queue (default: workers take jobs) or http (jobs are posted to the workers' "
                     "--http-port, e.g. a vLLM server)");
  command
      .add_option("--http-port", flags.http_port, "http mode: the workers' port that takes jobs")
      ->check(CLI::Range(1, 65'535));
  command.add_option("--http-path", flags.http_path,
                     "http mode: the path jobs are posted to (default /)");
  command
      .add_option("--http-concurrency", flags.http_concurrency,
                  "http mode: jobs posted to one worker at a time (default 1)")
      ->check(CLI::Range(1, 64));
}

}  // namespace

CommandRun DefineEndpointsCommand(CLI::App& command) {
  auto flags = std::make_shared<EndpointsFlags>();
  CommandGroup group(command);
  AddJsonFlag(command, flags->json);
  AddJsonFlag(group.Add("list", "List your serverless endpoints (the default)",
                        [flags](CommandContext& context) { return RunList(*flags, context); }),
              flags->json);

  CLI::App& get = group.Add("get", "Show an endpoint, its workers and jobs",
                            [flags](CommandContext& context) { return RunGet(*flags, context); });
  get.add_option("id", flags->id, "Endpoint ID")->required();
  AddJsonFlag(get, flags->json);

  CLI::App& create = group.Add("create", "Create an endpoint", [flags](CommandContext& context) {
    return RunCreate(*flags, context);
  });
  create.add_option("name", flags->name, "Its name")->required();
  AddSettings(create, *flags);
  create.add_option("--project", flags->project,
                    "The project's endpoint (ID or name): its members run jobs on it, its workers "
                    "are the project's pods, its owner pays");
  AddJsonFlag(create, flags->json);

  CLI::App& update =
      group.Add("update", "Change an endpoint's settings (new workers get the new image/GPU)",
                [flags](CommandContext& context) { return RunUpdate(*flags, context); });
  update.add_option("id", flags->id, "Endpoint ID")->required();
  update.add_option("--name", flags->name, "A new name");
  AddSettings(update, *flags);
  AddJsonFlag(update, flags->json);

  CLI::App& remove =
      group.Add("rm", "Delete an endpoint: its workers stop, its jobs are deleted",
                [flags](CommandContext& context) { return RunRemove(*flags, context); });
  remove.add_option("id", flags->id, "Endpoint ID")->required();
  AddJsonFlag(remove, flags->json);
  return group.Build();
}

}  // namespace suanli::cli
