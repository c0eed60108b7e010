// Serverless endpoints' platform overhead, in process: a real server (SQLite, WAL,
// synchronous=FULL) and workers that answer at once (threads speaking the workers' HTTP protocol:
// the job-take long poll, then job-done), so what is measured is suanli's own part of a job.
// - warm overhead: sequential POST /v2/{id}/runsync with an idle worker waiting: the latency of
//   submit -> the worker's long poll answered -> its result -> runsync answered, three durable
//   writes included (the job queued, taken, finished);
// - throughput: jobs/s through one endpoint, /run from several clients, until /health counts them
//   all completed.
// - the tick's cost with many finished jobs kept for their TTL (--kept N), on a control plane in
//   process with a manual clock: what every 250 ms tick spends on an endpoint's stored jobs.
// Cold start with a real container is tests/../bench/endpoints_cold_start.sh. Results in
// docs/benchmarks.md.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "catalog/catalog_file.h"
#include "core/clock.h"
#include "net/http_client.h"
#include "server/control_plane.h"
#include "server/secrets.h"
#include "server/server.h"
#include "store/commit_queue.h"
#include "store/store.h"
#include "testing/temp_dir.h"

namespace suanli::bench {
namespace {

namespace json = boost::json;

struct Options {
  int sync = 300;    // sequential runsync calls
  int jobs = 2'000;  // /run jobs for the throughput
  int workers = 3;
  int clients = 4;
  int kept = 20'000;  // finished jobs kept for the tick's measurement
};

bool ParseArgs(int argc, char** argv, Options* options) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--sync") {
      options->sync = value;
    } else if (flag == "--jobs") {
      options->jobs = value;
    } else if (flag == "--workers") {
      options->workers = value;
    } else if (flag == "--clients") {
      options->clients = value;
    } else if (flag == "--kept") {
      options->kept = value;
    } else {
      std::cerr << "usage: endpoints_bench [--sync N] [--jobs N] [--workers N] [--clients N] "
                   "[--kept N]\n";
      return false;
    }
  }
  return options->workers >= 1 && options->clients >= 1;
}

std::unique_ptr<net::HttpClient> Client(const std::string& url) {
  core::Result<std::unique_ptr<net::HttpClient>> client = net::HttpClient::Create(url);
  if (!client.ok()) {
    std::cerr << client.status().ToString() << "\n";
    std::exit(1);
  }
  return std::move(*client);
}

// Sends one request; exits on a transport error or a status not in `expected`.
net::HttpResponse MustSend(net::HttpClient& client, std::string_view method,
                           std::string_view target, std::string_view body,
                           const std::string& authorization, std::initializer_list<int> expected) {
  net::Headers headers;
  if (!authorization.empty()) headers.emplace_back("Authorization", authorization);
  core::Result<net::HttpResponse> response = client.Send(method, target, body, headers);
  if (!response.ok()) {
    std::cerr << method << " " << target << ": " << response.status().ToString() << "\n";
    std::exit(1);
  }
  if (std::find(expected.begin(), expected.end(), response->status) == expected.end()) {
    std::cerr << method << " " << target << ": " << response->status << " " << response->body
              << "\n";
    std::exit(1);
  }
  return std::move(*response);
}

double Millis(core::MonotonicTime from, core::MonotonicTime to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

double Percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1,
                         static_cast<size_t>(fraction * static_cast<double>(values.size())))];
}

