// Helpers for tests that run the real `suanli` binary as child processes (server, agent) and kill
// them (TempDir is testing/temp_dir.h): a child process with its output in a log file, and the
// server's URL read from the line it prints once it listens.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/api_client.h"
#include "testing/temp_dir.h"  // TempDir

#ifndef SUANLI_BINARY
#error "SUANLI_BINARY must name the suanli executable"
#endif

namespace suanli::testing {

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// `args` as a child process, stdout and stderr appended to `log`; SIGTERM (then SIGKILL) when
// destroyed.
class ChildProcess {
 public:
  ChildProcess(std::vector<std::string> args, std::filesystem::path log)
      : log_(std::move(log)), start_offset_(ReadFile(log_).size()) {
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const std::string log_path = log_.string();
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
      }
      execvp(argv[0], argv.data());
      _exit(127);
    }
  }
  ~ChildProcess() {
    if (running()) {
      Signal(SIGTERM);
      if (!Wait(std::chrono::seconds(20))) {
        Signal(SIGKILL);
        Wait(std::chrono::seconds(20));
      }
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  std::string log_text() const { return ReadFile(log_); }

  // Waits until what this process wrote to the log holds `text`; false if the process exits or
  // the deadline passes first.
  bool WaitForLog(std::string_view text, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const size_t from = start_offset_;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string all = log_text();
      if (all.size() > from && all.find(text, from) != std::string::npos) return true;
      if (!running()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // From now on WaitForLog looks only at what the process writes next (a message it printed
  // before, for an earlier fault, must not count for the next one).
  void SkipLogSoFar() { start_offset_ = ReadFile(log_).size(); }

  void Signal(int signal) const {
    if (pid_ > 0) kill(pid_, signal);
  }
  // Reaps the child; false if it still runs after `timeout`.
  bool Wait(std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }
  bool running() {
    if (pid_ <= 0 || exit_status_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_status_ = status;
      return false;
    }
    return true;
  }
  std::optional<int> exit_status() const { return exit_status_; }

 private:
  std::filesystem::path log_;
  size_t start_offset_;  // the log's size when this process started: earlier runs wrote the rest
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
};

// `suanli server --listen LISTEN --data-dir DIR [--store STORE]`; the port is read from the line
// it prints once it listens (LISTEN may end in :0).
class ServerProcess : public ChildProcess {
 public:
  // `more`: further flags of `suanli server`.
  ServerProcess(const std::filesystem::path& data_dir, const std::filesystem::path& log,
                std::string listen = "127.0.0.1:0", const std::string& store = "",
                const std::vector<std::string>& more = {})
      : ChildProcess(Arguments(data_dir, listen, store, more), log),
        host_(listen.substr(0, listen.rfind(':'))) {}

  // Waits until the server prints that it listens; false if it exits or the deadline passes.
  bool WaitUntilListening(std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const std::string marker = "listening on http://" + host_ + ":";
    if (!WaitForLog(" (data in ", timeout)) return false;  // the end of the line with the port
    const std::string all = log_text();
    const size_t at = all.rfind(marker);
    port_ = std::stoi(all.substr(at + marker.size()));
    return true;
  }

  int port() const { return port_; }
  std::string url() const { return "http://" + host_ + ":" + std::to_string(port_); }

 private:
  static std::vector<std::string> Arguments(const std::filesystem::path& data_dir,
                                            const std::string& listen, const std::string& store,
                                            const std::vector<std::string>& more) {
    std::vector<std::string> arguments = {SUANLI_BINARY, "server",     "--listen",
                                          listen,        "--data-dir", data_dir.string()};
    if (!store.empty()) {
      arguments.push_back("--store");
      arguments.push_back(store);
    }
    arguments.insert(arguments.end(), more.begin(), more.end());
    return arguments;
  }

  std::string host_;
  int port_ = 0;
};

// `command` by the shell; true when it exits 0.
inline bool RunCommand(const std::string& command) { return std::system(command.c_str()) == 0; }

// The agent in its own network namespace, joined to the server's by a veth pair whose host end is
// taken down: the agent cannot reach the server, the containers (run by the engine in the host's
// namespace) go on.
class Partition {
 public:
  Partition() {
    const int id = static_cast<int>(getpid() % 200) + 20;
    namespace_ = "suanli-t" + std::to_string(getpid());
    host_link_ = "slh" + std::to_string(getpid() % 100000);
    host_address_ = "10.213." + std::to_string(id) + ".1";
    const std::string agent_address = "10.213." + std::to_string(id) + ".2";
    const std::string agent_link = "sla" + std::to_string(getpid() % 100000);
    const std::string in_namespace = "ip netns exec " + namespace_ + " ";
    ok_ = RunCommand("ip netns add " + namespace_) &&
          RunCommand("ip link add " + host_link_ + " type veth peer name " + agent_link) &&
          RunCommand("ip link set " + agent_link + " netns " + namespace_) &&
          RunCommand("ip addr add " + host_address_ + "/30 dev " + host_link_) &&
          RunCommand("ip link set " + host_link_ + " up") &&
          RunCommand(in_namespace + "ip addr add " + agent_address + "/30 dev " + agent_link) &&
          RunCommand(in_namespace + "ip link set " + agent_link + " up") &&
          RunCommand(in_namespace + "ip link set lo up");
  }
  ~Partition() {
    (void)RunCommand("ip link del " + host_link_ + " 2>/dev/null");
    (void)RunCommand("ip netns del " + namespace_ + " 2>/dev/null");
  }
  bool ok() const { return ok_; }
  std::vector<std::string> prefix() const { return {"ip", "netns", "exec", namespace_}; }
  const std::string& host_address() const { return host_address_; }
  bool Cut() const { return RunCommand("ip link set " + host_link_ + " down"); }
  bool Heal() const { return RunCommand("ip link set " + host_link_ + " up"); }

 private:
  std::string namespace_, host_link_, host_address_;
  bool ok_ = false;
};

inline std::string ReadAdminToken(const std::filesystem::path& data_dir) {
  std::string token = ReadFile(data_dir / "admin-token");
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  return token;
}

// What a load's clients were told had happened: the writes the server acknowledged, which must all
// be there after any crash.
struct Acknowledged {
  std::mutex mutex;
  std::vector<std::string> created;  // pods
  std::set<std::string> stopped;     // pods
  int64_t credited_micros = 0;       // acknowledged credits
  int64_t attempted_micros = 0;      // credits sent, acknowledged or not
  std::atomic<int> count{0};
};

// Credits the user 7 micro-dollars at a time, `pause` apart, until `stop` or the server is gone.
inline void RunCreditLoad(const std::string& url, const std::string& admin,
                          const std::string& user_id, const std::atomic<bool>& stop,
                          Acknowledged& acked, std::chrono::milliseconds pause) {
  ApiClient api(url, std::chrono::seconds(10));
  while (!stop) {
    {
      std::lock_guard lock(acked.mutex);
      acked.attempted_micros += 7;
    }
    const ApiReply reply = api.Post("/v1/users/" + user_id + "/credits", admin,
                                    R"({"amount_micros":7,"note":"load"})");
    if (reply.status == 0) return;
    if (reply.status == 200) {
      std::lock_guard lock(acked.mutex);
      acked.credited_micros += 7;
      ++acked.count;
    }
    std::this_thread::sleep_for(pause);
  }
}

// Creates pods from `body` and stops its own at random (one request in `stop_one_in`), `pause` to
// `pause + pause_spread` apart, until `stop` or the server is gone. `mine`: the pods it may stop,
// kept across calls (a load that runs in rounds).
struct PodLoad {
  std::string body;  // the POST /v1/pods body
  std::mt19937::result_type seed = 0;
  uint32_t stop_one_in = 3;
  std::chrono::milliseconds pause{0};
  std::chrono::milliseconds pause_spread{0};
};
inline void RunPodLoad(const std::string& url, const std::string& token, const PodLoad& load,
                       const std::atomic<bool>& stop, Acknowledged& acked,
                       std::vector<std::string>& mine) {
  ApiClient api(url, std::chrono::seconds(10));
  std::mt19937 random(load.seed);
  while (!stop) {
    if (mine.empty() || random() % load.stop_one_in != 0) {
      const ApiReply reply = api.Post("/v1/pods", token, load.body);
      if (reply.status == 0) return;  // the server is gone
      if (reply.status == 201) {
        std::lock_guard lock(acked.mutex);
        acked.created.push_back(Str(reply.json, "id"));
        mine.push_back(acked.created.back());
        ++acked.count;
      }
    } else {
      const size_t index = random() % mine.size();
      const std::string id = mine[index];
      const ApiReply reply = api.Post("/v1/pods/" + id + "/stop", token);
      if (reply.status == 0) return;
      mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(index));
      if (reply.status == 200) {
        std::lock_guard lock(acked.mutex);
        acked.stopped.insert(id);
        ++acked.count;
      }
    }
    if (load.pause_spread.count() > 0) {
      std::this_thread::sleep_for(load.pause +
                                  std::chrono::milliseconds(random() % load.pause_spread.count()));
    }
  }
}

}  // namespace suanli::testing
