// The web console, the advisor and the catalog over real HTTP: what is served without a token, the
// advisor at this cloud's prices, and catalog reads racing price changes and creates.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "billing/meter.h"
#include "catalog/catalog_file.h"
#include "core/clock.h"
#include "core/status.h"
#include "net/base64.h"
#include "server/api.h"
#include "server/api_testing.h"
#include "server/server.h"

namespace suanli::server {
namespace {

using core::FormatTime;
using core::ParseTime;

namespace json = boost::json;
using testing::ApiClient;
using testing::ApiReply;
using testing::Array;
using testing::Int;
using testing::IsApiError;
using testing::Str;

TEST_F(ApiServerTest, TheConsoleIsServedAtTheRootWithoutATokenAndMayLoadOnlyItsOwnFiles) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto client = net::HttpClient::Create("http://127.0.0.1:" + std::to_string(server_->port()));
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const auto get = [&](std::string_view path) {
    core::Result<net::HttpResponse> response = (*client)->Send("GET", path);
    EXPECT_TRUE(response.ok()) << path << ": " << response.status().ToString();
    net::HttpResponse none;
    none.status = 0;
    return response.ok() ? *response : none;
  };
  const auto header = [](const net::HttpResponse& response, std::string_view name) {
    for (const auto& [key, value] : response.headers) {
      if (key == name) return value;
    }
    return std::string();
  };
  const net::HttpResponse page = get("/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find(R"(<script type="module" src="/console/js/main.js">)"),
            std::string::npos);
  const std::string policy = header(page, "content-security-policy");
  EXPECT_NE(policy.find("default-src 'self'"), std::string::npos) << policy;
  EXPECT_NE(policy.find("frame-ancestors 'none'"), std::string::npos) << policy;
  EXPECT_EQ(policy.find("unsafe-inline"), std::string::npos) << policy;
  EXPECT_EQ(header(page, "x-content-type-options"), "nosniff");

  // Its ES modules (web/js/), each at its path: the entry point, and a page it imports. That none
  // parses the server's text as HTML (no innerHTML) is scripts/lint.sh's rule.
  for (const std::string_view path : {"/console/js/main.js", "/console/js/pages/pods.js"}) {
    const net::HttpResponse script = get(path);
    EXPECT_EQ(script.status, 200) << path;
    EXPECT_EQ(script.content_type, "text/javascript; charset=utf-8") << path;
    EXPECT_NE(script.body.find("import "), std::string::npos) << path;
    EXPECT_EQ(header(script, "x-content-type-options"), "nosniff") << path;
    EXPECT_EQ(header(script, "cache-control"), "no-cache") << path;
  }
  EXPECT_EQ(get("/console/js/nothing.js").status, 404);
  EXPECT_EQ(get("/console/js/../index.html").status, 404);
  EXPECT_EQ(get("/console/app.js").status, 404);  // the one-file console before the modules
  EXPECT_EQ(get("/console/style.css").content_type, "text/css; charset=utf-8");
  // The chart library (200 KiB, compiled in as bytes) arrives whole.
  std::ifstream chart_file(SUANLI_CHART_LIBRARY, std::ios::binary);
  const std::string chart_library{std::istreambuf_iterator<char>(chart_file), {}};
  ASSERT_FALSE(chart_library.empty()) << SUANLI_CHART_LIBRARY;
  const net::HttpResponse chart = get("/console/chart.umd.min.js");
  EXPECT_EQ(chart.content_type, "text/javascript; charset=utf-8");
  EXPECT_TRUE(chart.body == chart_library)
      << chart.body.size() << " bytes, not " << chart_library.size();
  EXPECT_NE(page.body.find(R"(<script defer src="/console/chart.umd.min.js">)"), std::string::npos);
  EXPECT_EQ(get("/console/nothing.js").status, 404);
  EXPECT_EQ(get("/index.html").body, page.body);
}

// What the console's Projects and Pods pages show: every member by name (a viewer may not read
// other users, so the project says), and an admin's list of every pod, a project's included.
TEST_F(ApiServerTest, AProjectNamesItsMembersAndAnAdminListsItsPods) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  RegisterNode("n1", "RTX 4090", 2);
  const Account owner = CreateUser("owner", kPlentyOfCredits);
  const Account viewer = CreateUser("viewer", 0);
  ASSERT_EQ(api().Post("/v1/projects", owner.token, R"({"name":"team"})").status, 201);
  ASSERT_EQ(
      api()
          .Send("PUT", "/v1/projects/team/members/viewer", owner.token, R"({"role":"viewer"})")
          .status,
      200);
  const ApiReply shown = api().Get("/v1/projects/team", viewer.token);
  ASSERT_EQ(shown.status, 200) << shown.Describe();
  std::map<std::string, std::string> names;  // user id -> name
  for (const json::value& member : Array(shown.json, "members")) {
    names[Str(member, "user_id")] = Str(member, "name");
  }
  EXPECT_EQ(names, (std::map<std::string, std::string>{{owner.id, "owner"}, {viewer.id, "viewer"}}))
      << shown.text;

