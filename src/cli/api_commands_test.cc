// The API commands run in process against a fake server: what they send, print and exit with.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <sstream>

#include "cli/cli.h"
#include "cli/fake_api_server.h"
#include "cli/files.h"
#include "testing/temp_dir.h"

namespace suanli::cli {
namespace {

struct Outcome {
  int exit_code;
  std::string out;
  std::string err;
};

Outcome Suanli(const ApiEnvironment& env, std::vector<std::string> args) {
  std::ostringstream out;
  std::ostringstream err;
  const int exit_code = RunCli(args, out, err, env);
  return {exit_code, out.str(), err.str()};
}

void ExpectOneLineError(const Outcome& outcome, int exit_code, std::string_view expected) {
  EXPECT_EQ(outcome.exit_code, exit_code) << outcome.err;
  EXPECT_TRUE(outcome.out.empty()) << outcome.out;
  EXPECT_NE(outcome.err.find(expected), std::string::npos) << "stderr: " << outcome.err;
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
}

std::string PodJson(std::string_view id, std::string_view state, std::string_view reason = "") {
  return R"({"id":")" + std::string(id) + R"(","name":"nb","state":")" + std::string(state) +
         R"(","desired_state":"running","state_reason":")" + std::string(reason) +
         R"(","gpu_type":"RTX 4090","gpu_count":1,"node_id":"node_a","cost_micros":0,)"
         R"("uptime_s":0,"created_at":"2026-12-02T14:46:25Z"})";
}

