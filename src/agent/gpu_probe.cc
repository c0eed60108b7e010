#include "agent/gpu_probe.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/serialize.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "core/clock.h"
#include "wire/json_fields.h"

namespace suanli::agent {
namespace {

constexpr double kMaxBandwidthGbps = 100000;  // B200: 8000
constexpr double kMaxTflops = 100000;         // B200 dense FP8: 4500
constexpr size_t kMaxStdoutBytes = 1 << 20;
constexpr size_t kMaxStderrBytes = 64 << 10;

std::string_view Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// "9.0", "12.1": digits, a dot, digits.
bool IsComputeCapability(std::string_view text) {
  const size_t dot = text.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot + 1 == text.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i != dot && (text[i] < '0' || text[i] > '9')) return false;
  }
  return true;
}

void ReadOptionalTflops(wire::JsonFields& fields, const boost::json::object& object,
                        std::string_view key, std::optional<double>* out) {
  if (!object.contains(key)) return;
  double value = 0;
  fields.Number(key, &value, {0.001, kMaxTflops, /*required=*/true});
  if (fields.ok()) *out = value;
}

core::Result<MeasuredGpu> ParseLine(std::string_view line) {
  core::Result<boost::json::object> object = wire::ParseJsonObject(line, "the line");
  if (!object.ok()) return object.status();
  MeasuredGpu gpu;
  wire::JsonFields fields(*object);
  fields.Int("index", &gpu.index, {0, 1023, /*required=*/true});
  fields.String("name", &gpu.name, {.required = true, .max_length = 256});
  fields.String("uuid", &gpu.uuid, {.required = true, .max_length = 128});
  fields.String("compute_capability", &gpu.compute_capability,
                {.required = true, .max_length = 16});
  fields.Number("memory_gb", &gpu.memory_gb, {0.1, 100000, /*required=*/true});
  fields.Number("memory_bandwidth_gbps", &gpu.memory_bandwidth_gbps,
                {0.1, kMaxBandwidthGbps, /*required=*/true});
  fields.Number("fp16_tflops", &gpu.fp16_tflops, {0.001, kMaxTflops, /*required=*/true});
  ReadOptionalTflops(fields, *object, "bf16_tflops", &gpu.bf16_tflops);
  ReadOptionalTflops(fields, *object, "fp8_tflops", &gpu.fp8_tflops);
  if (fields.ok() && Trim(gpu.name).empty()) fields.Fail("name: must not be empty");
  if (fields.ok() && !gpu.uuid.starts_with("GPU-") && !gpu.uuid.starts_with("SIM-GPU-")) {
    fields.Fail("uuid: must start with GPU- (or SIM-GPU- for a simulated GPU), got \"" + gpu.uuid +
                "\"");
  }
  if (fields.ok() && !IsComputeCapability(gpu.compute_capability)) {
    fields.Fail("compute_capability: must be MAJOR.MINOR, e.g. 9.0, got \"" +
                gpu.compute_capability + "\"");
  }
  SUANLI_RETURN_IF_ERROR(fields.Finish());
  return gpu;
}