  const std::string own = CreatePod(owner.token);
  const std::string team = CreatePod(
      owner.token,
      {{"template", "pytorch"}, {"gpu_type", "4090"}, {"volume_gb", 0}, {"project", "team"}});
  const ApiReply listed = api().Get("/v1/pods?view=compact", admin_);
  ASSERT_EQ(listed.status, 200) << listed.Describe();
  std::set<std::string> ids;
  for (const json::value& pod : Array(listed.json, "pods")) ids.insert(Str(pod, "id"));
  EXPECT_EQ(ids, (std::set<std::string>{own, team})) << listed.text;
}

TEST_F(ApiServerTest, TheAdvisorAnswersAtThisCloudsPricesAndRefusesABadWorkload) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const Account renter = CreateUser("renter", kPlentyOfCredits);
  const ApiReply models = api().Get("/v1/models", "");
  ASSERT_EQ(models.status, 200) << models.Describe();
  EXPECT_GE(Array(models.json, "models").size(), 20u);
  EXPECT_NE(models.text.find(R"("name":"llama-3-8b")"), std::string::npos);
  const json::object workload{{"model", "llama-3-8b"}, {"task", "lora"}, {"tokens", 5e7}};
  ApiReply advice =
      api().PostJson("/v1/advise", renter.token, json::object{{"workload", workload}});
  ASSERT_EQ(advice.status, 200) << advice.Describe();
  const json::array& estimates = Array(advice.json, "estimates");
  ASSERT_GE(estimates.size(), 30u) << "every catalog type is estimated";
  EXPECT_FALSE(Str(advice.object().at("recommendation"), "reason").empty()) << advice.text;
  const auto estimate_of = [](const ApiReply& reply, std::string_view gpu) {
    for (const json::value& estimate : Array(reply.json, "estimates")) {
      if (Str(estimate, "gpu") == gpu) return estimate;
    }
    ADD_FAILURE() << "no estimate for " << gpu;
    return json::value();
  };
  const std::string before = json::serialize(estimate_of(advice, "RTX 4090"));

  // An admin's price is the one the advisor costs with.
  ASSERT_EQ(
      api().Send("PUT", "/v1/prices/4090", admin_, R"({"price_per_hour_micros":3000000})").status,
      200);
  advice = api().PostJson("/v1/advise", renter.token, json::object{{"workload", workload}});
  ASSERT_EQ(advice.status, 200) << advice.Describe();
  const json::value repriced = estimate_of(advice, "RTX 4090");
  EXPECT_NE(json::serialize(repriced), before);
  // $3.00 per GPU, for as many GPUs as the workload needs.
  EXPECT_EQ(repriced.as_object().at("rent_usd_per_hour").to_number<double>(),
            3.0 * static_cast<double>(Int(repriced, "count")))
      << repriced;

  for (const std::string body :
       {R"({})", R"({"workload":{"model":"llama-9000","task":"lora"}})",
        R"({"workload":{"model":"llama-3-8b","task":"juggle"}})",
        R"({"workload":{"model":"llama-3-8b","task":"lora","tokens":-1}})"}) {
    EXPECT_TRUE(
        IsApiError(api().Send("POST", "/v1/advise", renter.token, body), 400, "INVALID_ARGUMENT"))
        << body;
  }
}

