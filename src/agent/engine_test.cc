// Engine against the real container engine: Podman's Docker-compatible service here (`sudo bash
// scripts/engine.sh` starts it and builds the local image these tests run), Docker elsewhere. No
// registry is reachable here, so only a pull's failure is tested.
#include "agent/engine.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "agent/engine_json.h"
#include "agent/ports.h"
#include "agent/tar.h"
#include "gtest/gtest.h"
#include "net/http_client.h"
#include "testing/temp_dir.h"

namespace suanli::agent {
namespace {

namespace json = boost::json;
using std::chrono::seconds;

constexpr std::string_view kImage = "localhost/suanli/busybox:latest";

// Unique per run, so parallel runs and leftovers of a crashed run never collide.
std::string Unique(std::string_view what) {
  static std::atomic<int> counter{0};
  return "suanli-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::string(what);
}

// A host port for a test container, as the agent picks them (see ports.h).
int FreePort() {
  const core::Result<int> port = FreeHostPort("127.0.0.1", {});
  return port.ok() ? *port : 0;
}

template <typename Predicate>
bool WaitFor(Predicate predicate, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return predicate();
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* from_env = std::getenv("SUANLI_ENGINE_SOCKET");
    socket_ = from_env != nullptr && from_env[0] != '\0' ? from_env : FindEngineSocket();
    ASSERT_FALSE(socket_.empty())
        << "no container engine socket: set SUANLI_ENGINE_SOCKET, or run `sudo bash "
           "scripts/engine.sh` (it starts Podman's service and builds "
        << kImage << ")";
    core::Result<std::unique_ptr<Engine>> engine = Engine::Connect(socket_);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(*engine);
    core::Result<bool> present = engine_->ImagePresent(kImage);
    ASSERT_TRUE(present.ok()) << present.status().ToString()
                              << " (run `sudo bash scripts/engine.sh`)";
    ASSERT_TRUE(*present) << kImage << " is missing; run `sudo bash scripts/engine.sh`";
  }

  void TearDown() override {
    if (!engine_) return;
    for (const std::string& name : containers_) {
      core::Status removed = engine_->Remove(name);
      EXPECT_TRUE(removed.ok() || removed.code() == core::StatusCode::kNotFound)
          << removed.ToString();
    }
    for (const std::string& name : volumes_) {
      core::Status removed = engine_->RemoveVolume(name);
      EXPECT_TRUE(removed.ok() || removed.code() == core::StatusCode::kNotFound)
          << removed.ToString();
    }
    for (const std::string& name : networks_) {
      core::Status removed = engine_->RemoveNetwork(name);
      EXPECT_TRUE(removed.ok() || removed.code() == core::StatusCode::kNotFound)
          << removed.ToString();
    }
  }

  // An isolated network, removed at the end of the test.
  std::string Network(std::string_view what) {
    networks_.push_back(Unique(what));
    core::Status made =
        engine_->CreateIsolatedNetwork(networks_.back(), {{"suanli.test.network", "yes"}});
    EXPECT_TRUE(made.ok()) << made.ToString();
    return networks_.back();
  }

  // Whether `from` (a running container) opens a TCP connection to address:port within 2 s.
  bool Connects(const std::string& from, const std::string& address, int port) {
    core::Result<ExecResult> done = engine_->Exec(
        from, {"sh", "-c", "echo x | nc -w 2 " + address + " " + std::to_string(port)},
        seconds(20));
    EXPECT_TRUE(done.ok()) << done.status().ToString();
    return done.ok() && done->exit_code == 0;
  }

  // A spec for the test image, removed at the end of the test.
  ContainerSpec Spec(std::string_view what, std::vector<std::string> command) {
    ContainerSpec spec;
    spec.name = Unique(what);
    spec.image = std::string(kImage);
    spec.command = std::move(command);
    containers_.push_back(spec.name);
    return spec;
  }

  std::string CreateAndStart(const ContainerSpec& spec) {
    core::Result<std::string> id = engine_->Create(spec);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    if (!id.ok()) return {};
    core::Status started = engine_->Start(*id);
    EXPECT_TRUE(started.ok()) << started.ToString();
    return *id;
  }

  ContainerInfo WaitExited(const std::string& id) {
    ContainerInfo info;
    EXPECT_TRUE(WaitFor([&] {
      core::Result<ContainerInfo> inspected = engine_->Inspect(id);
      if (!inspected.ok()) return false;
      info = *inspected;
      return info.status == "exited";
    })) << "container "
        << id << " did not exit; status " << info.status;
    return info;
  }

  // The engine's own inspect answer, for what ContainerInfo leaves out (the hardening).
  json::object RawInspect(const std::string& id) {
    core::Result<std::unique_ptr<net::HttpClient>> client = net::HttpClient::Create(socket_);
    EXPECT_TRUE(client.ok());
    if (!client.ok()) return {};
    core::Result<net::HttpResponse> response =
        (*client)->Send("GET", "/v1.41/containers/" + id + "/json");
    EXPECT_TRUE(response.ok() && response->status == 200);
    if (!response.ok()) return {};
    boost::system::error_code ec;
    json::value value = json::parse(response->body, ec);
    EXPECT_FALSE(ec);
    return value.is_object() ? value.get_object() : json::object();
  }