// Closes the descriptor when it goes.
class Fd {
 public:
  Fd() = default;
  ~Fd() { Close(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int* Address() { return &fd_; }
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// The last lines of what the probe wrote to stderr, on one line, for a message.
std::string LastLines(std::string_view text) {
  std::string joined;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (std::string_view line = Trim(text.substr(start, end - start)); !line.empty()) {
      if (!joined.empty()) joined += "; ";
      joined += line;
    }
    start = end + 1;
  }
  if (joined.size() > 500) joined = "..." + joined.substr(joined.size() - 500);
  return joined;
}

}  // namespace

core::Result<std::vector<MeasuredGpu>> ParseGpuProbeOutput(std::string_view text) {
  std::vector<MeasuredGpu> gpus;
  std::set<int> indexes;
  std::set<std::string> uuids;
  int line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trim(text.substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (line.empty()) continue;
    const std::string where = "suanli-gpu-probe's output, line " + std::to_string(line_number);
    core::Result<MeasuredGpu> gpu = ParseLine(line);
    if (!gpu.ok()) return gpu.status().WithContext(where);
    if (!indexes.insert(gpu->index).second) {
      return core::InvalidArgumentError(where + ": index " + std::to_string(gpu->index) +
                                        " was measured twice");
    }
    if (!uuids.insert(gpu->uuid).second) {
      return core::InvalidArgumentError(where + ": uuid " + gpu->uuid + " was measured twice");
    }
    gpus.push_back(std::move(gpu).value());
  }
  if (gpus.empty()) {
    return core::InvalidArgumentError("suanli-gpu-probe printed no GPU (one JSON object a line)");
  }
  return gpus;
}

core::Result<std::filesystem::path> FindGpuProbe(std::string_view env_value,
                                                 const std::filesystem::path& beside) {
  const bool from_env = !env_value.empty();
  const std::filesystem::path path =
      from_env ? std::filesystem::path(env_value) : beside / kGpuProbeName;
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0) {
    return path;
  }
  if (from_env) {
    return core::NotFoundError(std::string(kGpuProbeEnv) + "=" + path.string() +
                               " is not an executable file; point it at suanli-gpu-probe");
  }
  return core::NotFoundError(
      "no " + std::string(kGpuProbeName) + " beside suanli in " + beside.string() + " and " +
      std::string(kGpuProbeEnv) +
      " is not set; build suanli where the CUDA toolkit (nvcc) is installed, which puts it beside "
      "suanli, or set " +
      std::string(kGpuProbeEnv) + "=/path/to/suanli-gpu-probe");
}

core::Result<std::filesystem::path> FindGpuProbe() {
  const char* env_value = std::getenv(std::string(kGpuProbeEnv).c_str());
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return FindGpuProbe(env_value == nullptr ? "" : env_value,
                      error ? std::filesystem::current_path(error) : self.parent_path());
}

core::Result<std::vector<MeasuredGpu>> RunGpuProbe(const std::filesystem::path& path,
                                                   const GpuProbeOptions& options) {
  Fd out_read, out_write, err_read, err_write;
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    return core::UnavailableError(std::string("cannot make a pipe: ") + std::strerror(errno));
  }
  *out_read.Address() = out_pipe[0];
  *out_write.Address() = out_pipe[1];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    return core::UnavailableError(std::string("cannot make a pipe: ") + std::strerror(errno));
  }
  *err_read.Address() = err_pipe[0];
  *err_write.Address() = err_pipe[1];

  std::vector<std::string> args = {path.string()};
  if (options.device) args.insert(args.end(), {"--device", std::to_string(*options.device)});
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), 2);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  out_write.Close();
  err_write.Close();
  if (spawned != 0) {
    return core::UnavailableError("cannot run " + path.string() + ": " + std::strerror(spawned));
  }

  // Read both pipes until the probe closes them or the time is up.
  std::string out;
  std::string err;
  const core::MonotonicTime deadline = core::MonotonicNow() + options.timeout;
  bool timed_out = false;
  bool cancelled = false;
  std::string poll_error;
  pollfd fds[2] = {{out_read.get(), POLLIN, 0}, {err_read.get(), POLLIN, 0}};
  std::string* buffers[2] = {&out, &err};
  const size_t limits[2] = {kMaxStdoutBytes, kMaxStderrBytes};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - core::MonotonicNow());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (options.cancelled && options.cancelled()) {
      cancelled = true;
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) {
      poll_error = std::strerror(errno);
      break;
    }
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char chunk[4096];
      const ssize_t got = ::read(fds[i].fd, chunk, sizeof(chunk));
      if (got > 0) {
        if (buffers[i]->size() < limits[i]) buffers[i]->append(chunk, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;  // closed (the Fd closes it)
      }
    }
  }
  if (timed_out || cancelled || !poll_error.empty()) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (cancelled)
    return core::UnavailableError(path.string() + " was stopped: the agent is stopping");
  if (timed_out) {
    return core::UnavailableError(
        fmt::format("{} ran past {} s and was stopped; is the GPU busy or stuck? (nvidia-smi)",
                    path.string(), options.timeout.count()));
  }
  if (!poll_error.empty()) {
    return core::UnavailableError("cannot read what " + path.string() + " prints: " + poll_error);
  }
  const std::string said = LastLines(err);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
    return core::FailedPreconditionError(said.empty() ? "no CUDA device" : said);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how = WIFEXITED(status)
                                ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                : "was killed by signal " + std::to_string(WTERMSIG(status));
    return core::UnavailableError(path.string() + " " + how +
                                  (said.empty() ? std::string() : ": " + said));
  }
  return ParseGpuProbeOutput(out);
}