TEST_F(ApiServerTest, TheAdvisorRanksWhatThisCloudHasUnlessAskedForTheMarket) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const Account renter = CreateUser("renter", kPlentyOfCredits);
  const auto advise = [&](const std::string& workload, const std::string& scope = "") {
    return api().Send("POST", "/v1/advise", renter.token,
                      R"({"workload":)" + workload +
                          (scope.empty() ? "" : R"(,"scope":")" + scope + R"(")") + "}");
  };
  const std::string lora = R"({"model":"llama-3-8b","task":"lora","tokens":5e7})";
  // No node yet: the market, and the answer says why.
  ApiReply advice = advise(lora);
  ASSERT_EQ(advice.status, 200) << advice.Describe();
  EXPECT_EQ(Str(advice.json, "scope"), "market");
  EXPECT_NE(Str(advice.json, "scope_note").find("no GPU nodes yet"), std::string::npos);
  EXPECT_GE(Array(advice.json, "estimates").size(), 30u);

  RegisterNode("pair", "RTX 4090", 2);
  RegisterNode("single", "RTX 3090", 1);
  advice = advise(lora);
  ASSERT_EQ(advice.status, 200) << advice.Describe();
  EXPECT_EQ(Str(advice.json, "scope"), "cluster");
  const std::map<std::string, int64_t> largest = {{"RTX 4090", 2}, {"RTX 3090", 1}};
  std::set<std::string> types;
  for (const json::value& estimate : Array(advice.json, "estimates")) {
    const std::string gpu = Str(estimate, "gpu");
    types.insert(gpu);
    ASSERT_TRUE(largest.contains(gpu)) << gpu << " is not in this cloud";
    EXPECT_LE(Int(estimate, "count"), largest.at(gpu)) << estimate;
    EXPECT_EQ(Int(estimate, "cluster_gpus"), largest.at(gpu)) << estimate;
    EXPECT_EQ(Int(estimate, "free_now"), largest.at(gpu)) << estimate;
  }
  EXPECT_EQ(types.size(), 2u);
  EXPECT_TRUE(largest.contains(Str(advice.object().at("recommendation"), "gpu"))) << advice.text;

  // Serving a 70B model in bf16 fits on none of them (two 4090s at most on one node): nothing
  // is picked here, while the market has a pick this cloud does not have.
  const std::string big = R"({"model":"llama-3-70b","task":"serve"})";
  advice = advise(big);
  ASSERT_EQ(advice.status, 200) << advice.Describe();
  EXPECT_TRUE(advice.object().at("recommendation").at("gpu").is_null())
      << json::serialize(advice.object().at("recommendation"));
  advice = advise(big, "market");
  ASSERT_EQ(advice.status, 200) << advice.Describe();
  EXPECT_EQ(Str(advice.json, "scope"), "market");
  const std::string market_pick = Str(advice.object().at("recommendation"), "gpu");
  EXPECT_FALSE(market_pick.empty()) << json::serialize(advice.object().at("recommendation"));
  for (const json::value& estimate : Array(advice.json, "estimates")) {
    if (Str(estimate, "gpu") == market_pick) {
      EXPECT_EQ(Int(estimate, "cluster_gpus"), 0);
    }
  }
  EXPECT_TRUE(IsApiError(advise(lora, "galaxy"), 400, "INVALID_ARGUMENT"));
}