TEST(PodsCommandTest, ListPrintsATableOrTheServersJson) {
  FakeApiServer server([](const FakeRequest& request) {
    EXPECT_EQ(request.target, "/v1/pods");
    return FakeApiServer::Json(200, R"({"pods":[)" + PodJson("pod_1", "running") + "]}");
  });
  const ApiEnvironment env = server.Environment();
  const Outcome table = Suanli(env, {"pods", "list"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.rfind("ID ", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("1x RTX 4090"), std::string::npos) << table.out;

  const Outcome bare = Suanli(env, {"pods"});  // list is the default
  EXPECT_EQ(bare.out, table.out);

  const Outcome json = Suanli(env, {"pods", "list", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const boost::json::value parsed = boost::json::parse(json.out);
  EXPECT_EQ(parsed.at("pods").at(0).at("id").as_string(), "pod_1");
  EXPECT_EQ(server.requests().back().Header("Authorization"), "Bearer sl_test");
}

TEST(PodsCommandTest, ListOfAProjectAsksForItsPodsOnly) {
  FakeApiServer server([](const FakeRequest& request) {
    EXPECT_EQ(request.target, "/v1/pods?project=vision%20lab");
    return FakeApiServer::Json(200, R"({"pods":[]})");
  });
  const Outcome listed = Suanli(server.Environment(), {"pods", "list", "--project", "vision lab"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.err.find("project vision lab has no pods"), std::string::npos) << listed.err;
  EXPECT_NE(listed.err.find("--project vision lab"), std::string::npos) << listed.err;
  EXPECT_EQ(server.requests().size(), 1u);
}

// A pod's own host key (issue 34, item 9) goes into suanli's known_hosts under the pod's alias,
// and ssh is told to hold the pod to it; a pod without one keeps the first key it is shown.
TEST(PodsCommandTest, SshHoldsAPodToItsOwnHostKey) {
  const std::string key =
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINdamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea";
  FakeApiServer server([&key](const FakeRequest& request) {
    const std::string id = request.target.substr(std::string("/v1/pods/").size());
    return FakeApiServer::Json(
        200, R"({"id":")" + id + R"(","state":"running","node_address":"10.0.0.7",)" +
                 (id == "pod_1" ? R"("ssh_host_key":")" + key + R"(",)" : std::string()) +
                 R"("port_mappings":[{"container_port":22,"protocol":"tcp","host_port":40022}]})");
  });
  const testing::TempDir home;
  ApiEnvironment env = server.Environment();
  env.xdg_config_home = home.path().string();
  const Outcome held = Suanli(env, {"pods", "ssh", "pod_1", "--print"});
  ASSERT_EQ(held.exit_code, 0) << held.err;
  const std::string known = (home.path() / "suanli" / "known_hosts").string();
  EXPECT_EQ(held.out, "ssh -o HostKeyAlias=suanli-pod_1 -o UserKnownHostsFile=" + known +
                          " -o StrictHostKeyChecking=yes -o HostKeyAlgorithms=ssh-ed25519 -p 40022 "
                          "root@10.0.0.7\n");
  ASSERT_EQ(Suanli(env, {"pods", "ssh", "pod_1", "--print"}).exit_code, 0);
  EXPECT_EQ(*ReadFile(known), "suanli-pod_1 " + key + "\n") << "one line per pod, however often";
  struct stat info {};
  ASSERT_EQ(::stat(known.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);

  const Outcome trusted = Suanli(env, {"pods", "ssh", "pod_2", "--print"});
  EXPECT_EQ(trusted.out,
            "ssh -o HostKeyAlias=suanli-pod_2 -o StrictHostKeyChecking=accept-new -p 40022 "
            "root@10.0.0.7\n");
}

TEST(PodsCommandTest, ServerErrorsExitWithTheirCodeAndOneLine) {
  FakeApiServer server([](const FakeRequest& request) {
    if (request.method == "DELETE") {
      return FakeApiServer::Error(409, "FAILED_PRECONDITION",
                                  "pod_1's volume may hold data; add --force to delete it");
    }
    return FakeApiServer::Error(404, "NOT_FOUND", "no pod 'pod_zz'");
  });
  const ApiEnvironment env = server.Environment();
  ExpectOneLineError(Suanli(env, {"pods", "get", "pod_zz"}), 3, "suanli pods: no pod 'pod_zz'");
  ExpectOneLineError(Suanli(env, {"pods", "rm", "pod_1"}), 5, "add --force");
  EXPECT_EQ(server.requests().back().target, "/v1/pods/pod_1");
  (void)Suanli(env, {"pods", "rm", "pod_1", "--force"});
  EXPECT_EQ(server.requests().back().target, "/v1/pods/pod_1?force=true");
}

TEST(PodsCommandTest, IdsAreEncodedSoTheyCannotChangeTheRoute) {
  FakeApiServer server(
      [](const FakeRequest&) { return FakeApiServer::Json(200, PodJson("x", "stopped")); });
  (void)Suanli(server.Environment(), {"pods", "stop", "../users/1"});
  EXPECT_EQ(server.requests().back().target, "/v1/pods/..%2Fusers%2F1/stop");
}

TEST(PodsCommandTest, CreateSendsOnlyTheFlagsGiven) {
  FakeApiServer server([](const FakeRequest&) {
    return FakeApiServer::Json(201, PodJson("pod_new", "pending", "waiting for a GPU"));
  });
  const Outcome outcome =
      Suanli(server.Environment(), {"pods", "create", "--template", "pytorch", "--gpu", "RTX 4090",
                                    "--gpu-count", "2", "--env", "A=1", "--env", "B=x=y", "--port",
                                    "8888/http", "--volume-gb", "20", "--interruptible"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "pod_new pending (waiting for a GPU)\n");
  const FakeRequest& request = server.requests().back();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.target, "/v1/pods");
  EXPECT_EQ(boost::json::parse(request.body),
            boost::json::parse(R"({"template":"pytorch","gpu_type":"RTX 4090","gpu_count":2,
              "volume_gb":20,"env":{"A":"1","B":"x=y"},"ports":["8888/http"],
              "interruptible":true})"));
}

TEST(PodsCommandTest, CreateRefusesBadInputBeforeCallingTheServer) {
  FakeApiServer server([](const FakeRequest&) { return FakeApiServer::Json(201, "{}"); });
  const ApiEnvironment env = server.Environment();
  ExpectOneLineError(Suanli(env, {"pods", "create", "--gpu", "4090"}), 2, "--template or --image");
  ExpectOneLineError(Suanli(env, {"pods", "create", "--image", "x", "--env", "NOEQUALS"}), 2,
                     "--env 'NOEQUALS' is not KEY=VALUE");
  ExpectOneLineError(Suanli(env, {"pods", "create", "--image", "x", "--gpu-count", "lots"}), 2,
                     "--gpu-count");
  EXPECT_TRUE(server.requests().empty());
}

TEST(PodsCommandTest, CreateWithWaitPollsUntilRunningAndReady) {
  int polls = 0;
  FakeApiServer server([&polls](const FakeRequest& request) {
    if (request.method == "POST") return FakeApiServer::Json(201, PodJson("pod_w", "pending"));
    ++polls;
    std::string pod = PodJson("pod_w", polls < 3 ? "starting" : "running");
    // Running first with ports that do not answer yet, then ready.
    pod.insert(1, polls < 4 ? R"("ready":false,)" : R"("ready":true,)");
    return FakeApiServer::Json(200, pod);
  });
  const Outcome outcome =
      Suanli(server.Environment(), {"pods", "create", "--image", "ubuntu", "--wait", "--json"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(boost::json::parse(outcome.out).at("state").as_string(), "running");
  EXPECT_EQ(polls, 4);
  EXPECT_EQ(server.sleeps(), 3);
  EXPECT_EQ(server.requests().back().target, "/v1/pods/pod_w");
}

TEST(PodsCommandTest, CreateWithWaitShowsTheImagePullAsABar) {
  int polls = 0;
  FakeApiServer server([&polls](const FakeRequest& request) {
    if (request.method == "POST") return FakeApiServer::Json(201, PodJson("pod_w", "pending"));
    ++polls;
    std::string pod = PodJson("pod_w", polls < 4 ? "starting" : "running");
    const int64_t gib = int64_t{1} << 30;
    if (polls < 4) {
      // Twice the same figure (drawn once), then halfway.
      pod.insert(1, R"("image":"ubuntu","pull":{"current_bytes":)" +
                        std::to_string(polls < 3 ? 0 : gib) + R"(,"total_bytes":)" +
                        std::to_string(2 * gib) + "},");
    }
    pod.insert(1, R"("ready":true,)");
    return FakeApiServer::Json(200, pod);
  });
  const Outcome outcome =
      Suanli(server.Environment(), {"pods", "create", "--image", "ubuntu", "--wait"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.err,
            "\rpulling ubuntu [--------------------]   0% of 2.0 GiB"
            "\rpulling ubuntu [##########----------]  50% of 2.0 GiB\n");
}

TEST(PodsCommandTest, WaitGivesUpAtTheTimeoutWithTheReason) {
  FakeApiServer server([](const FakeRequest&) {
    return FakeApiServer::Json(200, PodJson("pod_p", "pending", "no free RTX 4090"));
  });
  const Outcome outcome = Suanli(server.Environment(), {"pods", "wait", "pod_p", "--timeout", "5"});
  // Pending is waiting for capacity: exit 6, as the README says, with the reason it waits.
  ExpectOneLineError(outcome, 6,
                     "pod pod_p is still pending after 5 s: no free RTX 4090; it stays queued");
  EXPECT_EQ(server.sleeps(), 10);  // every 0.5 s of the manual clock
}

TEST(PodsCommandTest, CreateWithWaitThatTimesOutOnCapacityExitsSix) {
  FakeApiServer server([](const FakeRequest& request) {
    const std::string reason =
        "no node with 1 free RTX 4090 also has 2 vCPU free (the most is 0); ask for less, or wait "
        "for other pods to stop";
    return FakeApiServer::Json(request.method == "POST" ? 201 : 200,
                               PodJson("pod_c", "pending", reason));
  });
  const Outcome outcome = Suanli(server.Environment(), {"pods", "create", "--image", "ubuntu",
                                                        "--wait", "--timeout", "2", "--queue"});
  ExpectOneLineError(outcome, 6,
                     "created pod_c, but it did not start: pod pod_c is still pending after 2 s: "
                     "no node with 1 free RTX 4090 also has 2 vCPU free");
  EXPECT_EQ(boost::json::parse(server.requests().front().body),
            boost::json::parse(R"({"image":"ubuntu","queue":true})"));
}

TEST(PodsCommandTest, WaitThatTimesOutOnARunningPodIsNotCapacity) {
  FakeApiServer server([](const FakeRequest&) {
    std::string pod = PodJson("pod_r", "running");
    pod.insert(1, R"("ready":false,)");
    return FakeApiServer::Json(200, pod);
  });
  ExpectOneLineError(
      Suanli(server.Environment(), {"pods", "wait", "pod_r", "--state", "ready", "--timeout", "1"}),
      9, "pod pod_r is still running (its ports do not answer yet) after 1 s");
}

TEST(PodsCommandTest, WaitStopsAtOnceWhenThePodFails) {
  FakeApiServer server([](const FakeRequest&) {
    return FakeApiServer::Json(200, PodJson("pod_f", "failed", "image not found: ubuntuu"));
  });
  ExpectOneLineError(Suanli(server.Environment(), {"pods", "wait", "pod_f"}), 5,
                     "pod pod_f is failed, not running: image not found: ubuntuu");
  EXPECT_EQ(server.sleeps(), 0);
  const Outcome bad_state =
      Suanli(server.Environment(), {"pods", "wait", "pod_f", "--state", "runing"});
  EXPECT_EQ(bad_state.exit_code, 2);
}

TEST(PodsCommandTest, WaitForStoppedAcceptsStopped) {
  FakeApiServer server(
      [](const FakeRequest&) { return FakeApiServer::Json(200, PodJson("pod_s", "stopped")); });
  const Outcome outcome =
      Suanli(server.Environment(), {"pods", "wait", "pod_s", "--state", "stopped"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "pod_s stopped\n");
}

TEST(ApiCommandsTest, NoTokenAnywhereSaysHowToLogIn) {
  FakeApiServer server([](const FakeRequest&) { return FakeApiServer::Json(200, "{}"); });
  ApiEnvironment env = server.Environment();
  env.suanli_token.reset();
  ExpectOneLineError(Suanli(env, {"pods", "list"}), 7, "no API token; run `suanli login --token");
}

TEST(ApiCommandsTest, AnUnreachableServerExitsUnavailableWithAHint) {
  ApiEnvironment env = ApiEnvironment::FromProcess();
  env.xdg_config_home = "/nonexistent-suanli-test";
  const Outcome outcome = Suanli(env, {"--url", "http://127.0.0.1:1", "--token", "sl_x", "pods"});
  ExpectOneLineError(outcome, 9, "is `suanli server` running?");
}

TEST(ApiCommandsTest, LoginChecksTheTokenThenSavesItForLaterCommands) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("suanli-login-test-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(dir);
  FakeApiServer server([](const FakeRequest& request) {
    if (request.Header("Authorization") != "Bearer sl_good") {
      return FakeApiServer::Error(401, "UNAUTHENTICATED", "unknown API token");
    }
    if (request.target == "/v1/users/me") {
      return FakeApiServer::Json(
          200, R"({"id":"usr_1","name":"ada","role":"admin","balance_micros":2500000})");
    }
    return FakeApiServer::Json(200, R"({"pods":[]})");
  });
  ApiEnvironment env = server.Environment();
  env.suanli_token.reset();
  env.xdg_config_home = dir;

  ExpectOneLineError(Suanli(env, {"login", "--token", "sl_bad"}), 7,
                     "not saved: unknown API token");
  EXPECT_FALSE(std::filesystem::exists(dir + "/suanli/config.json"));

  const Outcome login =
      Suanli(env, {"login", "--url", "http://gpu-box:7070", "--token", "sl_good"});
  ASSERT_EQ(login.exit_code, 0) << login.err;
  EXPECT_NE(login.out.find("logged in to http://gpu-box:7070 as ada (admin, usr_1)"),
            std::string::npos)
      << login.out;
  core::Result<std::optional<ApiConfig>> saved = ReadConfigFile(dir + "/suanli/config.json");
  ASSERT_TRUE(saved.ok() && saved->has_value());
  EXPECT_EQ((*saved)->url, "http://gpu-box:7070");
  EXPECT_EQ((*saved)->token, "sl_good");

  const Outcome pods = Suanli(env, {"pods", "list"});
  EXPECT_EQ(pods.exit_code, 0) << pods.err;
  EXPECT_NE(pods.err.find("no pods"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ApiCommandsTest, DollarsOnTheCommandLineBecomeMicroDollars) {
  FakeApiServer server([](const FakeRequest& request) {
    if (request.target == "/v1/users") {
      return FakeApiServer::Json(
          201, R"({"user":{"id":"usr_2","name":"bo","role":"user","balance_micros":12500000},
                   "token":"sl_new"})");
    }
    return FakeApiServer::Json(200, R"({"id":"usr_2","name":"bo","balance_micros":37500000})");
  });
  const ApiEnvironment env = server.Environment();
  const Outcome create = Suanli(env, {"users", "create", "bo", "--credits", "12.50"});
  ASSERT_EQ(create.exit_code, 0) << create.err;
  EXPECT_EQ(boost::json::parse(server.requests().back().body),
            boost::json::parse(R"({"name":"bo","credits_micros":12500000})"));
  EXPECT_NE(create.out.find("sl_new"), std::string::npos);
  EXPECT_NE(create.out.find("$12.50"), std::string::npos);

  const Outcome credit = Suanli(env, {"users", "credit", "usr_2", "25", "--note", "grant"});
  ASSERT_EQ(credit.exit_code, 0) << credit.err;
  EXPECT_EQ(server.requests().back().target, "/v1/users/usr_2/credits");
  EXPECT_EQ(boost::json::parse(server.requests().back().body),
            boost::json::parse(R"({"amount_micros":25000000,"note":"grant"})"));
  EXPECT_EQ(credit.out, "usr_2 bo: balance $37.50\n");

  ExpectOneLineError(Suanli(env, {"users", "credit", "usr_2", "12.5.0"}), 2, "AMOUNT");

  // A negative amount is no way to debit; --debit is.
  const size_t before = server.requests().size();
  ExpectOneLineError(Suanli(env, {"users", "credit", "usr_2", "--", "-5"}), 2,
                     "give a positive amount with --debit");
  EXPECT_EQ(server.requests().size(), before) << "a refused amount reached the server";
  ASSERT_EQ(Suanli(env, {"users", "credit", "usr_2", "5", "--debit"}).exit_code, 0);
  EXPECT_EQ(boost::json::parse(server.requests().back().body),
            boost::json::parse(R"({"amount_micros":-5000000})"));
}

TEST(PodsCommandTest, RemovingARunningPodSaysItIsStillRunningUntilItsNodeStopsIt) {
  FakeApiServer server([](const FakeRequest&) {
    std::string pod = PodJson("pod_r", "running", "terminated by its owner");
    const std::string running = R"("desired_state":"running")";
    pod.replace(pod.find(running), running.size(), R"("desired_state":"terminated")");
    return FakeApiServer::Json(200, pod);
  });
  const Outcome outcome = Suanli(server.Environment(), {"pods", "rm", "pod_r", "--force"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "pod_r running -> terminated (terminated by its owner)\n");
}

TEST(ApiCommandsTest, UsageAsCsvPassesTheServersTextThrough) {
  FakeApiServer server([](const FakeRequest& request) {
    EXPECT_EQ(request.target, "/v1/billing/usage?by=day&format=csv&user=usr_2");
    net::HttpResponse response = FakeApiServer::Json(200, "key,total_micros\n2026-12-01,5\n");
    response.content_type = "text/csv";
    return response;
  });
  const Outcome outcome =
      Suanli(server.Environment(), {"billing", "usage", "--by", "day", "--csv", "--user", "usr_2"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "key,total_micros\n2026-12-01,5\n");
}

TEST(ApiCommandsTest, JoinTokenPrintsTheAgentCommand) {
  FakeApiServer server([](const FakeRequest& request) {
    EXPECT_EQ(request.target, "/v1/join-tokens");
    return FakeApiServer::Json(201,
                               R"({"join_token":{"id":"jt_1","expires_at":"2026-12-03T00:00:00Z"},
                                        "secret":"slj_abc"})");
  });
  ApiEnvironment env = server.Environment();
  env.suanli_url = "http://10.0.0.5:7070";
  const Outcome outcome = Suanli(env, {"nodes", "join-token", "--note", "box-2"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("suanli agent --server http://10.0.0.5:7070 --join-token slj_abc"),
            std::string::npos)
      << outcome.out;
  EXPECT_EQ(boost::json::parse(server.requests().back().body),
            boost::json::parse(R"({"note":"box-2"})"));
}

TEST(ApiCommandsTest, EveryGroupHasHelp) {
  FakeApiServer server([](const FakeRequest&) { return FakeApiServer::Json(200, "{}"); });
  for (const char* group : {"pods", "templates", "nodes", "billing", "users", "tokens", "ssh-keys",
                            "prices", "login", "availability"}) {
    const Outcome outcome = Suanli(server.Environment(), {group, "--help"});
    EXPECT_EQ(outcome.exit_code, 0) << group << outcome.err;
    EXPECT_NE(outcome.out.find("--json"), std::string::npos) << group;
  }
  EXPECT_TRUE(server.requests().empty());
}

}  // namespace
}  // namespace suanli::cli

namespace suanli::cli {
namespace {

TEST(VolumesCommandTest, CreateListResizeAndRemoveSendWhatTheySay) {
  const std::string volume =
      R"({"id":"vol_1","name":"data","size_gb":10,"home_node":"","state":"available",)"
      R"("attached_to":["pod_1"],"attached_read_write":true,)"
      R"("storage_price_per_hour_micros":1389,"cost_micros":0,"created_at":"2026-12-02T14:46:25Z"})";
  FakeApiServer server([&volume](const FakeRequest& request) {
    if (request.target == "/v1/volumes" && request.method == "GET") {
      return FakeApiServer::Json(200, R"({"volumes":[)" + volume + "]}");
    }
    return FakeApiServer::Json(request.method == "POST" ? 201 : 200, volume);
  });
  const ApiEnvironment env = server.Environment();
  const Outcome created = Suanli(env, {"volumes", "create", "data", "--size", "10"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_NE(created.out.find("created volume vol_1"), std::string::npos) << created.out;
  EXPECT_EQ(boost::json::parse(server.requests().back().body),
            boost::json::parse(R"({"name":"data","size_gb":10})"));
  const Outcome listed = Suanli(env, {"volumes"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("pod_1 (rw)"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("in use"), std::string::npos)
      << "an available volume a pod mounts is said to be in use: " << listed.out;
  EXPECT_EQ(listed.out.find("available"), std::string::npos) << listed.out;
  ASSERT_EQ(Suanli(env, {"volumes", "resize", "data", "--size", "20"}).exit_code, 0);
  EXPECT_EQ(server.requests().back().method, "PATCH");
  EXPECT_EQ(server.requests().back().target, "/v1/volumes/data");
  EXPECT_EQ(boost::json::parse(server.requests().back().body),
            boost::json::parse(R"({"size_gb":20})"));
  ASSERT_EQ(Suanli(env, {"volumes", "rm", "vol_1"}).exit_code, 0);
  EXPECT_EQ(server.requests().back().method, "DELETE");
  ExpectOneLineError(Suanli(env, {"volumes", "create", "data", "--size", "0"}), 2, "--size");
}

TEST(VolumesCommandTest, PodsCreateTakesVolumesAsNamePathAndReadOnly) {
  FakeApiServer server([](const FakeRequest&) {
    return FakeApiServer::Json(201, PodJson("pod_new", "pending", "waiting for a GPU"));
  });
  const ApiEnvironment env = server.Environment();
  const Outcome outcome = Suanli(env, {"pods", "create", "--image", "busybox", "--volume",
                                       "data:/data", "--volume", "models:/models:ro"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(boost::json::parse(server.requests().back().body),
            boost::json::parse(R"({"image":"busybox","volumes":[
              {"name":"data","mount_path":"/data","read_only":false},
              {"name":"models","mount_path":"/models","read_only":true}]})"));
  const size_t sent = server.requests().size();
  for (std::string_view bad : {"data", "data:", ":/data", "data:relative", "data:/d:rx"}) {
    ExpectOneLineError(
        Suanli(env, {"pods", "create", "--image", "x", "--volume", std::string(bad)}), 2,
        "NAME:/path");
  }
  EXPECT_EQ(server.requests().size(), sent);
}

}  // namespace
}  // namespace suanli::cli
