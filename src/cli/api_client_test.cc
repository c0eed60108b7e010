#include "cli/api_client.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>

#include "cli/fake_api_server.h"
#include "testing/temp_dir.h"

namespace suanli::cli {
namespace {

using suanli::testing::TempDir;

unsigned Mode(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 0777;
}

TEST(ApiConfigTest, FlagBeatsEnvironmentBeatsLoginFile) {
  ApiEnvironment env;
  const std::optional<ApiConfig> file = ApiConfig{"http://file:1", "sl_file"};
  EXPECT_EQ(ResolveApiConfig("", "", env, file).url, "http://file:1");
  EXPECT_EQ(ResolveApiConfig("", "", env, file).token, "sl_file");
  env.suanli_url = "http://env:2";
  env.suanli_token = "sl_env";
  EXPECT_EQ(ResolveApiConfig("", "", env, file).url, "http://env:2");
  EXPECT_EQ(ResolveApiConfig("", "", env, file).token, "sl_env");
  const ApiConfig flags = ResolveApiConfig("http://flag:3", "sl_flag", env, file);
  EXPECT_EQ(flags.url, "http://flag:3");
  EXPECT_EQ(flags.token, "sl_flag");
}

TEST(ApiConfigTest, DefaultsToTheLocalServerWithoutAToken) {
  const ApiConfig config = ResolveApiConfig("", "", ApiEnvironment(), std::nullopt);
  EXPECT_EQ(config.url, "http://127.0.0.1:7070");
  EXPECT_EQ(config.token, "");
  EXPECT_EQ(ResolveApiConfig("http://host:7070/", "", ApiEnvironment(), std::nullopt).url,
            "http://host:7070");
}

TEST(ApiConfigTest, FileLivesUnderXdgConfigHomeElseHome) {
  ApiEnvironment env;
  EXPECT_EQ(ConfigFilePath(env), "");
  env.home = "/home/ada";
  EXPECT_EQ(ConfigFilePath(env), "/home/ada/.config/suanli/config.json");
  env.xdg_config_home = "/tmp/xdg";
  EXPECT_EQ(ConfigFilePath(env), "/tmp/xdg/suanli/config.json");
}

TEST(ApiConfigTest, WritesPrivatelyAndReadsBack) {
  TempDir dir("suanli-cli");
  const std::string path = dir.path().string() + "/suanli/config.json";
  core::Result<std::optional<ApiConfig>> missing = ReadConfigFile(path);
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_FALSE(missing->has_value());

  ASSERT_TRUE(WriteConfigFile(path, {"http://gpu-box:7070", "sl_secret"}).ok());
  EXPECT_EQ(Mode(path), 0600u);
  EXPECT_EQ(Mode(dir.path().string() + "/suanli"), 0700u);
  core::Result<std::optional<ApiConfig>> read = ReadConfigFile(path);
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_EQ((*read)->url, "http://gpu-box:7070");
  EXPECT_EQ((*read)->token, "sl_secret");

  // A second login replaces the first, still private.
  ASSERT_TRUE(WriteConfigFile(path, {"http://other:1", "sl_two"}).ok());
  EXPECT_EQ((*ReadConfigFile(path))->token, "sl_two");
  EXPECT_EQ(Mode(path), 0600u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(ApiConfigTest, AMalformedFileIsAnErrorThatNamesIt) {
  TempDir dir("suanli-cli");
  const std::string path = dir.path().string() + "/config.json";
  std::ofstream(path) << "{\"url\": 3}";
  core::Result<std::optional<ApiConfig>> read = ReadConfigFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(read.status().message().find(path), std::string::npos);
}

TEST(ApiErrorTest, TheServersCodeAndMessageBecomeTheStatus) {
  const struct {
    int http;
    const char* code;
    core::StatusCode want;
    int exit_code;
  } cases[] = {
      {400, "INVALID_ARGUMENT", core::StatusCode::kInvalidArgument, 2},
      {404, "NOT_FOUND", core::StatusCode::kNotFound, 3},
      {409, "ALREADY_EXISTS", core::StatusCode::kAlreadyExists, 4},
      {409, "FAILED_PRECONDITION", core::StatusCode::kFailedPrecondition, 5},
      {402, "RESOURCE_EXHAUSTED", core::StatusCode::kResourceExhausted, 6},
      {429, "RESOURCE_EXHAUSTED", core::StatusCode::kResourceExhausted, 6},
      {401, "UNAUTHENTICATED", core::StatusCode::kUnauthenticated, 7},
      {403, "PERMISSION_DENIED", core::StatusCode::kPermissionDenied, 8},
      {503, "UNAVAILABLE", core::StatusCode::kUnavailable, 9},
      {500, "INTERNAL", core::StatusCode::kInternal, 1},
      {413, "PAYLOAD_TOO_LARGE", core::StatusCode::kInvalidArgument, 2},
  };
  for (const auto& c : cases) {
    const net::HttpResponse response = FakeApiServer::Error(c.http, c.code, "what went wrong");
    const core::Status status = StatusFromErrorResponse(c.http, response.body);
    EXPECT_EQ(status.code(), c.want) << c.code;
    EXPECT_EQ(status.message(), "what went wrong") << c.code;
    EXPECT_EQ(core::ExitCodeFor(status.code()), c.exit_code) << c.code;
  }
}

TEST(ApiErrorTest, ABodyThatIsNotTheErrorShapeFallsBackToTheHttpStatus) {
  const core::Status proxy = StatusFromErrorResponse(502, "<html>\nBad Gateway</html>");
  EXPECT_EQ(proxy.code(), core::StatusCode::kUnavailable);
  EXPECT_EQ(proxy.message(), "the server answered HTTP 502: <html> Bad Gateway</html>");
  EXPECT_EQ(StatusFromErrorResponse(404, "").code(), core::StatusCode::kNotFound);
  // An unknown code name keeps the HTTP status's code and the server's message.
  const core::Status odd =
      StatusFromErrorResponse(403, R"({"error":{"code":"NEW_CODE","message":"nope"}})");
  EXPECT_EQ(odd.code(), core::StatusCode::kPermissionDenied);
  EXPECT_EQ(odd.message(), "nope");
}

TEST(ApiClientTest, SendsTheBearerTokenAndJsonAndParsesTheAnswer) {
  FakeApiServer server([](const FakeRequest& request) {
    return FakeApiServer::Json(201, R"({"got":)" + request.body + "}");
  });
  const ApiEnvironment env = server.Environment();
  core::Result<std::unique_ptr<ApiClient>> api =
      ApiClient::Create({"http://127.0.0.1:7070", "sl_abc"}, env);
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  boost::json::object body;
  body["name"] = "laptop";
  core::Result<boost::json::value> answer = (*api)->Post("/v1/tokens", body);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->at("got").at("name").as_string(), "laptop");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].method, "POST");
  EXPECT_EQ(server.requests()[0].target, "/v1/tokens");
  EXPECT_EQ(server.requests()[0].Header("Authorization"), "Bearer sl_abc");
}

TEST(ApiClientTest, AnErrorAnswerIsAStatusAndAnEmptyBodyIsNull) {
  FakeApiServer server([](const FakeRequest& request) {
    if (request.method == "DELETE") return FakeApiServer::Json(204, "");
    return FakeApiServer::Error(404, "NOT_FOUND", "no pod pod_x");
  });
  const ApiEnvironment env = server.Environment();
  std::unique_ptr<ApiClient> api = ApiClient::Create({"http://h:1", "sl_abc"}, env).value();
  core::Result<boost::json::value> missing = api->Get("/v1/pods/pod_x");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status(), core::NotFoundError("no pod pod_x"));
  core::Result<boost::json::value> deleted = api->Delete("/v1/tokens/t_1");
  ASSERT_TRUE(deleted.ok());
  EXPECT_TRUE(deleted->is_null());
}

