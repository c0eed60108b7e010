// A stopped pod resumes on another node with its volume (issue 16), and a volume's snapshot
// restores into a new volume byte for byte, with real processes on a real engine: `suanli server`
// and two `suanli agent`s (two simulated nodes, each one GPU, separate state directories) as
// children of the test. A file is written into the pod's volume on node A; the pod stops; a second
// pod fills A; the first starts again, on B, once its volume has moved there through the relay, and
// the receiving agent is killed -9 in the middle of the move and restarted. The file must be intact
// (its SHA-256 read inside the container on B), and the event log must show the move with its bytes
// and seconds.
//
// Both agents drive the one engine of this machine, so both see the same engine volume; what
// proves the move is that the receiver empties the volume's directory and unpacks the archive
// into it (volume_archive.h): a lost or corrupt archive loses the file.
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/engine.h"
#include "agent/reconcile.h"
#include "engine_testing.h"
#include "process_testing.h"
#include "testing/api_client.h"

namespace suanli {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using testing::ApiClient;
using testing::ApiReply;
using testing::Array;
using testing::ChildProcess;
using testing::Int;
using testing::ServerProcess;
using testing::Str;
using testing::TempDir;
using namespace std::chrono_literals;

constexpr std::string_view kImage = testing::kTestImage;
constexpr int kFileMiB = 48;
// Large enough that writing its archive takes a while to kill the agent in (about a second).
constexpr int kSnapshotFileMiB = 256;

class VolumeMoveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = testing::EngineSocket();
    ASSERT_FALSE(socket_.empty()) << "no container engine: run `sudo bash scripts/engine.sh`";
    auto engine = agent::Engine::Connect(socket_);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    auto present = engine_->ImagePresent(kImage);
    ASSERT_TRUE(present.ok() && *present) << "the test image " << kImage << " is missing";
    // A pod whose data's node is full waits at most 5 s for it before its data moves (the
    // default, 600 s, would be the move's estimated time here: 1 GB at 50 MB/s, 20 s).
    server_ = std::make_unique<ServerProcess>(root_.path() / "data", root_.path() / "server.log",
                                              "127.0.0.1:0", "",
                                              std::vector<std::string>{"--max-data-wait", "5"});
    ASSERT_TRUE(server_->WaitUntilListening()) << server_->log_text();
    api_ = std::make_unique<ApiClient>(server_->url());
    admin_ = testing::ReadAdminToken(root_.path() / "data");
    const ApiReply user = api_->PostJson(
        "/v1/users", admin_, json::object{{"name", "renter"}, {"credits_micros", 100'000'000}});
    ASSERT_EQ(user.status, 201) << user.Describe();
    renter_ = Str(user.json, "token");
  }

  void TearDown() override {
    for (auto& agent : agents_) agent.process.reset();
    for (auto& agent : agents_) testing::RemoveContainersOfNode(*engine_, agent.node_id);
    if (!pod_.empty()) (void)engine_->RemoveVolume(agent::VolumeName(pod_));
    for (const std::string& volume : engine_volumes_) (void)engine_->RemoveVolume(volume);
  }

  struct Agent {
    std::string name;
    std::string node_id;
    std::unique_ptr<ChildProcess> process;
    fs::path state_dir;
  };

  // Starts (or restarts) agent `index` ("a" or "b"); the first start registers.
  void StartAgent(size_t index) {
    if (agents_.size() <= index) agents_.resize(index + 1);
    Agent& agent = agents_[index];
    agent.name = index == 0 ? "move-a" : "move-b";
    agent.state_dir = root_.path() / agent.name;
    std::vector<std::string> args = {std::string(SUANLI_BINARY),
                                     "agent",
                                     "--server",
                                     server_->url(),
                                     "--state-dir",
                                     agent.state_dir.string(),
                                     "--name",
                                     agent.name,
                                     "--simulate-gpus",
                                     "1xRTX 4090",
                                     "--engine",
                                     socket_};
    args.insert(args.end(), agent_flags_.begin(), agent_flags_.end());
    if (agent.node_id.empty()) {
      const ApiReply join = api_->Post("/v1/join-tokens", admin_, "{}");
      ASSERT_EQ(join.status, 201) << join.Describe();
      args.push_back("--join-token");
      args.push_back(Str(join.json, "secret"));
    }
    agent.process = std::make_unique<ChildProcess>(args, root_.path() / (agent.name + ".log"));
    ASSERT_TRUE(agent.process->WaitForLog(agent.node_id.empty() ? "registered as node"
                                                                : "suanli agent for"))
        << agent.process->log_text();
    if (agent.node_id.empty()) {
      const std::string log = agent.process->log_text();
      const size_t at = log.find("registered as node ");
      agent.node_id = log.substr(at + 19, log.find(' ', at + 19) - at - 19);
    }
  }

  std::string CreatePod(const std::string& name, int volume_gb, json::array volumes = {}) {
    const ApiReply created =
        api_->PostJson("/v1/pods", renter_,
                       json::object{{"name", name},
                                    {"image", kImage},
                                    {"command", json::array{"sleep", "100000"}},
                                    {"gpu_type", "RTX 4090"},
                                    {"vcpu", 1},
                                    {"memory_gb", 1},
                                    {"container_disk_gb", 1},
                                    {"volume_gb", volume_gb},
                                    {"volumes", std::move(volumes)}});
    EXPECT_EQ(created.status, 201) << created.Describe();
    return Str(created.json, "id");
  }

  json::value WaitPod(const std::string& id, const std::function<bool(const json::value&)>& done,
                      std::chrono::seconds timeout = 40s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    json::value pod;
    while (std::chrono::steady_clock::now() < deadline) {
      const ApiReply reply = api_->Get("/v1/pods/" + id, renter_);
      if (reply.status == 200) {
        pod = reply.json;
        if (done(pod)) return pod;
      }
      std::this_thread::sleep_for(50ms);
    }
    std::string logs;
    for (const Agent& agent : agents_) {
      logs += "\n--- " + agent.name + ":\n" + (agent.process ? agent.process->log_text() : "");
    }
    ADD_FAILURE() << "pod " << id << " did not get there in time: " << json::serialize(pod) << logs
                  << "\n--- server:\n"
                  << server_->log_text();
    return pod;
  }

  static std::function<bool(const json::value&)> RunningOn(std::string node_id) {
    return [node_id](const json::value& pod) {
      return Str(pod, "state") == "running" && Str(pod, "node_id") == node_id;
    };
  }

  // sh -c `script` in the pod's container; its output.
  std::string Exec(const std::string& pod, const std::string& script) {
    core::Result<agent::ExecResult> done =
        engine_->Exec(agent::ContainerName(pod), {"sh", "-c", script}, 60s);
    EXPECT_TRUE(done.ok()) << done.status().ToString();
    if (!done.ok()) return "";
    EXPECT_EQ(done->exit_code, 0) << done->output;
    return done->output;
  }

  void Act(const std::string& pod, std::string_view action) {
    const ApiReply reply = api_->Post("/v1/pods/" + pod + "/" + std::string(action), renter_);
    ASSERT_EQ(reply.status, 200) << reply.Describe();
  }

  void Cordon(const Agent& agent, bool cordoned) {
    const ApiReply reply =
        api_->Post("/v1/nodes/" + agent.node_id + (cordoned ? "/cordon" : "/uncordon"), admin_);
    ASSERT_EQ(reply.status, 200) << reply.Describe();
  }

  // Waits (20 s at most) until `path` is removed (by an agent, asked through the relay).
  static bool Gone(const fs::path& path) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (fs::exists(path) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(50ms);
    }
    return !fs::exists(path);
  }

  // The size of the receiver's part file of a move in flight; 0 for none.
  static uintmax_t PartBytes(const fs::path& state_dir) {
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(state_dir / "moves", error)) {
      if (entry.path().extension() == ".part") return entry.file_size(error);
    }
    return 0;
  }

  TempDir root_;
  std::string socket_;
  std::unique_ptr<agent::Engine> engine_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<ApiClient> api_;
  // GET `target` until `done` says so (or `timeout` passes); the last answer.
  json::value WaitFor(const std::string& target,
                      const std::function<bool(const json::value&)>& done,
                      std::chrono::seconds timeout = 60s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    ApiReply reply;
    while (std::chrono::steady_clock::now() < deadline) {
      reply = api_->Get(target, renter_);
      if (reply.status == 200 && done(reply.json)) return reply.json;
      std::this_thread::sleep_for(100ms);
    }
    ADD_FAILURE() << target << " did not get there in time: " << reply.Describe() << "\n"
                  << (agents_.empty() ? "" : agents_[0].process->log_text());
    return reply.json;
  }

  std::string admin_, renter_, pod_;
  std::vector<Agent> agents_;
  std::vector<std::string> engine_volumes_;  // removed at the end, whatever happened
  std::vector<std::string> agent_flags_;     // more flags for every agent
};

