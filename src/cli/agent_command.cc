#include <sys/statvfs.h>
#include <unistd.h>

#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "agent/engine.h"
#include "agent/gpu_probe.h"
#include "agent/gpus.h"
#include "cli/api_command.h"
#include "cli/command.h"

namespace suanli::cli {
namespace {

void AddAgentFlags(CLI::App& command, agent::AgentOptions& options) {
  command.add_option("--simulate-gpus", options.simulate_gpus,
                     "Report GPUs that do not exist, marked simulated, e.g. \"4xRTX 4090\"");
  command.add_option("--engine", options.engine_socket,
                     "The Docker or Podman socket, unix:///...; default: the first that exists");
  command
      .add_option("--gpu-access", options.gpu_access,
                  "How GPUs reach containers: auto, cdi (Podman, Docker 25+) or nvidia "
                  "(DeviceRequests, NVIDIA Container Toolkit)")
      ->capture_default_str();
  command
      .add_option("--publish-address", options.publish_address,
                  "Host address pod ports are published on: loopback lets only the server's "
                  "authenticated proxy reach them; 0.0.0.0 (all) lets renters SSH in from "
                  "elsewhere")
      ->capture_default_str();
  command
      .add_option("--pod-network", options.pod_network,
                  "owner: each owner's pods on a network of their own, cut off from other "
                  "owners' pods; engine: all on the engine's default network")
      ->capture_default_str();
  command
      .add_option("--user-namespace", options.user_namespace,
                  "remap: each pod's root is an unprivileged id on the host (Podman per pod; "
                  "Docker needs its daemon's userns-remap); off: root in a pod is root on the "
                  "host. Turn it on before the node's pods make volumes")
      ->capture_default_str();
  command
      .add_option("--pids-limit", options.pids_limit,
                  "Most processes and threads one pod's container may hold (0: the engine's "
                  "default, none on Docker)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command
      .add_option_function<int64_t>(
          "--disk-check-interval",
          [&options](const int64_t& seconds) {
            options.disk_check_interval = std::chrono::seconds(seconds);
          },
          "Seconds between measurements of each pod's disk use against the sizes it asked for "
          "(a pod past one is stopped, with the reason); 0: never (default 60)")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--public-address", options.public_address,
                     "Address renters reach this host at (suanli pods ssh); default: the one the "
                     "server sees the agent's requests come from");
}

// `doctor --bench`: each GPU's measured memory bandwidth and tensor rates beside its datasheet's.
// No probe, or no GPU, is one "skip" line that fails no check (the host still runs pods); a probe
// that fails on a GPU is a check that failed.
void RunBench(const catalog::Catalog& catalog, const core::Result<agent::GpuInventory>& gpus,
              CommandContext& context,
              const std::function<void(bool, const std::string&, const std::string&)>& line) {
  auto skip = [&](const std::string& detail) { context.out << "skip  bench: " << detail << "\n"; };
  core::Result<std::filesystem::path> probe = agent::FindGpuProbe();
  if (!probe.ok()) return skip(probe.status().message());
  context.err << "measuring each GPU with " << probe->string() << " (a few seconds each)...\n";
  core::Result<std::vector<agent::MeasuredGpu>> measured = agent::RunGpuProbe(*probe);
  if (!measured.ok() && measured.status().code() == core::StatusCode::kFailedPrecondition) {
    return skip(measured.status().message() +
                "; --bench needs an NVIDIA GPU and its driver (nvidia-smi lists them)");
  }
  if (!measured.ok()) return line(false, "bench", measured.status().message());
  for (const agent::MeasuredGpu& gpu : *measured) {
    // The type NVML discovery gave this GPU (by UUID), else one from its name and memory.
    std::string type;
    if (gpus.ok()) {
      for (const agent::Gpu& known : gpus->gpus) {
        if (known.uuid == gpu.uuid && !known.type.empty()) type = known.type;
      }
    }
    if (type.empty()) type = agent::CatalogTypeForNvmlName(gpu.name, gpu.memory_gb, catalog);
    const catalog::GpuType* datasheet = nullptr;
    if (!type.empty()) {
      if (core::Result<const catalog::GpuType*> found = catalog.FindExact(type); found.ok()) {
        datasheet = *found;
      }
    }
    line(true, "bench",
         "GPU " + std::to_string(gpu.index) + " " + gpu.name +
             (datasheet ? " = " + datasheet->name : "") + ": " +
             agent::CompareWithDatasheet(gpu, datasheet));
  }
}

// `suanli agent doctor`: each check on one line, OK or what is wrong and how to fix it.
// With `bench`, each GPU is also measured (RunBench).
core::Status RunDoctor(const agent::AgentOptions& options, bool bench, CommandContext& context) {
  int problems = 0;
  auto line = [&](bool ok, const std::string& what, const std::string& detail) {
    context.out << (ok ? "ok    " : "FIX   ") << what << ": " << detail << "\n";
    if (!ok) ++problems;
  };
  const std::string socket =
      options.engine_socket.empty() ? agent::FindEngineSocket() : options.engine_socket;
  std::unique_ptr<agent::Engine> engine;
  if (socket.empty()) {
    line(false, "container engine",
         "no Docker or Podman socket found; start one (sudo bash scripts/engine.sh, or "
         "sudo systemctl start docker) or give --engine");
  } else if (auto connected = agent::Engine::Connect(socket); !connected.ok()) {
    line(false, "container engine", connected.status().message());
  } else if (auto version = (*connected)->Version(); !version.ok()) {
    line(false, "container engine", version.status().message());
  } else {
    line(true, "container engine",
         version->name + " " + version->version + " (API " + version->api_version + ") at " +
             socket);
    engine = std::move(connected).value();
  }
  core::Result<catalog::Catalog> catalog = context.LoadCatalog();
  if (!catalog.ok()) return catalog.status();
  core::Result<agent::GpuInventory> gpus = agent::DiscoverGpus(*catalog, options.simulate_gpus);
  if (!gpus.ok()) {
    line(false, "GPUs", gpus.status().message());
  } else if (gpus->gpus.empty()) {
    line(false, "GPUs",
         gpus->note +
             "; install the NVIDIA driver, or try suanli with "
             "--simulate-gpus \"4xRTX 4090\"");
  } else {
    std::string detail = std::to_string(gpus->gpus.size()) + " from " + gpus->source;
    if (!gpus->driver_version.empty()) {
      detail += ", driver " + gpus->driver_version + ", CUDA " + gpus->cuda_version;
    }
    for (const agent::Gpu& gpu : gpus->gpus) {
      detail += "; " + std::to_string(gpu.index) + ": " + gpu.name +
                (gpu.type.empty() ? " (not in the catalog: not offered)" : " = " + gpu.type) +
                (gpu.simulated ? " [simulated]" : "");
    }
    line(true, "GPUs", detail);
    if (!gpus->note.empty()) line(false, "GPUs", gpus->note);
  }
  struct statvfs disk {};
  const std::filesystem::path where =
      std::filesystem::exists(options.state_dir) ? options.state_dir : std::filesystem::path("/");
  if (statvfs(where.c_str(), &disk) == 0) {
    const int64_t free_gb = (static_cast<int64_t>(disk.f_bavail) * disk.f_frsize) >> 30;
    line(free_gb >= 10, "free disk",
         std::to_string(free_gb) + " GB at " + where.string() +
             (free_gb >= 10 ? "" : "; pods need room for images"));
  }
  if (engine) {
    const std::string image = "localhost/suanli/busybox:latest";
    core::Result<bool> present = engine->ImagePresent(image);
    if (!present.ok() || !*present) {
      line(false, "a container starts",
           "the test image " + image + " is missing; build it: sudo bash scripts/engine.sh");
    } else {
      agent::ContainerSpec spec;
      spec.name = "suanli-doctor-" + std::to_string(::getpid());
      spec.image = image;
      spec.command = {"true"};
      core::Result<std::string> created = engine->Create(spec);
      core::Status started = created.ok() ? engine->Start(*created) : created.status();
      line(started.ok(), "a container starts",
           started.ok() ? "yes (" + image + ")" : started.message());
      if (created.ok()) (void)engine->Remove(*created);
    }
  }
  if (bench) RunBench(*catalog, gpus, context, line);
  if (problems == 0) return core::Status();
  return core::FailedPreconditionError(std::to_string(problems) +
                                       " check(s) failed; fix them as shown above");
}

}  // namespace

CommandRun DefineAgentCommand(CLI::App& command) {
  auto options = std::make_shared<agent::AgentOptions>();
  command.add_option(
      "--server", options->server_url,
      "The control plane, http://HOST:PORT (several replicas: http://A:PORT,http://B:PORT)");
  command.add_option("--join-token", options->join_token,
                     "slj_... from `suanli nodes join-token`; needed only the first time");
  command
      .add_option("--state-dir", options->state_dir,
                  "Where the agent keeps its identity and unsent reports")
      ->capture_default_str();
  command.add_option("--name", options->name, "The node's name; default: the host name");
  auto labels = std::make_shared<std::vector<std::string>>();
  command.add_option(
      "--label", *labels,
      "A label of this node, KEY=VALUE (repeatable): pods' node_selector picks nodes by them");
  command.add_option("--shared-volumes", options->shared_volume_dir,
                     "A directory every node of the shared backend mounts (an NFS export): "
                     "volumes created --shared live there and never move");
  command
      .add_option("--gpu-probe", options->gpu_probe,
                  "Measure each GPU's bandwidth and tensor rates once, for the advisor: auto "
                  "(suanli-gpu-probe beside suanli or at $SUANLI_GPU_PROBE, when there), off, or "
                  "the probe's path")
      ->capture_default_str();
  AddAgentFlags(command, *options);
  CLI::App* doctor = command.add_subcommand(
      "doctor", "Check the engine, GPUs, driver, disk, and a test container");
  AddAgentFlags(*doctor, *options);
  auto bench = std::make_shared<bool>(false);
  doctor->add_flag("--bench", *bench,
                   "Also measure each GPU's memory bandwidth and fp16/bf16/fp8 tensor throughput "
                   "(suanli-gpu-probe, a few seconds a GPU) beside its datasheet figures");
  auto run_doctor = std::make_shared<bool>(false);
  doctor->callback([run_doctor] { *run_doctor = true; });
  return [options, labels, run_doctor, bench](CommandContext& context) -> core::Status {
    if (*run_doctor) return RunDoctor(*options, *bench, context);
    core::Result<boost::json::object> given = ParseKeyValues(*labels, "--label");
    if (!given.ok()) return given.status();
    for (const auto& [key, value] : *given) {
      options->labels[std::string(key)] = std::string(value.as_string());
    }
    if (options->server_url.empty()) {
      return core::InvalidArgumentError(
          "--server is required: the control plane's URL, e.g. --server http://10.0.0.2:7070");
    }
    if (options->gpu_probe != "auto" && options->gpu_probe != "off" &&
        !agent::FindGpuProbe(options->gpu_probe, {}).ok()) {
      return core::InvalidArgumentError("--gpu-probe: '" + options->gpu_probe +
                                        "' is not an executable file; give auto, off, or the "
                                        "path of suanli-gpu-probe");
    }
    core::Result<catalog::Catalog> catalog = context.LoadCatalog();
    if (!catalog.ok()) return catalog.status();
    return agent::RunAgentUntilSignalled(*options, *catalog, context.err);
  };
}

}  // namespace suanli::cli
