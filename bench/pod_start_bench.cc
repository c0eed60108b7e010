// Pod start latency, end to end: from `POST /v1/pods` to the container running (the engine's own
// StartedAt), with the image present; against the same engine's create + start alone, measured in
// the same run, alternating, so both see the same machine.
//
// The server and the agent run in this process (Server::Start, Agent::Start on simulated GPUs),
// talking HTTP to each other as they would across hosts. Each pod is stopped and terminated before
// the next, so every start finds a free GPU. Needs an engine and the demo image:
// sudo bash scripts/engine.sh. Results in docs/benchmarks.md.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent.h"
#include "agent/engine.h"
#include "agent/reconcile.h"
#include "catalog/catalog_file.h"
#include "core/clock.h"
#include "net/http_client.h"
#include "server/server.h"
#include "testing/temp_dir.h"

namespace suanli::bench {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

constexpr std::string_view kImage = "localhost/suanli/busybox:latest";

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const size_t index =
      std::min(values.size() - 1, static_cast<size_t>(p * static_cast<double>(values.size())));
  return values[index];
}

double Millis(core::Duration duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

json::value Call(net::HttpClient& http, std::string_view method, std::string_view target,
                 const std::string& token, const std::string& body = "") {
  auto answer =
      http.Send(method, target, body,
                {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}});
  if (!answer.ok()) throw std::runtime_error(answer.status().ToString());
  if (answer->status >= 300) {
    throw std::runtime_error(
        fmt::format("{} {}: {} {}", method, target, answer->status, answer->body));
  }
  return answer->body.empty() ? json::value() : json::parse(answer->body);
}

std::string Text(const json::value& value, std::string_view key) {
  const json::value* field = value.as_object().if_contains(key);
  return field != nullptr && field->is_string() ? std::string(field->as_string()) : "";
}

json::value WaitForState(net::HttpClient& http, const std::string& token, const std::string& pod,
                         std::string_view state) {
  for (int i = 0; i < 6000; ++i) {
    json::value answer = Call(http, "GET", "/v1/pods/" + pod, token);
    if (Text(answer, "state") == state) return answer;
    std::this_thread::sleep_for(milliseconds(2));
  }
  throw std::runtime_error("pod " + pod + " never reached " + std::string(state));
}

int Run(int runs, const std::string& socket) {
  core::SystemClock clock;
  testing::TempDir dir;
  core::Result<catalog::Catalog> catalog = catalog::LoadBuiltInCatalog();
  if (!catalog.ok()) throw std::runtime_error(catalog.status().ToString());
  std::ostringstream server_log, agent_log;
  server::ServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.data_dir = dir.path() / "data";
  auto server = server::Server::Start(server_options, *catalog, clock, server_log);
  if (!server.ok()) throw std::runtime_error(server.status().ToString());
  const std::string url = "http://127.0.0.1:" + std::to_string((*server)->port());
  auto http = std::move(net::HttpClient::Create(url).value());
  std::string admin;
  std::ifstream admin_token(server_options.data_dir / "admin-token");
  std::getline(admin_token, admin);

  const json::value join = Call(*http, "POST", "/v1/join-tokens", admin, "{}");
  agent::AgentOptions agent_options;
  agent_options.server_url = url;
  agent_options.join_token = Text(join, "secret");
  agent_options.state_dir = dir.path() / "agent";
  agent_options.simulate_gpus = "1xRTX 4090";
  agent_options.engine_socket = socket;
  auto agent = agent::Agent::Start(agent_options, *catalog, clock, agent_log);
  if (!agent.ok()) throw std::runtime_error(agent.status().ToString());
  const json::value user =
      Call(*http, "POST", "/v1/users", admin, R"({"name":"bench","credits_micros":1000000000})");
  const std::string token = Text(user, "token");
  while ((*agent)->node_id().empty()) std::this_thread::sleep_for(milliseconds(10));

  auto engine = std::move(agent::Engine::Connect(socket).value());
  std::vector<double> through_suanli, engine_alone;
  const std::string body =
      fmt::format(R"({{"image":"{}","command":["sleep","100000"],"gpu_type":"RTX 4090","vcpu":1,)"
                  R"("memory_gb":1,"container_disk_gb":1,"volume_gb":0}})",
                  kImage);
  for (int run = 0; run < runs; ++run) {
    // Through suanli: API, scheduler, store, long poll, agent, engine.
    const core::TimePoint asked = clock.Now();
    const json::value created = Call(*http, "POST", "/v1/pods", token, body);
    const std::string pod = Text(created, "id");
    WaitForState(*http, token, pod, "running");
    auto container = engine->Inspect(agent::ContainerName(pod));
    if (!container.ok() || !container->started_at) throw std::runtime_error("no container");
    through_suanli.push_back(Millis(*container->started_at - asked));
    Call(*http, "DELETE", "/v1/pods/" + pod + "?force=true", token);
    WaitForState(*http, token, pod, "terminated");

    // The engine alone: create + start of the same image and command.
    agent::ContainerSpec spec;
    spec.name = fmt::format("suanli-bench-{}-{}", getpid(), run);
    spec.image = kImage;
    spec.command = {"sleep", "100000"};
    const core::TimePoint direct = clock.Now();
    auto id = engine->Create(spec);
    if (!id.ok() || !engine->Start(*id).ok()) throw std::runtime_error("engine create/start");
    auto started = engine->Inspect(*id);
    engine_alone.push_back(Millis(*started->started_at - direct));
    (void)engine->Remove(*id);
  }
  (*agent)->Stop();
  (*server)->Stop();
  if (std::getenv("SUANLI_BENCH_LOG") != nullptr) std::cerr << agent_log.str();

  auto row = [](std::string_view name, const std::vector<double>& values) {
    std::cout << fmt::format(
        "{:<34} p50 {:7.1f} ms   p90 {:7.1f} ms   p99 {:7.1f} ms   max {:7.1f} ms\n", name,
        Percentile(values, 0.5), Percentile(values, 0.9), Percentile(values, 0.99),
        Percentile(values, 1.0));
  };
  std::cout << fmt::format("pod start, {} runs each, image present ({})\n", runs, kImage);
  row("POST /v1/pods -> container running", through_suanli);
  row("engine alone: create + start", engine_alone);
  std::cout << fmt::format(
      "suanli's overhead at p50: {:.1f} ms (goal: within 50 ms); p99 {:.1f} ms (goal: under 1 s)\n",
      Percentile(through_suanli, 0.5) - Percentile(engine_alone, 0.5),
      Percentile(through_suanli, 0.99));
  return 0;
}

}  // namespace
}  // namespace suanli::bench

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 30;
  std::string socket = suanli::agent::FindEngineSocket();
  if (const char* given = std::getenv("SUANLI_ENGINE_SOCKET"); given != nullptr && *given) {
    socket = given;
  }
  if (socket.empty()) {
    std::cerr << "no container engine; run: sudo bash scripts/engine.sh\n";
    return 1;
  }
  try {
    return suanli::bench::Run(runs, socket);
  } catch (const std::exception& error) {
    std::cerr << "pod_start_bench: " << error.what() << "\n";
    return 1;
  }
}