TEST_F(VolumeMoveTest, AStoppedPodResumesOnAnotherNodeWithItsVolumeAcrossAKilledReceiver) {
  StartAgent(0);
  pod_ = CreatePod("mover", 1);
  WaitPod(pod_, RunningOn(agents_[0].node_id));
  const std::string written =
      Exec(pod_, "head -c " + std::to_string(kFileMiB << 20) +
                     " /dev/urandom > /workspace/data.bin && mkdir -p /workspace/sub && echo hi > "
                     "/workspace/sub/note && sha256sum /workspace/data.bin | cut -d' ' -f1");
  ASSERT_EQ(written.size(), 65u) << written;
  Act(pod_, "stop");
  WaitPod(pod_, [](const json::value& pod) { return Str(pod, "state") == "stopped"; });

  // B joins; a second pod takes A's only GPU (B cordoned meanwhile, so it must go to A).
  StartAgent(1);
  Cordon(agents_[1], true);
  const std::string filler = CreatePod("filler", 0);
  WaitPod(filler, RunningOn(agents_[0].node_id));
  Cordon(agents_[1], false);

  // The start waits for A a while (moving would take about as long), then goes to B, whose agent
  // fetches the volume; it is killed -9 once bytes arrive.
  Act(pod_, "start");
  const ApiReply waiting = api_->Get("/v1/pods/" + pod_, renter_);
  EXPECT_EQ(Str(waiting.json, "state"), "pending") << waiting.Describe();
  EXPECT_NE(Str(waiting.json, "state_reason").find("moving the data"), std::string::npos)
      << waiting.Describe();
  const json::value starting = WaitPod(
      pod_, [&](const json::value& pod) { return Str(pod, "node_id") == agents_[1].node_id; });
  ASSERT_EQ(Array(starting, "moves").size(), 1u) << json::serialize(starting);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (PartBytes(agents_[1].state_dir) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(2ms);
  }
  const uintmax_t before_kill = PartBytes(agents_[1].state_dir);
  agents_[1].process->Signal(SIGKILL);
  ASSERT_TRUE(agents_[1].process->Wait(10s));
  const bool killed_mid_move = before_kill > 0;
  EXPECT_TRUE(killed_mid_move) << "no byte of the move arrived within 30 s";
  StartAgent(1);

  WaitPod(pod_, RunningOn(agents_[1].node_id));
  const std::string read =
      Exec(pod_, "sha256sum /workspace/data.bin | cut -d' ' -f1 && cat /workspace/sub/note");
  EXPECT_EQ(read, written + "hi\n");

  const ApiReply events = api_->Get("/v1/events?pod=" + pod_ + "&limit=100", renter_);
  ASSERT_EQ(events.status, 200) << events.Describe();
  int started = 0;
  int moved = 0;
  for (const json::value& event : Array(events.json, "events")) {
    const std::string kind = Str(event, "kind");
    if (kind == "volume.move_started") ++started;
    if (kind != "volume.moved") continue;
    ++moved;
    const json::value& detail = event.at("detail");
    EXPECT_GT(detail.at("bytes").to_number<int64_t>(), int64_t{kFileMiB} << 20)
        << json::serialize(event);
    EXPECT_GT(detail.at("seconds").to_number<double>(), 0) << json::serialize(event);
    EXPECT_EQ(Str(detail, "from_node_id"), agents_[0].node_id);
    EXPECT_EQ(Str(detail, "to_node_id"), agents_[1].node_id);
    EXPECT_EQ(Str(detail, "sha256").size(), 64u);
  }
  EXPECT_EQ(started, 1);
  EXPECT_EQ(moved, 1);
  // Record what the kill hit, for whoever reads the log.
  std::cout << "receiver killed with " << before_kill << " bytes of the archive in its part file"
            << (killed_mid_move ? "" : " (the move had not begun)") << "\n";
}