TEST(ApiClientTest, NoTokenIsUnauthenticatedWithHowToGetOne) {
  FakeApiServer server([](const FakeRequest&) { return FakeApiServer::Json(200, "{}"); });
  core::Result<std::unique_ptr<ApiClient>> api =
      ApiClient::Create({"http://127.0.0.1:7070", ""}, server.Environment());
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().code(), core::StatusCode::kUnauthenticated);
  EXPECT_NE(api.status().message().find("suanli login --token"), std::string::npos);
  EXPECT_NE(api.status().message().find("SUANLI_TOKEN"), std::string::npos);
}

TEST(ApiClientTest, AnUnreachableServerIsUnavailableWithAHint) {
  ApiEnvironment env = ApiEnvironment::FromProcess();
  // Port 1 on loopback: nothing listens there, so the connection is refused at once.
  core::Result<std::unique_ptr<ApiClient>> api =
      ApiClient::Create({"http://127.0.0.1:1", "sl_abc"}, env);
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  core::Result<boost::json::value> answer = (*api)->Get("/v1/pods");
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), core::StatusCode::kUnavailable);
  EXPECT_NE(answer.status().message().find("is `suanli server` running? set SUANLI_URL"),
            std::string::npos)
      << answer.status().message();
}

TEST(ApiClientTest, GetEveryPageFollowsNextAfterToTheEnd) {
  FakeApiServer server([](const FakeRequest& request) {
    if (request.target == "/v1/pods") {
      return FakeApiServer::Json(200, R"({"pods":[{"id":"a"},{"id":"b"}],"next_after":"b"})");
    }
    if (request.target == "/v1/pods?after=b") {
      return FakeApiServer::Json(200, R"({"pods":[{"id":"c"}]})");
    }
    return FakeApiServer::Json(404, R"({"error":{"code":"NOT_FOUND","message":"no"}})");
  });
  core::Result<std::unique_ptr<ApiClient>> api =
      ApiClient::Create({"http://127.0.0.1:7070", "sl_abc"}, server.Environment());
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  core::Result<boost::json::value> all = (*api)->GetEveryPage("/v1/pods", "pods");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(*all, boost::json::parse(R"({"pods":[{"id":"a"},{"id":"b"},{"id":"c"}]})"));
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(PrettyJsonTest, IndentsAndRoundTrips) {
  const boost::json::value json =
      boost::json::parse(R"({"pods":[{"id":"pod_1","env":{},"n":3}],"empty":[],"s":"a\"b"})");
  const std::string text = PrettyJson(json);
  EXPECT_EQ(boost::json::parse(text), json);
  EXPECT_NE(text.find("\n  \"pods\": [\n    {\n      \"id\": \"pod_1\""), std::string::npos)
      << text;
  EXPECT_EQ(text.back(), '\n');
}

}  // namespace
}  // namespace suanli::cli