  std::string socket_;
  std::unique_ptr<Engine> engine_;
  std::vector<std::string> containers_;
  std::vector<std::string> volumes_;
  std::vector<std::string> networks_;
};

bool HasString(const json::value& array, std::string_view text) {
  if (!array.is_array()) return false;
  return std::any_of(array.get_array().begin(), array.get_array().end(),
                     [&](const json::value& v) { return v.is_string() && v.get_string() == text; });
}

TEST_F(EngineTest, ReportsItsVersion) {
  core::Result<EngineVersion> version = engine_->Version();
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_NE(version->name.find("Engine"), std::string::npos) << version->name;
  EXPECT_FALSE(version->version.empty());
  EXPECT_FALSE(version->api_version.empty());
}

TEST_F(EngineTest, TellsWhetherAnImageIsPresent) {
  EXPECT_TRUE(engine_->ImagePresent(kImage).value());
  EXPECT_FALSE(engine_->ImagePresent("localhost/suanli/" + Unique("absent") + ":latest").value());
  EXPECT_EQ(engine_->ImagePresent("bad image name").status().code(),
            core::StatusCode::kInvalidArgument);
}

TEST_F(EngineTest, RunsAPodWithEnvLabelsPortsVolumeAndLimits) {
  const int port = FreePort();
  ASSERT_GT(port, 0);
  const std::string volume = Unique("vol");
  volumes_.push_back(volume);
  ContainerSpec spec = Spec("web", {"sh", "-c",
                                    "echo \"$GREETING\" > /data/greeting && "
                                    "exec httpd -f -p 8080 -h /www"});
  spec.env = {{"GREETING", "hello from env"}};
  spec.labels = {{"suanli.pod", "pod_web"}, {"suanli.test", "yes"}};
  spec.ports = {{8080, port, "tcp"}};
  spec.publish_address = "127.0.0.1";
  spec.nano_cpus = 500'000'000;
  spec.memory_bytes = 64 << 20;
  spec.pids_limit = 321;
  spec.volume_name = volume;
  spec.volume_mount_path = "/data";
  const std::string id = CreateAndStart(spec);
  ASSERT_FALSE(id.empty());
  EXPECT_TRUE(engine_->Start(id).ok()) << "starting a running container is OK (304)";

  core::Result<ContainerInfo> info = engine_->Inspect(spec.name);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->id, id);
  EXPECT_EQ(info->name, spec.name);
  EXPECT_EQ(info->image, kImage);
  EXPECT_TRUE(info->running);
  EXPECT_EQ(info->status, "running");
  EXPECT_TRUE(info->started_at.has_value());
  EXPECT_FALSE(info->finished_at.has_value());
  EXPECT_EQ(info->labels.at("suanli.pod"), "pod_web");
  ASSERT_EQ(info->ports.size(), 1u);
  EXPECT_EQ(info->ports[0].container_port, 8080);
  EXPECT_EQ(info->ports[0].host_port, port);
  EXPECT_EQ(info->ports[0].protocol, "tcp");

  // The published port answers: busybox httpd serves /www/index.html.
  core::Result<std::unique_ptr<net::HttpClient>> http =
      net::HttpClient::Create("http://127.0.0.1:" + std::to_string(port),
                              net::HttpClientOptions{.timeout = std::chrono::seconds(2)});
  ASSERT_TRUE(http.ok());
  std::string page;
  EXPECT_TRUE(WaitFor([&] {
    core::Result<net::HttpResponse> response = (*http)->Send("GET", "/");
    if (!response.ok() || response->status != 200) return false;
    page = response->body;
    return true;
  })) << "nothing answered on 127.0.0.1:"
      << port;
  EXPECT_NE(page.find("suanli demo pod"), std::string::npos) << page;

  // Limits and hardening, as the engine applied them.
  json::object raw = RawInspect(id);
  const json::object& host = raw["HostConfig"].as_object();
  EXPECT_EQ(host.at("NanoCpus").to_number<int64_t>(), 500'000'000);
  EXPECT_EQ(host.at("Memory").to_number<int64_t>(), int64_t{64} << 20);
  EXPECT_EQ(host.at("PidsLimit").to_number<int64_t>(), 321);
  EXPECT_FALSE(host.at("Privileged").as_bool());
  EXPECT_TRUE(HasString(host.at("SecurityOpt"), "no-new-privileges"));
  // Docker echoes the body (ALL dropped, the pod's set added); Podman answers what was dropped
  // from Docker's default set.
  for (std::string_view cap : {"NET_RAW", "MKNOD", "SETFCAP", "SETPCAP"}) {
    EXPECT_TRUE(HasString(host.at("CapDrop"), cap) || HasString(host.at("CapDrop"), "ALL")) << cap;
    EXPECT_FALSE(host.contains("CapAdd") && HasString(host.at("CapAdd"), cap)) << cap;
  }

  // The volume outlives the container: a second one reads what the first wrote through env.
  ASSERT_TRUE(engine_->Remove(id).ok());
  EXPECT_EQ(engine_->Inspect(id).status().code(), core::StatusCode::kNotFound);
  EXPECT_EQ(engine_->Remove(id).code(), core::StatusCode::kNotFound);
  ContainerSpec reader = Spec("reader", {"cat", "/data/greeting"});
  reader.volume_name = volume;
  reader.volume_mount_path = "/data";
  const std::string reader_id = CreateAndStart(reader);
  WaitExited(reader_id);
  EXPECT_EQ(engine_->Logs(reader_id, {}).value(), "hello from env\n");

  EXPECT_EQ(engine_->RemoveVolume(volume).code(), core::StatusCode::kFailedPrecondition)
      << "the reader still uses it";
  ASSERT_TRUE(engine_->Remove(reader_id).ok());
  EXPECT_TRUE(engine_->RemoveVolume(volume).ok());
  EXPECT_EQ(engine_->RemoveVolume(volume).code(), core::StatusCode::kNotFound);
}

TEST_F(EngineTest, ExecRunsACommandInARunningContainerAndCpuUsageGrowsWithWork) {
  const std::string id = CreateAndStart(Spec("exec", {"sleep", "60"}));
  core::Result<ExecResult> done = engine_->Exec(
      id, {"sh", "-c", "echo saved > /tmp/checkpoint; echo out; echo err >&2; exit 3"},
      seconds(20));
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->exit_code, 3);
  EXPECT_NE(done->output.find("out\n"), std::string::npos) << done->output;
  EXPECT_NE(done->output.find("err\n"), std::string::npos) << done->output;
  core::Result<ExecResult> read = engine_->Exec(id, {"cat", "/tmp/checkpoint"}, seconds(20));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->exit_code, 0);
  EXPECT_EQ(read->output, "saved\n");

  const uint64_t before = engine_->CpuUsage(id).value();
  ASSERT_TRUE(
      engine_
          ->Exec(id, {"sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"}, seconds(60))
          .ok());
  const uint64_t after = engine_->CpuUsage(id).value();
  EXPECT_GT(after, before + 10'000'000) << "a busy loop uses well over 10 ms of CPU";

  ASSERT_TRUE(engine_->Stop(id, seconds(1)).ok());
  EXPECT_EQ(engine_->Exec(id, {"true"}, seconds(5)).status().code(),
            core::StatusCode::kFailedPrecondition);
}