// Snapshot and restore on one node: the restored volume's files (names, modes, symlinks, bytes)
// are those of the volume when it was snapshotted, though the agent was killed -9 while it wrote
// the snapshot's archive and the volume was deleted before the restore.
TEST_F(VolumeMoveTest, ASnapshotRestoresIntoANewVolumeByteForByteAcrossAKilledAgent) {
  StartAgent(0);
  const ApiReply data =
      api_->PostJson("/v1/volumes", renter_, json::object{{"name", "data"}, {"size_gb", 1}});
  ASSERT_EQ(data.status, 201) << data.Describe();
  engine_volumes_.push_back("suanli-" + Str(data.json, "id"));
  const std::string writer =
      CreatePod("writer", 0, json::array{json::object{{"name", "data"}, {"mount_path", "/data"}}});
  WaitPod(writer, RunningOn(agents_[0].node_id));
  // Every entry's name, type, mode and target or SHA-256, sorted: what must come back.
  const std::string manifest =
      "cd /data && find . | sort | while read -r f; do if [ -L \"$f\" ]; then echo \"$f L "
      "$(readlink \"$f\")\"; elif [ -f \"$f\" ]; then echo \"$f $(stat -c %a \"$f\") "
      "$(sha256sum < \"$f\" | cut -d' ' -f1)\"; else echo \"$f $(stat -c %a \"$f\")\"; fi; done";
  const std::string written =
      Exec(writer, "head -c " + std::to_string(kSnapshotFileMiB << 20) +
                       " /dev/urandom > /data/weights.bin && "
                       "mkdir -p /data/run/logs && echo step=100 > /data/run/state && "
                       "chmod 600 /data/run/state && ln -s run/state /data/latest && " +
                       manifest);
  ASSERT_NE(written.find("weights.bin"), std::string::npos) << written;

  // Not while the pod writes it; once it is stopped, yes.
  const ApiReply refused = api_->Post("/v1/volumes/data/snapshots", renter_, R"({"name":"x"})");
  EXPECT_EQ(refused.status, 409) << refused.Describe();
  Act(writer, "stop");
  WaitPod(writer, [](const json::value& pod) { return Str(pod, "state") == "stopped"; });
  const ApiReply made =
      api_->Post("/v1/volumes/data/snapshots", renter_, R"({"name":"before-upgrade"})");
  ASSERT_EQ(made.status, 201) << made.Describe();
  EXPECT_EQ(Str(made.json, "state"), "creating");
  // The agent is killed -9 while it writes the archive; restarted, it is asked again (once the
  // relay gives up on the request the dead agent had, 30 s) and makes it anew.
  const fs::path snapshots = agents_[0].state_dir / "snapshots";
  const fs::path partial = snapshots / (Str(made.json, "id") + ".tar.partial");
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!fs::exists(partial) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(2ms);
  }
  agents_[0].process->Signal(SIGKILL);
  ASSERT_TRUE(agents_[0].process->Wait(10s));
  const bool killed_mid_archive = fs::exists(partial);
  EXPECT_TRUE(killed_mid_archive) << "the archive was not being written within 30 s";
  StartAgent(0);
  const json::value ready = WaitFor(
      "/v1/snapshots/before-upgrade",
      [](const json::value& s) { return Str(s, "state") != "creating"; }, 120s);
  ASSERT_EQ(Str(ready, "state"), "ready") << json::serialize(ready);
  EXPECT_GT(Int(ready, "size_bytes"), int64_t{kSnapshotFileMiB} << 20);
  EXPECT_EQ(Str(ready, "sha256").size(), 64u);
  const fs::path archive = snapshots / (Str(ready, "id") + ".tar");
  EXPECT_TRUE(fs::exists(archive));
  EXPECT_FALSE(fs::exists(partial));

  // The volume goes, the snapshot stays.
  const ApiReply gone = api_->Send("DELETE", "/v1/pods/" + writer, renter_);
  ASSERT_EQ(gone.status, 200) << gone.Describe();
  const ApiReply removed = api_->Send("DELETE", "/v1/volumes/data", renter_);
  ASSERT_EQ(removed.status, 200) << removed.Describe();

  const ApiReply copy = api_->PostJson(
      "/v1/volumes", renter_, json::object{{"name", "copy"}, {"from_snapshot", "before-upgrade"}});
  ASSERT_EQ(copy.status, 201) << copy.Describe();
  EXPECT_EQ(Str(copy.json, "state"), "restoring");
  EXPECT_EQ(Int(copy.json, "size_gb"), 1);
  engine_volumes_.push_back("suanli-" + Str(copy.json, "id"));
  WaitFor("/v1/volumes/copy",
          [](const json::value& volume) { return Str(volume, "state") == "available"; });
  const std::string reader =
      CreatePod("reader", 0, json::array{json::object{{"name", "copy"}, {"mount_path", "/data"}}});
  WaitPod(reader, RunningOn(agents_[0].node_id));
  EXPECT_EQ(Exec(reader, manifest), written);

  const ApiReply events = api_->Get("/v1/events?limit=200", renter_);
  ASSERT_EQ(events.status, 200) << events.Describe();
  std::set<std::string> kinds;
  for (const json::value& event : Array(events.json, "events")) kinds.insert(Str(event, "kind"));
  for (const char* kind : {"volume.snapshot_started", "volume.snapshot_ready",
                           "volume.restore_started", "volume.restored"}) {
    EXPECT_TRUE(kinds.contains(kind)) << kind;
  }

  // Deleting the snapshot removes its archive from the node.
  const ApiReply deleted = api_->Send("DELETE", "/v1/snapshots/before-upgrade", renter_);
  ASSERT_EQ(deleted.status, 200) << deleted.Describe();
  EXPECT_TRUE(Gone(archive));
}