std::string EncodeMeasuredGpus(const std::vector<MeasuredGpu>& gpus) {
  std::string text;
  for (const MeasuredGpu& gpu : gpus) {
    boost::json::object line{{"index", gpu.index},
                             {"name", gpu.name},
                             {"uuid", gpu.uuid},
                             {"compute_capability", gpu.compute_capability},
                             {"memory_gb", gpu.memory_gb},
                             {"memory_bandwidth_gbps", gpu.memory_bandwidth_gbps},
                             {"fp16_tflops", gpu.fp16_tflops}};
    if (gpu.bf16_tflops) line["bf16_tflops"] = *gpu.bf16_tflops;
    if (gpu.fp8_tflops) line["fp8_tflops"] = *gpu.fp8_tflops;
    text += boost::json::serialize(line) + "\n";
  }
  return text;
}

std::vector<core::GpuMeasurement> ToNodeMeasurements(
    const std::vector<MeasuredGpu>& gpus, const std::map<std::string, int>& index_by_uuid) {
  std::vector<core::GpuMeasurement> out;
  for (const MeasuredGpu& gpu : gpus) {
    const auto it = index_by_uuid.find(gpu.uuid);
    if (it == index_by_uuid.end()) continue;
    out.push_back(
        {it->second, gpu.memory_bandwidth_gbps, gpu.fp16_tflops, gpu.bf16_tflops, gpu.fp8_tflops});
  }
  return out;
}

std::string CompareWithDatasheet(const MeasuredGpu& gpu, const catalog::GpuType* datasheet) {
  struct Figure {
    std::string_view label;
    std::optional<double> measured;
    std::optional<double> sheet;  // absent or 0: no figure
    std::string_view unit;
    std::string_view needs;  // why a figure may not be measured
  };
  const Figure figures[] = {
      {"memory", gpu.memory_bandwidth_gbps,
       datasheet ? std::optional<double>(datasheet->bandwidth_gbs) : std::nullopt, "GB/s", ""},
      {"fp16", gpu.fp16_tflops,
       datasheet ? std::optional<double>(datasheet->fp16_tflops) : std::nullopt, "TFLOPS", ""},
      {"bf16", gpu.bf16_tflops, datasheet ? datasheet->bf16_tflops : std::nullopt, "TFLOPS",
       "compute capability 8.0"},
      {"fp8", gpu.fp8_tflops, datasheet ? datasheet->fp8_tflops : std::nullopt, "TFLOPS",
       "compute capability 8.9"},
  };
  std::string line;
  for (const Figure& figure : figures) {
    const bool has_sheet = figure.sheet.has_value() && *figure.sheet > 0;
    std::string part;
    if (figure.measured && has_sheet) {
      part = fmt::format("{} {:.1f} {} ({:.0f}% of {:.0f})", figure.label, *figure.measured,
                         figure.unit, 100 * *figure.measured / *figure.sheet, *figure.sheet);
    } else if (figure.measured) {
      part = fmt::format("{} {:.1f} {} ({})", figure.label, *figure.measured, figure.unit,
                         datasheet ? "no datasheet figure" : "not in the catalog");
    } else if (has_sheet) {
      part = fmt::format("{} not measured (needs {}; datasheet {:.0f} {})", figure.label,
                         figure.needs, *figure.sheet, figure.unit);
    }
    if (part.empty()) continue;
    if (!line.empty()) line += "; ";
    line += part;
  }
  return line;
}

}  // namespace suanli::agent