TEST_F(EngineTest, LogsHonourTailSinceAndTimestamps) {
  ContainerSpec spec =
      Spec("logs", {"sh", "-c", "echo one; echo two >&2; sleep 2; echo three; echo four"});
  const std::string id = CreateAndStart(spec);
  ContainerInfo info = WaitExited(id);
  ASSERT_TRUE(info.started_at.has_value());

  std::string all = engine_->Logs(id, {}).value();
  for (std::string_view line : {"one\n", "two\n", "three\n", "four\n"}) {
    EXPECT_NE(all.find(line), std::string::npos) << line << " missing from: " << all;
  }
  LogOptions options;
  options.tail = 1;
  EXPECT_EQ(engine_->Logs(id, options).value(), "four\n");
  options.tail = 0;
  EXPECT_EQ(engine_->Logs(id, options).value(), "");

  // one and two come right after the start, three and four two seconds later.
  options = {};
  options.since = *info.started_at + seconds(1);
  std::string recent = engine_->Logs(id, options).value();
  EXPECT_EQ(recent, "three\nfour\n");

  options = {};
  options.tail = 2;
  options.timestamps = true;
  std::string stamped = engine_->Logs(id, options).value();
  size_t lines = 0;
  size_t start = 0;
  for (size_t end; (end = stamped.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string line = stamped.substr(start, end - start);
    size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    std::optional<core::TimePoint> at = ParseEngineTime(line.substr(0, space));
    ASSERT_TRUE(at.has_value()) << line;
    EXPECT_GE(*at, *info.started_at - seconds(1)) << line;
    ++lines;
  }
  EXPECT_EQ(lines, 2u) << stamped;
  EXPECT_NE(stamped.find(" four\n"), std::string::npos) << stamped;
}

TEST_F(EngineTest, FollowLogsEndsWhenTheContainerExits) {
  ContainerSpec spec =
      Spec("follow", {"sh", "-c", "for i in 1 2 3; do echo line$i; sleep 0.3; done"});
  const std::string id = CreateAndStart(spec);
  std::string text;
  int pieces = 0;
  core::Status status = engine_->FollowLogs(id, {}, [&](std::string_view piece) {
    text.append(piece);
    ++pieces;
    return true;
  });
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(text, "line1\nline2\nline3\n");
  EXPECT_GE(pieces, 1);
  EXPECT_EQ(engine_->Inspect(id).value().status, "exited");
}

TEST_F(EngineTest, FollowLogsStopsWhenTheCallerSaysSo) {
  ContainerSpec spec = Spec("follow-stop", {"sh", "-c", "echo first; exec sleep 60"});
  const std::string id = CreateAndStart(spec);
  std::string text;
  const auto begin = std::chrono::steady_clock::now();
  core::Status status = engine_->FollowLogs(id, {}, [&](std::string_view piece) {
    text.append(piece);
    return false;
  });
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(text, "first\n");
  EXPECT_LT(std::chrono::steady_clock::now() - begin, seconds(20));
  EXPECT_TRUE(engine_->Inspect(id).value().running);
}

TEST_F(EngineTest, StopKillsAPodThatIgnoresSigtermAfterTheGrace) {
  ContainerSpec spec =
      Spec("stubborn", {"sh", "-c", "trap '' TERM; echo trapped; while :; do sleep 1; done"});
  const std::string id = CreateAndStart(spec);
  ASSERT_TRUE(engine_->Inspect(id).value().running);
  // On a busy machine the shell may not have run its trap yet when the stop comes.
  ASSERT_TRUE(WaitFor([&] {
    core::Result<std::string> logs = engine_->Logs(id, {});
    return logs.ok() && *logs == "trapped\n";
  }));
  const auto begin = std::chrono::steady_clock::now();
  core::Status stopped = engine_->Stop(id, seconds(2));
  const auto took = std::chrono::steady_clock::now() - begin;
  ASSERT_TRUE(stopped.ok()) << stopped.ToString();
  EXPECT_GE(took, std::chrono::milliseconds(1500)) << "SIGTERM was not ignored?";
  EXPECT_LT(took, seconds(20));

  ContainerInfo info = engine_->Inspect(id).value();
  EXPECT_FALSE(info.running);
  EXPECT_EQ(info.status, "exited");
  EXPECT_EQ(info.exit_code, 137);  // 128 + SIGKILL
  ASSERT_TRUE(info.finished_at.has_value());
  ASSERT_TRUE(info.started_at.has_value());
  EXPECT_GE(*info.finished_at - *info.started_at, std::chrono::milliseconds(1500));
  EXPECT_TRUE(engine_->Stop(id, seconds(2)).ok()) << "stopping a stopped container is OK (304)";
}

TEST_F(EngineTest, ReportsTheExitCodeOfAPodThatEnds) {
  const std::string id = CreateAndStart(Spec("exit3", {"sh", "-c", "exit 3"}));
  ContainerInfo info = WaitExited(id);
  EXPECT_FALSE(info.running);
  EXPECT_EQ(info.exit_code, 3);
  EXPECT_TRUE(info.started_at.has_value());
  ASSERT_TRUE(info.finished_at.has_value());
  // Podman records StartedAt once runc's start returns and FinishedAt from the process's exit, so
  // a process this short can "finish" a few milliseconds before it "started".
  EXPECT_GE(*info.finished_at, *info.started_at - seconds(1));
}

TEST_F(EngineTest, PutArchiveWritesIntoTheVolumeBeforeTheStart) {
  ContainerSpec spec =
      Spec("archive", {"sh", "-c",
                       "stat -c '%a %u %n' /workspace/.ssh /workspace/.ssh/authorized_keys && "
                       "cat /workspace/.ssh/authorized_keys"});
  spec.volume_name = Unique("archive-volume");
  spec.volume_mount_path = "/workspace";
  volumes_.push_back(spec.volume_name);
  const core::Result<std::string> id = engine_->Create(spec);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  const core::Result<std::string> tar =
      MakeTar({TarEntry::Directory(".ssh", 0700),
               TarEntry::File(".ssh/authorized_keys", 0600, "ssh-ed25519 AAAAC3 alice\n")});
  ASSERT_TRUE(tar.ok()) << tar.status().ToString();
  const core::Status put = engine_->PutArchive(*id, "/workspace", *tar);
  ASSERT_TRUE(put.ok()) << put.ToString();
  ASSERT_TRUE(engine_->Start(*id).ok());
  EXPECT_EQ(WaitExited(*id).exit_code, 0);
  EXPECT_EQ(engine_->Logs(*id, {}).value(),
            "700 0 /workspace/.ssh\n600 0 /workspace/.ssh/authorized_keys\n"
            "ssh-ed25519 AAAAC3 alice\n");

  EXPECT_EQ(engine_->PutArchive(*id, "relative", *tar).code(), core::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->PutArchive(Unique("absent"), "/workspace", *tar).code(),
            core::StatusCode::kNotFound);
}

// A volume on the shared backend: a host directory bound in, read-write in one place and
// read-only in another (the compatible API's Binds; the libpod body's mounts are in the CDI test).
TEST_F(EngineTest, BindsAHostDirectoryReadWriteOrReadOnly) {
  const suanli::testing::TempDir bound("suanli-bind");
  const std::string dir = bound.path().string();
  std::ofstream(dir + "/hello") << "from the host\n";
  ContainerSpec spec = Spec("bind", {"sh", "-c",
                                     "cat /in/hello && echo written > /out/made && "
                                     "( (echo no > /in/denied) 2>/dev/null && echo wrote-ro || "
                                     "echo ro-refused)"});
  spec.more_volumes = {{"suanli-vol_in", "/in", /*read_only=*/true, dir},
                       {"suanli-vol_out", "/out", /*read_only=*/false, dir}};
  const std::string id = CreateAndStart(spec);
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(WaitExited(id).exit_code, 0);
  EXPECT_EQ(engine_->Logs(id, {}).value(), "from the host\nro-refused\n");
  std::ifstream made(dir + "/made");
  std::string line;
  std::getline(made, line);
  EXPECT_EQ(line, "written");
  EXPECT_FALSE(std::ifstream(dir + "/denied").good());
  // Neither named volume was made: the directory stood in for them.
  EXPECT_EQ(engine_->RemoveVolume("suanli-vol_out").code(), core::StatusCode::kNotFound);

  spec.more_volumes[0].host_path = "relative/dir";
  EXPECT_EQ(engine_->Create(spec).status().code(), core::StatusCode::kInvalidArgument);
  spec.more_volumes[0].host_path = "/tmp/a:/etc";
  EXPECT_EQ(engine_->Create(spec).status().code(), core::StatusCode::kInvalidArgument);
}

TEST_F(EngineTest, RefusesADuplicateName) {
  ContainerSpec spec = Spec("dup", {"sleep", "60"});
  ASSERT_TRUE(engine_->Create(spec).ok());
  core::Result<std::string> again = engine_->Create(spec);
  EXPECT_EQ(again.status().code(), core::StatusCode::kAlreadyExists) << again.status().ToString();
}

TEST_F(EngineTest, UnknownContainersAndImagesAreNotFound) {
  const std::string absent = Unique("absent");
  EXPECT_EQ(engine_->Inspect(absent).status().code(), core::StatusCode::kNotFound);
  EXPECT_EQ(engine_->Start(absent).code(), core::StatusCode::kNotFound);
  EXPECT_EQ(engine_->Stop(absent, seconds(1)).code(), core::StatusCode::kNotFound);
  EXPECT_EQ(engine_->Remove(absent).code(), core::StatusCode::kNotFound);
  EXPECT_EQ(engine_->Logs(absent, {}).status().code(), core::StatusCode::kNotFound);
  EXPECT_EQ(engine_->RemoveVolume(absent).code(), core::StatusCode::kNotFound);

  ContainerSpec spec = Spec("noimage", {"true"});
  spec.image = "localhost/suanli/" + Unique("absent") + ":latest";
  core::Result<std::string> created = engine_->Create(spec);
  EXPECT_EQ(created.status().code(), core::StatusCode::kNotFound);
  EXPECT_NE(created.status().message().find("pull it"), std::string::npos)
      << created.status().message();
}

TEST_F(EngineTest, ListLabelledFindsExactlyTheLabelledContainers) {
  const std::string key = "suanli.test." + Unique("label");
  ContainerSpec first = Spec("labelled-a", {"sleep", "60"});
  first.labels = {{key, "a"}};
  ContainerSpec second = Spec("labelled-b", {"sleep", "60"});
  second.labels = {{key, "b"}};
  ContainerSpec other = Spec("unlabelled", {"sleep", "60"});
  other.labels = {{key + ".other", "c"}};
  const std::string a = CreateAndStart(first);            // one running,
  const std::string b = engine_->Create(second).value();  // one only created
  ASSERT_TRUE(engine_->Create(other).ok());

  core::Result<std::vector<ContainerInfo>> listed = engine_->ListLabelled(key);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::set<std::string> ids;
  for (const ContainerInfo& info : *listed) {
    ids.insert(info.id);
    EXPECT_TRUE(info.labels.contains(key));
  }
  EXPECT_EQ(ids, (std::set<std::string>{a, b}));
}

TEST_F(EngineTest, PullFromAnUnreachableRegistryFailsWithTheEnginesReason) {
  // A successful pull needs a registry, and none is reachable here: only the failure is tested.
  int progress_calls = 0;
  core::Status pulled = engine_->Pull("localhost:1/none:latest",
                                      [&](const PullProgress& /*progress*/) { ++progress_calls; });
  ASSERT_FALSE(pulled.ok());
  EXPECT_NE(pulled.message().find("localhost:1"), std::string::npos) << pulled.ToString();
}

TEST_F(EngineTest, DeviceRequestsAreRefusedOnPodman) {
  if (engine_->Version().value().name.find("Podman") == std::string::npos) {
    GTEST_SUCCEED() << "Docker takes DeviceRequests; nothing to refuse";
    return;
  }
  ContainerSpec spec = Spec("gpu-dr", {"true"});
  spec.gpu_access = GpuAccess::kDeviceRequests;
  spec.gpu_ids = {"0"};
  EXPECT_EQ(engine_->Create(spec).status().code(), core::StatusCode::kFailedPrecondition);
}

// CDI without a GPU: a CDI spec of our own whose "device" only sets environment variables, which
// the container then prints. Proves the names reach the engine's CDI resolution and that the
// libpod path keeps the ports, labels and hardening of the compatible one.
TEST_F(EngineTest, CdiDevicesReachThePodOnPodman) {
  if (engine_->Version().value().name.find("Podman") == std::string::npos) {
    GTEST_SUCCEED() << "needs Podman (Docker takes CDI names as a device request)";
    return;
  }
  const std::string vendor_class = "test.suanli.local/probe" + std::to_string(::getpid());
  const std::string spec_path = "/var/run/cdi/suanli-test-" + std::to_string(::getpid()) + ".yaml";
  {
    ::mkdir("/var/run/cdi", 0755);
    std::ofstream file(spec_path);
    file << "cdiVersion: \"0.5.0\"\nkind: \"" << vendor_class << "\"\ndevices:\n"
         << "  - name: \"0\"\n    containerEdits:\n      env: [\"SUANLI_CDI_DEVICE=zero\"]\n";
    ASSERT_TRUE(file.good()) << "cannot write " << spec_path << " (run the tests as root)";
  }
  const int port = FreePort();
  const suanli::testing::TempDir bound("suanli-cdi-bind");
  std::ofstream(bound.File("hello")) << "bound\n";
  ContainerSpec spec =
      Spec("cdi", {"sh", "-c", "echo device=$SUANLI_CDI_DEVICE; cat /shared/hello; exec sleep 60"});
  spec.more_volumes = {{"suanli-vol_cdi", "/shared", /*read_only=*/true, bound.path().string()}};
  spec.gpu_access = GpuAccess::kCdi;
  spec.gpu_ids = {vendor_class + "=0"};
  spec.labels = {{"suanli.test", "cdi"}};
  spec.ports = {{8080, port, "tcp"}};
  spec.publish_address = "127.0.0.1";
  spec.network = Network("cdi-net");
  spec.memory_bytes = 64 << 20;
  spec.pids_limit = 321;
  spec.env = {{"A", "b"}};
  const std::string id = CreateAndStart(spec);
  std::remove(spec_path.c_str());
  ASSERT_FALSE(id.empty());
  std::string text;
  EXPECT_TRUE(WaitFor([&] {
    text = engine_->Logs(id, {}).value();
    return !text.empty();
  }));
  EXPECT_TRUE(WaitFor([&] {
    text = engine_->Logs(id, {}).value();
    return text.find("bound") != std::string::npos;
  }));
  EXPECT_EQ(text, "device=zero\nbound\n") << "the libpod body's bind mount";
  ContainerInfo info = engine_->Inspect(id).value();
  EXPECT_EQ(info.labels.at("suanli.test"), "cdi");
  ASSERT_EQ(info.ports.size(), 1u);
  EXPECT_EQ(info.ports[0].host_port, port);
  json::object raw = RawInspect(id);
  const json::object& host = raw["HostConfig"].as_object();
  EXPECT_FALSE(host.at("Privileged").as_bool());
  EXPECT_TRUE(HasString(host.at("SecurityOpt"), "no-new-privileges"));
  EXPECT_TRUE(HasString(host.at("CapDrop"), "NET_RAW") || HasString(host.at("CapDrop"), "ALL"));
  EXPECT_EQ(host.at("Memory").to_number<int64_t>(), int64_t{64} << 20);
  EXPECT_EQ(host.at("PidsLimit").to_number<int64_t>(), 321) << "the libpod body's pids limit";
  EXPECT_TRUE(raw["NetworkSettings"].as_object()["Networks"].as_object().contains(spec.network))
      << "the libpod body's network: " << json::serialize(raw["NetworkSettings"]);
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_TRUE(engine_->Remove(id).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - begin, seconds(5))
      << "a forced remove kills at once";
}

TEST_F(EngineTest, IsolatedNetworksKeepTheirContainersApartAndGoOnlyOnceEmpty) {
  const std::string network_a = Network("net-a");
  const std::string network_b = Network("net-b");
  EXPECT_TRUE(engine_->CreateIsolatedNetwork(network_a, {}).ok()) << "a second create is OK";

  const int port = FreePort();
  ContainerSpec server = Spec("a-server", {"httpd", "-f", "-p", "8080"});
  server.network = network_a;
  server.ports = {{8080, port, "tcp"}};
  server.publish_address = "127.0.0.1";
  const std::string server_id = CreateAndStart(server);
  ContainerSpec neighbour = Spec("a-client", {"sleep", "60"});
  neighbour.network = network_a;
  const std::string neighbour_id = CreateAndStart(neighbour);
  ContainerSpec stranger = Spec("b-client", {"sleep", "60"});
  stranger.network = network_b;
  const std::string stranger_id = CreateAndStart(stranger);
  ASSERT_FALSE(server_id.empty() || neighbour_id.empty() || stranger_id.empty());

  json::object raw = RawInspect(server_id);
  const json::value* on_a =
      raw["NetworkSettings"].as_object()["Networks"].as_object().if_contains(network_a);
  ASSERT_NE(on_a, nullptr) << json::serialize(raw["NetworkSettings"]);
  const std::string address(on_a->at("IPAddress").as_string());
  const std::string gateway_b(RawInspect(stranger_id)["NetworkSettings"]
                                  .as_object()["Networks"]
                                  .as_object()[network_b]
                                  .as_object()["Gateway"]
                                  .as_string());
  // The same container, the same port: only the network differs. The neighbour proves the
  // server answers, so the stranger's failure is the isolation's.
  EXPECT_TRUE(Connects(neighbour_id, address, 8080));
  EXPECT_FALSE(Connects(stranger_id, address, 8080)) << "another network's container reached it";
  EXPECT_FALSE(Connects(stranger_id, gateway_b, port))
      << "its loopback-published port, via the host";

  core::Result<std::vector<std::string>> listed =
      engine_->ListLabelledNetworks("suanli.test.network");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  for (const std::string& network : {network_a, network_b}) {
    EXPECT_NE(std::find(listed->begin(), listed->end(), network), listed->end()) << network;
  }
  EXPECT_EQ(engine_->RemoveNetwork(network_a).code(), core::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(engine_->Remove(server_id).ok());
  ASSERT_TRUE(engine_->Remove(neighbour_id).ok());
  EXPECT_TRUE(engine_->RemoveNetwork(network_a).ok());
  EXPECT_EQ(engine_->RemoveNetwork(network_a).code(), core::StatusCode::kNotFound);

  ContainerSpec orphan = Spec("orphan", {"sleep", "60"});
  orphan.network = network_a;
  EXPECT_EQ(engine_->Create(orphan).status().code(), core::StatusCode::kFailedPrecondition)
      << "a missing network is not a missing image";
}

TEST_F(EngineTest, WritableLayerBytesCountsWhatTheContainerWroteOutsideItsVolumes) {
  const std::string id = CreateAndStart(
      Spec("layer", {"sh", "-c", "dd if=/dev/zero of=/big bs=1M count=5; exec sleep 60"}));
  ASSERT_FALSE(id.empty());
  int64_t bytes = 0;
  EXPECT_TRUE(WaitFor([&] {
    core::Result<int64_t> measured = engine_->WritableLayerBytes(id);
    bytes = measured.ok() ? *measured : -1;
    return bytes >= int64_t{5} << 20;
  })) << bytes;
  EXPECT_LT(bytes, int64_t{50} << 20) << "the image's own files are not the container's";
  EXPECT_EQ(engine_->WritableLayerBytes("suanli-no-such-container").status().code(),
            core::StatusCode::kNotFound);
}

// The pod's root is root inside (it owns what it makes) and kRemappedRootId outside, on the
// volume's files too; Docker remaps only daemon-wide, so there a create needs its userns-remap.
TEST_F(EngineTest, ARemappedPodsRootIsAnUnprivilegedHostIdThatOwnsItsVolume) {
  ContainerSpec spec = Spec("remap", {"sh", "-c",
                                      "cat /proc/self/uid_map && touch /workspace/made && "
                                      "stat -c '%u' /workspace/made"});
  spec.volume_name = Unique("remap-volume");
  spec.volume_mount_path = "/workspace";
  volumes_.push_back(spec.volume_name);
  spec.remap_user_namespace = true;
  if (engine_->Version().value().name.find("Podman") == std::string::npos) {
    const core::Result<std::string> id = engine_->Create(spec);
    if (!id.ok()) {
      EXPECT_EQ(id.status().code(), core::StatusCode::kFailedPrecondition);
      EXPECT_NE(id.status().message().find("userns-remap"), std::string::npos);
    }
    return;
  }
  const std::string id = CreateAndStart(spec);
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(WaitExited(id).exit_code, 0);
  std::istringstream logs(engine_->Logs(id, {}).value());
  int64_t inside = -1, outside = -1, count = -1, owner_inside = -1;
  logs >> inside >> outside >> count >> owner_inside;
  EXPECT_EQ(inside, 0);
  EXPECT_EQ(outside, kRemappedRootId);
  EXPECT_EQ(count, kRemappedIdCount);
  EXPECT_EQ(owner_inside, 0) << "root in the pod owns its volume";
  const core::Result<std::string> directory = engine_->VolumeDirectory(spec.volume_name);
  ASSERT_TRUE(directory.ok()) << directory.status().ToString();
  struct stat made {};
  ASSERT_EQ(::stat((*directory + "/made").c_str(), &made), 0) << *directory;
  EXPECT_EQ(made.st_uid, kRemappedRootId);
  EXPECT_EQ(made.st_gid, kRemappedRootId);

  // Recreated (a restart on another agent, a move), the same mapping: its files stay its own.
  ContainerSpec again = Spec("remap-again", {"sh", "-c", "touch /workspace/made && echo ok"});
  again.volume_name = spec.volume_name;
  again.volume_mount_path = "/workspace";
  again.remap_user_namespace = true;
  const std::string second = CreateAndStart(again);
  EXPECT_EQ(WaitExited(second).exit_code, 0) << engine_->Logs(second, {}).value();
}

TEST(EngineSpecTest, AVolumeMountPathThatIsNotCleanNeverReachesTheEngine) {
  ContainerSpec spec;
  spec.name = "suanli-pod_x";
  spec.image = "busybox";
  spec.volume_name = "suanli-pod_x";
  spec.volume_mount_path = "/data";
  EXPECT_TRUE(engine_json::CheckSpec(spec).ok());
  for (std::string_view path : {"/data:ro", "/etc", "/workspace/../etc", "/", "data"}) {
    spec.volume_mount_path = path;
    const core::Status status = engine_json::CheckSpec(spec);
    EXPECT_EQ(status.code(), core::StatusCode::kInvalidArgument) << path;
    EXPECT_NE(status.message().find("mount path"), std::string::npos) << status.message();
  }
}

TEST(EngineSpecTest, BothCreateBodiesCarryThePidsLimitNoNewPrivilegesAndTheNetwork) {
  ContainerSpec spec;
  spec.name = "suanli-pod_x";
  spec.image = "busybox";
  spec.pids_limit = 4096;
  const json::object compat = json::parse(engine_json::CompatCreateBody(spec)).as_object();
  const json::object& host = compat.at("HostConfig").as_object();
  EXPECT_EQ(host.at("PidsLimit").to_number<int64_t>(), 4096);
  EXPECT_TRUE(HasString(host.at("SecurityOpt"), "no-new-privileges"));
  const json::object libpod = json::parse(engine_json::LibpodCreateBody(spec)).as_object();
  EXPECT_EQ(libpod.at("resource_limits").at("pids").at("limit").to_number<int64_t>(), 4096);
  EXPECT_TRUE(libpod.at("no_new_privileges").as_bool());
  EXPECT_FALSE(host.contains("NetworkMode")) << "no network: the engine's default";
  EXPECT_FALSE(libpod.contains("Networks"));
  spec.network = "suanli-net-usr_a";
  EXPECT_EQ(json::parse(engine_json::CompatCreateBody(spec)).at("HostConfig").at("NetworkMode"),
            "suanli-net-usr_a");
  const json::object on_network = json::parse(engine_json::LibpodCreateBody(spec)).as_object();
  EXPECT_TRUE(on_network.at("Networks").as_object().contains("suanli-net-usr_a"));
  EXPECT_EQ(on_network.at("netns").at("nsmode"), "bridge");
  spec.network = "net;rm -rf";
  EXPECT_EQ(engine_json::CheckSpec(spec).code(), core::StatusCode::kInvalidArgument);
  spec.network.clear();
  EXPECT_FALSE(libpod.contains("userns")) << "not remapped unless asked";
  spec.remap_user_namespace = true;
  const json::object remapped = json::parse(engine_json::LibpodCreateBody(spec)).as_object();
  EXPECT_EQ(remapped.at("userns").at("nsmode"), "private");
  for (std::string_view map : {"UIDMap", "GIDMap"}) {
    const json::object& ids = remapped.at("idmappings").at(map).at(0).as_object();
    EXPECT_EQ(ids.at("container_id").to_number<int64_t>(), 0);
    EXPECT_EQ(ids.at("host_id").to_number<int64_t>(), kRemappedRootId);
    EXPECT_EQ(ids.at("size").to_number<int64_t>(), kRemappedIdCount);
  }
  EXPECT_FALSE(json::parse(engine_json::CompatCreateBody(spec))
                   .at("HostConfig")
                   .as_object()
                   .contains("UsernsMode"))
      << "Docker's mapping is its daemon's";
  spec.remap_user_namespace = false;
  spec.pids_limit = 0;  // the engine's default: nothing sent
  EXPECT_FALSE(json::parse(engine_json::CompatCreateBody(spec))
                   .at("HostConfig")
                   .as_object()
                   .contains("PidsLimit"));
}

TEST(EngineConnectTest, AMissingSocketIsUnavailableWithAFix) {
  const std::string url = "unix:///nonexistent/suanli-" + std::to_string(::getpid()) + ".sock";
  std::unique_ptr<Engine> engine = Engine::Connect(url).value();
  EXPECT_EQ(engine->socket_url(), url);
  core::Result<EngineVersion> version = engine->Version();
  ASSERT_EQ(version.status().code(), core::StatusCode::kUnavailable);
  const std::string message = version.status().message();
  EXPECT_NE(message.find("cannot reach the container engine at " + url), std::string::npos)
      << message;
  EXPECT_NE(message.find("scripts/engine.sh"), std::string::npos) << message;
  EXPECT_EQ(engine->Inspect("x").status().code(), core::StatusCode::kUnavailable);
}

TEST(EngineConnectTest, RefusesAUrlThatIsNotAUnixSocket) {
  EXPECT_EQ(Engine::Connect("http://127.0.0.1:2375").status().code(),
            core::StatusCode::kInvalidArgument);
  EXPECT_EQ(Engine::Connect("unix://relative.sock").status().code(),
            core::StatusCode::kInvalidArgument);
}

// --- LogDemuxer: pure, so every way the network may cut the stream is tried. ---

std::string Frame(int stream, std::string_view payload) {
  std::string frame(8, '\0');
  frame[0] = static_cast<char>(stream);
  const auto size = static_cast<uint32_t>(payload.size());
  frame[4] = static_cast<char>(size >> 24);
  frame[5] = static_cast<char>((size >> 16) & 0xff);
  frame[6] = static_cast<char>((size >> 8) & 0xff);
  frame[7] = static_cast<char>(size & 0xff);
  return frame + std::string(payload);
}

TEST(LogDemuxerTest, JoinsStdoutAndStderrAcrossEveryCut) {
  const std::string big(70'000, 'x');  // a length using three bytes of the header
  const std::string stream =
      Frame(1, "out1\n") + Frame(2, "err1\n") + Frame(1, "") + Frame(1, big) + Frame(2, "last\n");
  const std::string expected = "out1\nerr1\n" + big + "last\n";
  for (size_t cut = 0; cut <= stream.size(); cut += (cut < 64 ? 1 : 997)) {
    LogDemuxer demuxer(/*framed=*/true);
    std::string text;
    ASSERT_TRUE(demuxer.Feed(std::string_view(stream).substr(0, cut), text));
    ASSERT_TRUE(demuxer.Feed(std::string_view(stream).substr(cut), text));
    EXPECT_EQ(text, expected) << "cut at " << cut;
    EXPECT_TRUE(demuxer.AtFrameBoundary());
  }
}

TEST(LogDemuxerTest, TakesOneByteAtATime) {
  const std::string stream = Frame(1, "a\n") + Frame(2, "bc\n") + Frame(0, "d");
  LogDemuxer demuxer(/*framed=*/true);
  std::string text;
  for (char c : stream) ASSERT_TRUE(demuxer.Feed(std::string_view(&c, 1), text));
  EXPECT_EQ(text, "a\nbc\nd");
}

TEST(LogDemuxerTest, HandsOverAPartialPayloadAndKnowsTheStreamWasCut) {
  const std::string stream = Frame(1, "hello world\n");
  LogDemuxer demuxer(/*framed=*/true);
  std::string text;
  ASSERT_TRUE(demuxer.Feed(std::string_view(stream).substr(0, 13), text));
  EXPECT_EQ(text, "hello");
  EXPECT_FALSE(demuxer.AtFrameBoundary());
  LogDemuxer header_only(/*framed=*/true);
  ASSERT_TRUE(header_only.Feed(std::string_view(stream).substr(0, 5), text));
  EXPECT_FALSE(header_only.AtFrameBoundary());
}

TEST(LogDemuxerTest, PassesATtyStreamThrough) {
  LogDemuxer demuxer(/*framed=*/false);
  std::string text;
  ASSERT_TRUE(demuxer.Feed("plain ", text));
  ASSERT_TRUE(demuxer.Feed("text\n", text));
  EXPECT_EQ(text, "plain text\n");
  EXPECT_TRUE(demuxer.AtFrameBoundary());
}

TEST(LogDemuxerTest, RefusesAMalformedHeader) {
  LogDemuxer demuxer(/*framed=*/true);
  std::string text;
  EXPECT_FALSE(demuxer.Feed("{\"message\":\"no such container\"}", text));
  EXPECT_NE(demuxer.error().find("malformed"), std::string::npos);
  EXPECT_FALSE(demuxer.Feed(Frame(1, "later\n"), text)) << "stays failed";
  EXPECT_EQ(text, "");
}

TEST(LogDemuxerTest, ReportsTheEnginesErrorFrame) {
  LogDemuxer demuxer(/*framed=*/true);
  std::string text;
  const std::string stream = Frame(1, "ok\n") + Frame(3, "log driver failed\n");
  EXPECT_FALSE(demuxer.Feed(stream, text));
  EXPECT_EQ(text, "ok\n");
  EXPECT_EQ(demuxer.error(), "the engine reported: log driver failed");
}

// Found by the chaos soak: Podman answered a listed container's inspect with this 500 after another
// client removed it, and the whole listing (the agent's resync) failed instead of leaving it out.
TEST(EngineErrorTest, AContainerGoneBetweenListAndInspectIsNotFoundOnPodmanToo) {
  const std::string podman = "container 093c3174b301 does not exist in database: no such container";
  EXPECT_EQ(engine_json::EngineErrorStatus(500, podman, "inspecting").code(),
            core::StatusCode::kNotFound);
  EXPECT_EQ(engine_json::EngineErrorStatus(404, "No such container: x", "inspecting").code(),
            core::StatusCode::kNotFound);
  const core::Status other = engine_json::EngineErrorStatus(500, "io: disk full", "inspecting");
  EXPECT_EQ(other.code(), core::StatusCode::kInternal);
  EXPECT_EQ(other.message(), "inspecting: io: disk full");
}

TEST(EngineErrorTest, FindsTheContainerWhoseStorageIsGoneInPodmansMessageOnly) {
  const std::string id = "2ed2d04335023507cb1d5f06347df72095e5d3a1599bcb637cddf4e68bf9ebbb";
  EXPECT_EQ(engine_json::GhostContainerId("getting container from store \"" + id +
                                          "\": container not known"),
            id);
  EXPECT_EQ(engine_json::GhostContainerId("listing: getting container from store \"" + id +
                                          "\": container not known"),
            id);
  EXPECT_EQ(engine_json::GhostContainerId("no such container"), "");
  EXPECT_EQ(
      engine_json::GhostContainerId("getting container from store \"abc\": container not known"),
      "")
      << "not an id";
  EXPECT_EQ(engine_json::GhostContainerId("getting container from store \"" + id.substr(0, 63) +
                                          "/\": container not known"),
            "")
      << "nothing that is not a hex id may reach a URL";
  EXPECT_EQ(engine_json::GhostContainerId("getting container from store \"" + id + "\": disk full"),
            "");
}

TEST(ParseEngineTimeTest, ReadsDockerAndPodmanTimes) {
  EXPECT_EQ(ParseEngineTime("0001-01-01T00:00:00Z"), std::nullopt);
  EXPECT_EQ(ParseEngineTime(""), std::nullopt);
  EXPECT_EQ(ParseEngineTime("yesterday"), std::nullopt);
  std::optional<core::TimePoint> utc = ParseEngineTime("2026-12-02T18:13:44.579130503Z");
  ASSERT_TRUE(utc.has_value());
  EXPECT_EQ(core::FormatTime(*utc), "2026-12-02T18:13:44.579Z");
  std::optional<core::TimePoint> east = ParseEngineTime("2026-12-03T02:13:44.579130503+08:00");
  EXPECT_EQ(east, utc);
  std::optional<core::TimePoint> west = ParseEngineTime("2026-12-02T13:13:44.579-05:00");
  EXPECT_EQ(west, utc);
  EXPECT_EQ(ParseEngineTime("2026-12-02T13:13:44.579+5:00"), std::nullopt);
}

}  // namespace
}  // namespace suanli::agent

namespace suanli::agent {
namespace {

TEST(FreeHostPortTest, PicksABindablePortBelowTheEphemeralRangeThatIsNotTaken) {
  std::set<int> taken;
  for (int i = 0; i < 50; ++i) {
    const core::Result<int> port = FreeHostPort("127.0.0.1", taken);
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    EXPECT_GE(*port, kFirstPodPort);
    EXPECT_LE(*port, kLastPodPort);
    EXPECT_TRUE(taken.insert(*port).second) << *port << " was handed out twice";
  }
  // A port something listens on is never picked: hold one, and offer nothing else.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int held = 0;
  for (int port = kFirstPodPort; port <= kLastPodPort && held == 0; ++port) {
    where.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&where), sizeof where) == 0) held = port;
  }
  ASSERT_NE(held, 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  std::set<int> all_but_held;
  for (int port = kFirstPodPort; port <= kLastPodPort; ++port) {
    if (port != held) all_but_held.insert(port);
  }
  const core::Result<int> none = FreeHostPort("127.0.0.1", all_but_held);
  EXPECT_EQ(none.status().code(), core::StatusCode::kUnavailable) << "picked the held port";
  ::close(fd);
  EXPECT_EQ(FreeHostPort("127.0.0.1", all_but_held).value(), held);
  EXPECT_EQ(FreeHostPort("not-an-ip", {}).status().code(), core::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace suanli::agent