// The shared backend: both agents mount one directory (here a local one standing in for an NFS
// export). A pod's file written on node A is there when the pod resumes on node B, and nothing
// moved; deleting the volume deletes its directory.
TEST_F(VolumeMoveTest, AVolumeOnTheSharedBackendResumesOnAnotherNodeWithNoMove) {
  const fs::path backend = root_.path() / "nfs";
  fs::create_directories(backend);
  agent_flags_ = {"--shared-volumes", backend.string()};
  StartAgent(0);
  StartAgent(1);
  const ApiReply data = api_->PostJson(
      "/v1/volumes", renter_, json::object{{"name", "data"}, {"size_gb", 1}, {"shared", true}});
  ASSERT_EQ(data.status, 201) << data.Describe();
  EXPECT_EQ(Str(data.json, "home_node"), "any");
  EXPECT_TRUE(data.json.at("shared").as_bool());
  const fs::path directory = backend / ("suanli-" + Str(data.json, "id"));

  Cordon(agents_[1], true);
  const std::string pod =
      CreatePod("shared", 0, json::array{json::object{{"name", "data"}, {"mount_path", "/data"}}});
  WaitPod(pod, RunningOn(agents_[0].node_id));
  const std::string written =
      Exec(pod,
           "head -c 3000000 /dev/urandom > /data/blob && echo hi > /data/note && "
           "sha256sum /data/blob | cut -d' ' -f1");
  ASSERT_EQ(written.size(), 65u) << written;
  EXPECT_TRUE(fs::exists(directory / "note")) << "the file is on the backend, not in the engine";

  Act(pod, "stop");
  WaitPod(pod, [](const json::value& got) { return Str(got, "state") == "stopped"; });
  Cordon(agents_[0], true);
  Cordon(agents_[1], false);
  Act(pod, "start");
  WaitPod(pod, RunningOn(agents_[1].node_id));
  EXPECT_EQ(Exec(pod, "sha256sum /data/blob | cut -d' ' -f1 && cat /data/note"), written + "hi\n");
  const ApiReply events = api_->Get("/v1/events?pod=" + pod + "&limit=100", renter_);
  ASSERT_EQ(events.status, 200) << events.Describe();
  for (const json::value& event : Array(events.json, "events")) {
    EXPECT_FALSE(Str(event, "kind").starts_with("volume.mov")) << json::serialize(event);
  }

  const ApiReply terminated = api_->Send("DELETE", "/v1/pods/" + pod + "?force=true", renter_);
  ASSERT_EQ(terminated.status, 200) << terminated.Describe();
  WaitPod(pod, [](const json::value& got) { return Str(got, "state") == "terminated"; });
  const ApiReply deleted = api_->Send("DELETE", "/v1/volumes/data", renter_);
  ASSERT_EQ(deleted.status, 200) << deleted.Describe();
  EXPECT_TRUE(Gone(directory));
}

}  // namespace
}  // namespace suanli
