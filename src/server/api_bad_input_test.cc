// Bad input over real HTTP: every refused request gets the right status and code and leaves the
// world byte for byte as it was (the clock stands still; ApiBadInputTest in api_testing.h).
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

// --- Bad input ----------------------------------------------------------------------------------

TEST_F(ApiBadInputTest, MalformedJsonIsInvalidArgument) {
  EXPECT_TRUE(IsApiError(CreatePodWith(R"({"template": "pytorch",)"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(CreatePodWith("not json at all"), 400, "INVALID_ARGUMENT"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, ABodyThatIsNotAnObjectIsInvalidArgument) {
  const ApiReply reply = CreatePodWith(R"([{"template":"pytorch"}])");
  EXPECT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(CreatePodWith(R"("pytorch")"), 400, "INVALID_ARGUMENT"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AnUnknownFieldIsNamed) {
  const ApiReply reply = CreatePodWith(R"({"template":"pytorch","gpu":"4090"})");
  ASSERT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT"));
  EXPECT_NE(reply.error_message().find("'gpu'"), std::string::npos) << reply.text;
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, ADuplicateKeyIsNamed) {
  const ApiReply reply =
      CreatePodWith(R"({"template":"pytorch","gpu_type":"4090","gpu_count":1,"gpu_count":8})");
  ASSERT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT"));
  EXPECT_NE(reply.error_message().find("'gpu_count' twice"), std::string::npos) << reply.text;
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, WrongTypesAreNamed) {
  for (std::string_view body :
       {R"({"template":"pytorch","gpu_type":"4090","gpu_count":"two"})",
        R"({"template":"pytorch","gpu_type":"4090","gpu_count":1.5})",
        R"({"template":"pytorch","gpu_type":4090})",
        R"({"template":"pytorch","gpu_type":"4090","env":["A=1"]})",
        R"({"template":"pytorch","gpu_type":"4090","interruptible":"yes"})"}) {
    SCOPED_TRACE(body);
    const ApiReply reply = CreatePodWith(body);
    EXPECT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT"));
  }
  const ApiReply reply =
      CreatePodWith(R"({"template":"pytorch","gpu_type":"4090","gpu_count":"two"})");
  EXPECT_NE(reply.error_message().find("gpu_count"), std::string::npos) << reply.text;
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, NegativeZeroAndAbsurdSizesAreRefused) {
  for (std::string_view extra :
       {R"("gpu_count":-1)", R"("gpu_count":0)", R"("gpu_count":1000)", R"("volume_gb":-5)",
        R"("memory_gb":1000000000)", R"("vcpu":0)", R"("container_disk_gb":-1)",
        R"("gpu_count":99999999999999999999)"}) {
    SCOPED_TRACE(extra);
    const ApiReply reply =
        CreatePodWith(R"({"template":"pytorch","gpu_type":"4090",)" + std::string(extra) + "}");
    ASSERT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT"));
    const std::string field(extra.substr(1, extra.find('"', 1) - 1));
    EXPECT_NE(reply.error_message().find(field), std::string::npos) << reply.text;
  }
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AVolumeMountPathMustBeCleanAndOutsideSystemDirectories) {
  for (std::string_view path :
       {"/", "/proc", "/etc", "/sys", "/workspace/../etc", "/data:ro", "/usr/lib", "relative"}) {
    SCOPED_TRACE(path);
    const std::string quoted = boost::json::serialize(boost::json::value(path));
    const ApiReply pod = CreatePodWith(R"({"template":"pytorch","gpu_type":"4090","volume_gb":5,)"
                                       R"("volume_mount_path":)" +
                                       quoted + "}");
    ASSERT_TRUE(IsApiError(pod, 400, "INVALID_ARGUMENT"));
    EXPECT_NE(pod.error_message().find("volume_mount_path"), std::string::npos) << pod.text;
    const ApiReply spec =
        api().Send("POST", "/v1/templates", a_.token,
                   R"({"name":"t","image":"busybox","volume_mount_path":)" + quoted + "}");
    ASSERT_TRUE(IsApiError(spec, 400, "INVALID_ARGUMENT"));
    EXPECT_NE(spec.error_message().find("volume_mount_path"), std::string::npos) << spec.text;
  }
  ExpectNothingChanged();
  EXPECT_EQ(CreatePodWith(R"({"template":"pytorch","gpu_type":"4090","volume_gb":5,)"
                          R"("volume_mount_path":"/data/models"})")
                .status,
            201);
}

TEST_F(ApiBadInputTest, BadVolumesAndConflictingAttachesAreRefusedWithTheReason) {
  const ApiReply made = api().Post("/v1/volumes", a_.token, R"({"name":"data","size_gb":5})");
  ASSERT_EQ(made.status, 201) << made.Describe();
  EXPECT_EQ(Str(made.json, "home_node_id"), "");
  const ApiReply rw = CreatePodWith(
      R"({"template":"pytorch","gpu_type":"4090","volumes":[{"name":"data","mount_path":"/data"}]})");
  ASSERT_EQ(rw.status, 201) << rw.Describe();
  const std::string attached = Str(rw.json, "id");
  EXPECT_EQ(Array(rw.json, "volumes").size(), 1u);
  before_ = Snapshot();
  for (std::string_view body :
       {R"({"size_gb":5})", R"({"name":"x"})", R"({"name":"x","size_gb":0})",
        R"({"name":"x","size_gb":100001})", R"({"name":"no spaces","size_gb":1})",
        R"({"name":"x","size_gb":1,"type":"nfs"})", R"({"name":"x","size_gb":"1"})"}) {
    SCOPED_TRACE(body);
    EXPECT_TRUE(IsApiError(api().Post("/v1/volumes", a_.token, body), 400, "INVALID_ARGUMENT"));
  }
  EXPECT_TRUE(IsApiError(api().Post("/v1/volumes", a_.token, R"({"name":"data","size_gb":1})"), 409,
                         "ALREADY_EXISTS"));
  EXPECT_TRUE(IsApiError(api().Send("PATCH", "/v1/volumes/data", a_.token, R"({"size_gb":1})"), 400,
                         "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(api().Send("PATCH", "/v1/volumes/data", a_.token, R"({})"), 400,
                         "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(api().Send("PATCH", "/v1/volumes/nope", a_.token, R"({"size_gb":9})"), 404,
                         "NOT_FOUND"));
  // In use: not deleted, and the answer names the pod.
  const ApiReply in_use = api().Send("DELETE", "/v1/volumes/data", a_.token);
  ASSERT_TRUE(IsApiError(in_use, 409, "FAILED_PRECONDITION"));
  EXPECT_NE(in_use.error_message().find(attached), std::string::npos) << in_use.text;
  // A second read-write attach, a read-only one beside a writer, an unknown volume, a bad path.
  const ApiReply second = CreatePodWith(
      R"({"template":"pytorch","gpu_type":"4090","volumes":[{"name":"data","mount_path":"/d"}]})");
  ASSERT_TRUE(IsApiError(second, 409, "FAILED_PRECONDITION"));
  EXPECT_NE(second.error_message().find(attached), std::string::npos) << second.text;
  EXPECT_TRUE(IsApiError(
      CreatePodWith(R"({"template":"pytorch","gpu_type":"4090","volumes":[{"name":"data",)"
                    R"("mount_path":"/d","read_only":true}]})"),
      409, "FAILED_PRECONDITION"));
  EXPECT_TRUE(IsApiError(
      CreatePodWith(R"({"template":"pytorch","gpu_type":"4090","volumes":[{"name":"nope",)"
                    R"("mount_path":"/d"}]})"),
      404, "NOT_FOUND"));
  EXPECT_TRUE(IsApiError(
      CreatePodWith(R"({"template":"pytorch","gpu_type":"4090","volumes":[{"name":"data",)"
                    R"("mount_path":"/etc"}]})"),
      400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(CreatePodWith(R"({"template":"pytorch","gpu_type":"4090",)"
                                       R"("volumes":[{"mount_path":"/d"}]})"),
                         400, "INVALID_ARGUMENT"));
  // Someone else's volume is not there at all.
  EXPECT_TRUE(IsApiError(api().Get("/v1/volumes/data", poor_.token), 404, "NOT_FOUND"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AnUnknownGpuIsNotFoundWithSuggestions) {
  const ApiReply reply = CreatePodWith(R"({"template":"pytorch","gpu_type":"RTX 9999"})");
  ASSERT_TRUE(IsApiError(reply, 404, "NOT_FOUND"));
  const std::string& message = reply.error_message();
  EXPECT_TRUE(message.find("did you mean") != std::string::npos ||
              message.find("suanli gpus") != std::string::npos)
      << message;
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, ARequestNoNodeCouldEverMeetIsAConflictThatSaysWhatWould) {
  // Nodes n1 and n2 have one RTX 4090 each (n2 cordoned: it counts, it may come back).
  const ApiReply h100 = CreatePodWith(R"({"image":"busybox","gpu_type":"H100 SXM"})");
  ASSERT_TRUE(IsApiError(h100, 409, "FAILED_PRECONDITION"));
  EXPECT_EQ(h100.error_message(),
            "no node here has H100 SXM GPUs; the types here are RTX 4090 (1 a node); or queue it "
            "on purpose until such a node joins (\"queue\": true, suanli pods create --queue)");
  const ApiReply two = CreatePodWith(R"({"image":"busybox","gpu_type":"4090","gpu_count":2})");
  ASSERT_TRUE(IsApiError(two, 409, "FAILED_PRECONDITION"));
  EXPECT_NE(two.error_message().find("the largest RTX 4090 node here has 1 GPU; ask for at most 1"),
            std::string::npos)
      << two.text;
  ExpectNothingChanged();

  // Queued on purpose, it is accepted and waits with its reason.
  const ApiReply queued =
      CreatePodWith(R"({"image":"busybox","gpu_type":"H100 SXM","queue":true})");
  ASSERT_EQ(queued.status, 201) << queued.Describe();
  EXPECT_EQ(Str(queued.json, "state"), "pending");
  EXPECT_EQ(Str(queued.json, "state_reason"), "no ready node has H100 SXM GPUs");
  EXPECT_TRUE(IsApiError(CreatePodWith(R"({"image":"busybox","queue":"yes"})"), 400));
}

TEST_F(ApiBadInputTest, AnUnknownTemplateIsNotFound) {
  const ApiReply reply = CreatePodWith(R"({"template":"pytorhc","gpu_type":"4090"})");
  ASSERT_TRUE(IsApiError(reply, 404, "NOT_FOUND"));
  EXPECT_NE(reply.error_message().find("pytorch"), std::string::npos)
      << "suggests the close name: " << reply.text;
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, ABodyOverTheLimitIsPayloadTooLarge) {
  std::string body = R"({"template":"pytorch","gpu_type":"4090","env":{"PAD":")";
  body += std::string(10 * 1024, 'x');
  body += R"("}})";
  const ApiReply reply = CreatePodWith(body);
  EXPECT_TRUE(IsApiError(reply, 413));
  // The server still answers on a new connection.
  EXPECT_EQ(api().Get("/healthz").status, 200);
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, TooLittleBalanceIsResourceExhausted) {
  const ApiReply reply = CreatePodWith(R"({"image":"busybox","gpu_type":"H100 SXM"})", poor_.token);
  EXPECT_TRUE(IsApiError(reply, core::HttpStatusFor(core::StatusCode::kResourceExhausted),
                         "RESOURCE_EXHAUSTED"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AnActionNotAllowedInTheStateIsAConflictWithTheReason) {
  for (const std::string& pod : {running_, pending_}) {
    const ApiReply reply = api().Post("/v1/pods/" + pod + "/start", a_.token);
    EXPECT_TRUE(IsApiError(reply, 409, "FAILED_PRECONDITION")) << pod;
  }
  const ApiReply restart = api().Post("/v1/pods/" + pending_ + "/restart", a_.token);
  EXPECT_TRUE(IsApiError(restart, 409, "FAILED_PRECONDITION"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, TerminatingAVolumeWithoutForceIsAConflictOnceThePodRan) {
  // One that never ran wrote nothing: no --force needed.
  const std::string never_ran =
      CreatePod(a_.token, {{"template", "pytorch"}, {"gpu_type", "4090"}, {"volume_gb", 10}});
  const ApiReply gone = api().Send("DELETE", "/v1/pods/" + never_ran, a_.token);
  EXPECT_EQ(gone.status, 200) << gone.Describe();
  EXPECT_EQ(Str(gone.json, "state"), "terminated");
  // A pod with a volume that has run (the pending one, on n2 once uncordoned) may have written
  // to it.
  ASSERT_EQ(api().Post("/v1/nodes/" + other_node_.id + "/uncordon", admin_).status, 200);
  for (int i = 0; i < 100 && Str(api().Get("/v1/pods/" + pending_, a_.token).json, "node_id") !=
                                 other_node_.id;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the scheduler's next tick
  }
  ASSERT_EQ(Report(other_node_.token, pending_, 1, "running").status, 200);
  before_ = Snapshot();
  const ApiReply reply = api().Send("DELETE", "/v1/pods/" + pending_, a_.token);
  ASSERT_TRUE(IsApiError(reply, 409, "FAILED_PRECONDITION"));
  EXPECT_NE(reply.error_message().find("force"), std::string::npos) << reply.text;
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, ForgedAndRevokedTokensAreUnauthenticated) {
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods", "sl_0123456789abcdef"), 401, "UNAUTHENTICATED"));
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods", a_.token + "x"), 401, "UNAUTHENTICATED"));
  EXPECT_TRUE(IsApiError(api().Send("GET", "/v1/pods", " "), 401, "UNAUTHENTICATED"));
  const ApiReply created = api().Post("/v1/tokens", a_.token, R"({"name":"short-lived"})");
  ASSERT_EQ(created.status, 201) << created.Describe();
  const std::string secret = Str(created.json, "secret");
  const std::string id = Str(created.object().at("token"), "id");
  ASSERT_EQ(api().Get("/v1/pods", secret).status, 200);
  ASSERT_EQ(api().Send("DELETE", "/v1/tokens/" + id, a_.token).status, 200);
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods", secret), 401, "UNAUTHENTICATED"));
  EXPECT_TRUE(IsApiError(CreatePodWith(R"({"template":"pytorch","gpu_type":"4090"})", secret), 401,
                         "UNAUTHENTICATED"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AnAgentCannotReportAPodOfAnotherNode) {
  EXPECT_TRUE(
      IsApiError(Report(other_node_.token, running_, 99, "stopped"), 403, "PERMISSION_DENIED"));
  EXPECT_TRUE(IsApiError(Report(other_node_.token, "pod_doesnotexist", 1, "running"), 403,
                         "PERMISSION_DENIED"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, ARemovedNodesTokenIsUnauthenticated) {
  ASSERT_EQ(api().Send("DELETE", "/v1/nodes/" + other_node_.id, admin_).status, 200);
  json::object heartbeat = NodeBody("n2");
  heartbeat.erase("name");
  EXPECT_TRUE(IsApiError(api().PostJson("/v1/agent/heartbeat", other_node_.token, heartbeat), 401,
                         "UNAUTHENTICATED"));
  EXPECT_TRUE(IsApiError(api().Get("/v1/agent/pods", other_node_.token), 401, "UNAUTHENTICATED"));
  // The node that holds a pod cannot be removed until it is drained.
  EXPECT_TRUE(IsApiError(api().Send("DELETE", "/v1/nodes/" + node_.id, admin_), 409,
                         "FAILED_PRECONDITION"));
  EXPECT_EQ(api().PostJson("/v1/agent/heartbeat", node_.token, heartbeat).status, 200);
}

TEST_F(ApiBadInputTest, AnAgentReportWithABadStateOrTimeIsInvalidArgument) {
  const std::string target = "/v1/agent/pods/" + running_ + "/status";
  for (const json::object& body :
       {json::object{{"seq", 5}, {"state", "sleeping"}, {"at", Now()}},
        json::object{{"seq", 5}, {"state", "pending"}, {"at", Now()}},
        json::object{{"seq", 5}, {"state", "stopped"}, {"at", "yesterday"}},
        json::object{{"seq", 5}, {"state", "stopped"}, {"at", "2026-13-45T99:00:00Z"}},
        json::object{{"seq", 0}, {"state", "stopped"}, {"at", Now()}},
        json::object{{"seq", "5"}, {"state", "stopped"}, {"at", Now()}},
        json::object{{"state", "stopped"}, {"at", Now()}},
        json::object{{"seq", 5}, {"state", "stopped"}, {"at", Now()}, {"colour", "red"}},
        json::object{{"seq", 5},
                     {"state", "running"},
                     {"at", Now()},
                     {"port_mappings", json::array{json::object{{"container_port", 0}}}}},
        json::object{{"seq", 5}, {"state", "running"}, {"at", Now()}, {"port_mappings", 8080}},
        json::object{
            {"seq", 5}, {"state", "running"}, {"at", Now()}, {"port_mappings", json::array{8080}}},
        json::object{{"seq", 5},
                     {"state", "running"},
                     {"at", Now()},
                     {"port_mappings", json::array{json::object{{"container_port", 80},
                                                                {"protocol", "tcp"},
                                                                {"host_port", 4000},
                                                                {"colour", "red"}}}}},
        json::object{{"seq", 5}, {"state", "starting"}, {"at", Now()}, {"pull", 50}},
        json::object{{"seq", 5},
                     {"state", "starting"},
                     {"at", Now()},
                     {"pull", json::object{{"current_bytes", -1}, {"total_bytes", 10}}}}}) {
    SCOPED_TRACE(json::serialize(body));
    EXPECT_TRUE(IsApiError(api().PostJson(target, node_.token, json::value(body)), 400,
                           "INVALID_ARGUMENT"));
  }
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AWrongMethodIsNotAllowedAndAnUnknownPathIsNotFound) {
  EXPECT_TRUE(IsApiError(api().Send("PUT", "/v1/pods", a_.token, "{}"), 405));
  EXPECT_TRUE(IsApiError(api().Send("PATCH", "/v1/pods/" + running_, a_.token, "{}"), 405));
  EXPECT_TRUE(IsApiError(api().Send("DELETE", "/v1/gpus"), 405));
  EXPECT_TRUE(IsApiError(api().Get("/v1/nope", a_.token), 404, "NOT_FOUND"));
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + running_ + "/nope", a_.token), 404));
  EXPECT_TRUE(IsApiError(api().Get("/v2/pods", a_.token), 404));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, BadQueryValuesAreInvalidArgument) {
  EXPECT_TRUE(IsApiError(api().Get("/v1/billing/usage?by=week", a_.token), 400));
  EXPECT_TRUE(IsApiError(api().Get("/v1/billing/usage?format=xml", a_.token), 400));
  EXPECT_TRUE(IsApiError(api().Get("/v1/agent/pods?after=abc", node_.token), 400));
  EXPECT_TRUE(IsApiError(api().Get("/v1/agent/pods?wait_s=100000", node_.token), 400));
  EXPECT_TRUE(IsApiError(api().Get("/v1/agent/pods?wait_s=-1", node_.token), 400));
  EXPECT_TRUE(IsApiError(api().Get("/v1/agent/pods?after=-2", node_.token), 400));
  ExpectNothingChanged();
}

}  // namespace
}  // namespace suanli::server