// The control plane's tick with `kept` finished jobs on one endpoint (kept for their 24 h TTL) and
// one idle worker: the median of 50 ticks, in milliseconds.
double TickMillis(int kept) {
  testing::TempDir dir;
  std::unique_ptr<store::Store> store = store::OpenSqliteStore(dir.File("suanli.db")).value();
  store::CommitQueue queue(*store);
  core::ManualClock clock;
  clock.Set(core::TimePoint(std::chrono::seconds(1'796'200'000)));
  server::OpenSslEntropy entropy;
  std::string token;
  std::unique_ptr<server::ControlPlane> plane =
      std::move(server::ControlPlane::Open(*store, queue, catalog::LoadBuiltInCatalog().value(),
                                           clock, entropy, server::ControlPlaneOptions(), &token)
                    .value());
  const server::Principal admin = plane->Authenticate(token).value();
  const std::string user_id =
      plane
          ->CreateUser(admin, "bench", core::Role::kUser, core::Money::FromMicros(int64_t{1} << 50))
          .value()
          .value.id;
  const server::Principal owner{user_id, core::Role::kUser, "", ""};
  server::EndpointSpec spec;
  spec.name = "bench";
  spec.image = "busybox";
  spec.gpu_type = "4090";
  spec.min_workers = 1;
  spec.max_workers = 1;
  const std::string endpoint = plane->CreateEndpoint(owner, spec).value().value.endpoint.id;
  (void)plane->Tick();  // starts the worker (a pending pod: no node here)
  const std::string pod = plane->GetEndpoint(owner, endpoint).value().value.workers.at(0).pod_id;
  const std::string worker_token =
      plane->GetPod(owner, pod).value().value.env.at("SUANLI_WORKER_TOKEN");
  for (int i = 0; i < kept; ++i) {
    const std::string job =
        plane->SubmitJob(owner, endpoint, server::JobRequest{std::to_string(i), "", {}, {}})
            .value()
            .value.id;
    (void)plane->TakeJob(endpoint, pod, worker_token).value();
    (void)plane->FinishJob(endpoint, pod, worker_token, job, "1", "").value();
  }
  std::vector<double> ticks;
  for (int i = 0; i < 50; ++i) {
    clock.Advance(std::chrono::milliseconds(250));
    const core::MonotonicTime start = core::MonotonicNow();
    (void)plane->Tick();
    ticks.push_back(Millis(start, core::MonotonicNow()));
  }
  return Percentile(ticks, 0.5);
}

}  // namespace
}  // namespace suanli::bench

int main(int argc, char** argv) {
  using namespace suanli;
  using namespace suanli::bench;
  Options options;
  if (!ParseArgs(argc, argv, &options)) return 2;

  for (const int kept : {0, options.kept}) {
    fmt::print("tick with {} finished jobs kept: median {:.1f} us\n", kept,
               TickMillis(kept) * 1000);
  }

  testing::TempDir temp;
  core::SystemClock clock;
  std::ostringstream server_log;
  core::Result<catalog::Catalog> catalog = catalog::LoadBuiltInCatalog();
  if (!catalog.ok()) return 1;
  server::ServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.data_dir = temp.path();
  core::Result<std::unique_ptr<server::Server>> server =
      server::Server::Start(server_options, std::move(*catalog), clock, server_log);
  if (!server.ok()) {
    std::cerr << server.status().ToString() << "\n";
    return 1;
  }
  const std::string url = fmt::format("http://127.0.0.1:{}", (*server)->port());
  std::string admin;
  std::ifstream(temp.path() / "admin-token") >> admin;
  std::unique_ptr<net::HttpClient> client = Client(url);
  const std::string user =
      MustSend(*client, "POST", "/v1/users", R"({"name":"bench","credits_micros":1000000000000})",
               "Bearer " + admin, {201})
          .body;
  const std::string bearer = "Bearer " + std::string(json::parse(user).at("token").as_string());
  // Workers as pods with no node: they stay pending, and the worker threads below speak for them.
  const std::string created =
      MustSend(*client, "POST", "/v1/endpoints",
               fmt::format(R"({{"name":"bench","image":"busybox","gpu_type":"4090",)"
                           R"("min_workers":{0},"max_workers":{0},"idle_timeout_s":3600}})",
                           options.workers),
               bearer, {201})
          .body;
  const std::string endpoint(json::parse(created).at("id").as_string());
  const std::string v2 = "/v2/" + endpoint;

  std::vector<std::pair<std::string, std::string>> workers;  // pod id, token
  for (int attempt = 0; attempt < 200 && workers.empty(); ++attempt) {
    const json::value info =
        json::parse(MustSend(*client, "GET", "/v1/endpoints/" + endpoint, "", bearer, {200}).body);
    const json::array& list = info.at("workers").as_array();
    if (list.size() == static_cast<size_t>(options.workers)) {
      for (const json::value& worker : list) {
        const std::string pod(worker.at("id").as_string());
        const json::value view =
            json::parse(MustSend(*client, "GET", "/v1/pods/" + pod, "", bearer, {200}).body);
        workers.emplace_back(pod, std::string(view.at("env").at("RUNPOD_AI_API_KEY").as_string()));
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  if (workers.empty()) {
    std::cerr << "the endpoint's workers were not started\n";
    return 1;
  }

  std::atomic<bool> stop = false;
  std::vector<std::thread> worker_threads;
  // Not structured bindings: clang 14 (clang-tidy's) cannot capture them.
  for (const auto& worker : workers) {
    worker_threads.emplace_back([&, pod = worker.first, token = worker.second] {
      std::unique_ptr<net::HttpClient> http = Client(url);
      while (!stop) {
        net::HttpResponse job =
            MustSend(*http, "GET", v2 + "/job-take/" + pod + "?wait_s=1", "", token, {200, 204});
        if (job.status == 204) continue;
        const json::value taken = json::parse(job.body);
        const std::string id(taken.at("id").as_string());
        MustSend(*http, "POST", v2 + "/job-done/" + pod + "/" + id,
                 R"({"output":)" + json::serialize(taken.at("input")) + "}", token, {200});
      }
    });
  }

  // Warm overhead.
  std::vector<double> sync_ms;
  for (int i = 0; i < options.sync; ++i) {
    const core::MonotonicTime start = core::MonotonicNow();
    const net::HttpResponse answer = MustSend(*client, "POST", v2 + "/runsync",
                                              fmt::format(R"({{"input":{}}})", i), bearer, {200});
    sync_ms.push_back(Millis(start, core::MonotonicNow()));
    if (answer.body.find("COMPLETED") == std::string::npos) {
      std::cerr << "runsync did not complete: " << answer.body << "\n";
      return 1;
    }
  }
  fmt::print(
      "warm overhead (runsync, {} sequential, {} idle workers): p50 {:.2f} ms, p90 {:.2f} ms, "
      "p99 {:.2f} ms, max {:.2f} ms\n",
      options.sync, options.workers, Percentile(sync_ms, 0.5), Percentile(sync_ms, 0.9),
      Percentile(sync_ms, 0.99), Percentile(sync_ms, 1.0));

  // Throughput.
  const core::MonotonicTime start = core::MonotonicNow();
  std::vector<std::thread> clients;
  for (int c = 0; c < options.clients; ++c) {
    clients.emplace_back([&, c] {
      std::unique_ptr<net::HttpClient> http = Client(url);
      for (int i = c; i < options.jobs; i += options.clients) {
        MustSend(*http, "POST", v2 + "/run", fmt::format(R"({{"input":{}}})", i), bearer, {200});
      }
    });
  }
  for (std::thread& thread : clients) thread.join();
  const double submitted_ms = Millis(start, core::MonotonicNow());
  int64_t completed = 0;
  while (completed < options.sync + options.jobs) {
    const json::value health =
        json::parse(MustSend(*client, "GET", v2 + "/health", "", bearer, {200}).body);
    completed = health.at("jobs").at("completed").to_number<int64_t>();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double total_ms = Millis(start, core::MonotonicNow());
  fmt::print(
      "throughput ({} jobs, {} clients, {} workers): {:.0f} jobs/s end to end "
      "(all submitted in {:.0f} ms: {:.0f} submits/s)\n",
      options.jobs, options.clients, options.workers,
      static_cast<double>(options.jobs) * 1000.0 / total_ms, submitted_ms,
      static_cast<double>(options.jobs) * 1000.0 / submitted_ms);
  stop = true;
  for (std::thread& thread : worker_threads) thread.join();
  (*server)->Stop();
  return 0;
}