// A node's agent reports what suanli-gpu-probe measured; the cluster's advice predicts from it
// (agent/gpu_probe.h, advisor/measured.h), the market's from the datasheets.
TEST_F(ApiServerTest, TheAdvisorPredictsFromWhatThisCloudsGpusMeasuredAndSaysSo) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const Account renter = CreateUser("renter", kPlentyOfCredits);
  const Account node = RegisterNode("n1", "RTX 4090", 2);
  const auto advise = [&](std::string_view scope) {
    const ApiReply reply = api().Send("POST", "/v1/advise", renter.token,
                                      R"({"scope":")" + std::string(scope) +
                                          R"(","workload":{"model":"llama-3-8b","task":"infer"}})");
    EXPECT_EQ(reply.status, 200) << reply.Describe();
    for (const json::value& estimate : Array(reply.json, "estimates")) {
      if (Str(estimate, "gpu") == "RTX 4090" && Int(estimate, "count") == 1) return estimate;
    }
    ADD_FAILURE() << "no estimate for one RTX 4090: " << reply.text;
    return json::value();
  };
  const auto decode_rate = [](const json::value& estimate) {
    return estimate.at("throughput").at("decode_tokens_per_s").to_number<double>();
  };
  const json::value datasheet = advise("cluster");
  EXPECT_FALSE(datasheet.as_object().contains("measured")) << datasheet;

  // Two cards that copy 600 GB/s, where a healthy 4090 copies ~90 % of its 1008.
  json::object heartbeat = NodeBody("n1", "RTX 4090", 2);
  heartbeat.erase("name");
  json::array measured;
  for (int index : {0, 1}) {
    measured.emplace_back(json::object{
        {"index", index}, {"memory_bandwidth_gbps", 600}, {"fp16_tflops", 150.0 + index}});
  }
  heartbeat["gpu_measurements"] = measured;
  ASSERT_EQ(api().PostJson("/v1/agent/heartbeat", node.token, heartbeat).status, 200);

  const ApiReply available = api().Get("/v1/availability", renter.token);
  ASSERT_EQ(available.status, 200) << available.Describe();
  const json::value& figures = Array(available.json, "gpus").at(0).at("measured");
  EXPECT_EQ(Int(figures, "gpus"), 2);
  EXPECT_EQ(figures.at("memory_bandwidth_gbps").to_number<double>(), 600);
  EXPECT_EQ(figures.at("fp16_tflops").to_number<double>(), 150.5);
  const ApiReply shown = api().Get("/v1/nodes/" + node.id, admin_);
  EXPECT_EQ(Array(shown.json, "gpu_measurements").size(), 2u) << shown.text;

  const json::value calibrated = advise("cluster");
  const json::value& used = calibrated.at("measured");
  EXPECT_NEAR(used.at("bandwidth_scale").to_number<double>(), 600 / (0.9 * 1008), 1e-6);
  EXPECT_EQ(used.at("compute_scale").to_number<double>(), 1);  // 150.5 of 165: healthy
  EXPECT_LT(decode_rate(calibrated), 0.95 * decode_rate(datasheet));
  EXPECT_NE(json::serialize(calibrated.at("notes")).find("measurements of 2 RTX 4090 GPU(s)"),
            std::string::npos)
      << calibrated;
  // The market is every catalog type as its datasheet says.
  const json::value market = advise("market");
  EXPECT_FALSE(market.as_object().contains("measured"));
  EXPECT_EQ(decode_rate(market), decode_rate(datasheet));

  // A measurement must be of one of the node's GPUs; a bad one changes nothing.
  heartbeat["gpu_measurements"].as_array().emplace_back(
      json::object{{"index", 5}, {"memory_bandwidth_gbps", 1}, {"fp16_tflops", 1}});
  const ApiReply refused = api().PostJson("/v1/agent/heartbeat", node.token, heartbeat);
  EXPECT_TRUE(IsApiError(refused, 400, "INVALID_ARGUMENT"));
  EXPECT_NE(refused.text.find("gpu_measurements: index 5"), std::string::npos) << refused.text;
  EXPECT_EQ(decode_rate(advise("cluster")), decode_rate(calibrated));
}

TEST_F(ApiServerTest, TheAdvisorTakesAHuggingFaceConfigForAModelTheZooLacks) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const Account renter = CreateUser("renter", kPlentyOfCredits);
  const std::string config =
      R"({"model_type": "llama", "_name_or_path": "my-org/tiny-llama", "hidden_size": 2048,
          "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32,
          "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048})";
  const ApiReply advice =
      api().Send("POST", "/v1/advise", renter.token,
                 R"({"workload":{"hf_config":)" + config + R"(,"task":"infer"}})");
  ASSERT_EQ(advice.status, 200) << advice.Describe();
  const json::value& workload = advice.object().at("workload");
  EXPECT_EQ(Str(workload, "model"), "my-org/tiny-llama");
  EXPECT_NEAR(workload.as_object().at("params").to_number<double>(), 1.1e9, 0.05e9);

  const std::map<std::string, std::string> refused = {
      {R"({"workload":{"model":"gpt2","hf_config":)" + config + R"(,"task":"infer"}})",
       "exactly one of model"},
      {R"({"workload":{"task":"infer"}})", "exactly one of model"},
      {R"({"workload":{"hf_config":"config.json","task":"infer"}})", "hf_config: must be"},
      {R"({"workload":{"hf_config":{"model_type":"abacus"},"task":"infer"}})", "abacus"},
  };
  for (const auto& [body, reason] : refused) {
    const ApiReply reply = api().Send("POST", "/v1/advise", renter.token, body);
    EXPECT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT")) << body;
    EXPECT_NE(reply.text.find(reason), std::string::npos) << reply.text;
  }
}

TEST_F(ApiServerTest, TheAdvisorTakesImagesOrRequestsAndNamesWorkloadFieldsNotFlags) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const Account renter = CreateUser("renter", kPlentyOfCredits);
  const auto advise = [&](const std::string& workload) {
    return api().Send("POST", "/v1/advise", renter.token, R"({"workload":)" + workload + "}");
  };
  const ApiReply images = advise(R"({"model":"sd-1.5","task":"infer","images":5000})");
  ASSERT_EQ(images.status, 200) << images.Describe();
  const json::value& work = images.object().at("workload").as_object().at("work");
  EXPECT_EQ(work.as_object().at("images").to_number<double>(), 5000);
  EXPECT_FALSE(work.as_object().at("assumed").as_bool());
  const ApiReply requests = advise(R"({"model":"llama-3-8b","task":"serve","requests":20000})");
  ASSERT_EQ(requests.status, 200) << requests.Describe();
  EXPECT_EQ(requests.object()
                .at("workload")
                .as_object()
                .at("work")
                .as_object()
                .at("requests")
                .to_number<double>(),
            20000);

  const std::map<std::string, std::string> refused = {
      {R"({"model":"sd-1.5","task":"infer","tokens":1000})",
       "tokens does not apply to infer on sd-1.5; give images or requests"},
      {R"({"model":"llama-3-8b","task":"lora","images":10})", "give tokens or samples"},
      {R"({"model":"sd-1.5","task":"infer","images":10,"requests":10})", "give one amount of work"},
  };
  for (const auto& [workload, reason] : refused) {
    const ApiReply reply = advise(workload);
    EXPECT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT")) << workload;
    EXPECT_NE(reply.text.find(reason), std::string::npos) << reply.text;
    EXPECT_EQ(reply.text.find("--"), std::string::npos) << "no CLI flags: " << reply.text;
  }
}

// --- Concurrency --------------------------------------------------------------------------------

// The public catalog is read on every HTTP thread while an admin changes prices and a renter
// creates pods: prices live in the control plane's guarded state, so this must neither crash nor
// refuse anything.
TEST_F(ApiServerTest, CatalogReadsRacePriceChangesAndCreatesSafely) {
  ASSERT_NO_FATAL_FAILURE(StartServer(size_t{1} << 20, /*threads=*/4));
  const Account renter = CreateUser("renter", kPlentyOfCredits);
  // The renter queues hundreds of pods (no node): past the default quotas.
  ASSERT_EQ(api()
                .Send("PUT", "/v1/users/" + renter.id + "/quota", admin_,
                      R"({"max_pods":1000000,"max_pending_pods":1000000})")
                .status,
            200);
  const std::string url = "http://127.0.0.1:" + std::to_string(server_->port());
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  const auto fail = [&failures](const std::string& what) {
    if (failures++ == 0) ADD_FAILURE() << what.substr(0, 300);
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, url] {
      ApiClient reader(url);
      while (!stop) {
        const ApiReply gpus = reader.Get("/v1/gpus");
        if (gpus.status != 200 || Array(gpus.json, "gpus").size() < 10) fail(gpus.Describe());
      }
    });
  }
  threads.emplace_back([&, url] {
    ApiClient renter_client(url);
    while (!stop) {
      const ApiReply pod =
          renter_client.Post("/v1/pods", renter.token,
                             R"({"image":"busybox","gpu_type":"L4","volume_gb":0,"queue":true})");
      if (pod.status != 201) fail(pod.Describe());
    }
  });
  ApiClient admin(url);
  constexpr int kRounds = 100;
  for (int i = 1; i <= kRounds; ++i) {
    for (std::string_view gpu : {"T4", "L4", "A10", "RTX 3090", "H100 SXM"}) {
      const ApiReply set =
          admin.Send("PUT", "/v1/prices/" + net::PercentEncode(gpu), admin_,
                     R"({"price_per_hour_micros":)" + std::to_string(i * 1000) + "}");
      if (set.status != 200) fail(std::string(gpu) + ": " + set.Describe());
    }
  }
  stop = true;
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);
  const ApiReply gpus = api().Get("/v1/gpus");
  for (const json::value& gpu : Array(gpus.json, "gpus")) {
    if (Str(gpu, "name") == "T4") {
      EXPECT_EQ(Int(gpu, "price_per_hour_micros"), kRounds * 1000);
    }
  }
}

}  // namespace
}  // namespace suanli::server
