// suanli apply -f: reading spec files (pure) and the command against a fake server.
#include "cli/apply_spec.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli.h"
#include "cli/fake_api_server.h"
#include "testing/temp_dir.h"

namespace suanli::cli {
namespace {

namespace json = boost::json;

TEST(ParseObjectSpecsTest, ReadsEachDocumentAsAnObjectWithTypedValues) {
  const core::Result<std::vector<ObjectSpec>> specs = ParseObjectSpecs(R"(kind: pod
name: train-1
gpu_type: RTX 4090
gpu_count: 2
interruptible: true
image: "12"
env: {A: 1, B: x}
ports: [8888/http]
---
kind: Endpoint
name: echo
workers_max: 3
share: 0.5
---
)",
                                                                       "spec.yaml");
  ASSERT_TRUE(specs.ok()) << specs.status().ToString();
  ASSERT_EQ(specs->size(), 2u);
  // The endpoint first: apply makes pods last (see the ordering test below).
  EXPECT_EQ((*specs)[1].kind, ObjectKind::kPod);
  EXPECT_EQ((*specs)[1].name, "train-1");
  EXPECT_EQ((*specs)[1].where, "spec.yaml:1");
  EXPECT_EQ(json::value((*specs)[1].body), json::parse(R"({"name":"train-1","gpu_type":"RTX 4090",
    "gpu_count":2,"interruptible":true,"image":"12","env":{"A":"1","B":"x"},
    "ports":["8888/http"]})"));
  EXPECT_EQ((*specs)[0].kind, ObjectKind::kEndpoint);
  EXPECT_EQ((*specs)[0].where, "spec.yaml:10");
  EXPECT_EQ(json::value((*specs)[0].body),
            json::parse(R"({"name":"echo","workers_max":3,"share":0.5})"));
}

TEST(ParseObjectSpecsTest, BadSpecsSayWhereAndWhat) {
  auto error = [](std::string_view text) {
    const core::Result<std::vector<ObjectSpec>> specs = ParseObjectSpecs(text, "s.yaml");
    return specs.ok() ? std::string("ok") : specs.status().message();
  };
  EXPECT_EQ(error("name: a\n"),
            "s.yaml:1: kind must be pod, endpoint, template or volume (it is missing)");
  EXPECT_EQ(error("kind: bucket\nname: a\n"),
            "s.yaml:1: kind must be pod, endpoint, template or volume, not \"bucket\"");
  EXPECT_EQ(error("kind: pod\n"), "s.yaml:1: name is required: apply finds the object by it");
  EXPECT_EQ(error("kind: pod\nname: a\nimage: x\nimage: y\n"), "s.yaml:4: 'image' is given twice");
  EXPECT_EQ(error("kind: pod\nname: a\n---\nkind: pod\nname: a\n"),
            "s.yaml:4: pod a is in the file twice");
  EXPECT_EQ(error("- a\n- b\n"), "s.yaml:1: expected a mapping (kind: pod, name: ..., and fields)");
  EXPECT_EQ(error("kind: [pod\n").find("s.yaml:"), 0u);
  EXPECT_NE(error("kind: [pod\n").find("not valid YAML"), std::string::npos);
  EXPECT_EQ(error(""), "s.yaml: no objects (each YAML document is one: kind, name, fields)");
}

TEST(ParseObjectSpecsTest, VolumesAndTemplatesComeBeforeThePodsAndEndpointsThatNameThem) {
  const core::Result<std::vector<ObjectSpec>> specs = ParseObjectSpecs(
      "kind: pod\nname: p1\n---\nkind: endpoint\nname: e\n---\nkind: volume\nname: v1\n"
      "---\nkind: pod\nname: p2\n---\nkind: template\nname: t\n---\nkind: volume\nname: v2\n",
      "s.yaml");
  ASSERT_TRUE(specs.ok()) << specs.status().ToString();
  std::vector<std::string> order;
  for (const ObjectSpec& spec : *specs) {
    order.push_back(std::string(InfoOf(spec.kind).singular) + " " + spec.name);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"volume v1", "volume v2", "template t", "endpoint e",
                                             "pod p1", "pod p2"}));
}

TEST(DifferencesTest, APodsVolumesCompareByMountPathAndFlagInOrder) {
  const json::object current = json::parse(R"({"name":"a","volumes":[
    {"volume_id":"vol_1","mount_path":"/data","read_only":false},
    {"volume_id":"vol_2","mount_path":"/ref","read_only":true}]})")
                                   .as_object();
  auto differs = [&](std::string_view volumes) {
    return !Differences(
                json::parse(R"({"name":"a","volumes":)" + std::string(volumes) + "}").as_object(),
                current)
                .empty();
  };
  EXPECT_FALSE(differs(R"([{"name":"data","mount_path":"/data"},
    {"name":"ref","mount_path":"/ref","read_only":true}])"));
  EXPECT_TRUE(differs(R"([{"name":"data","mount_path":"/data"}])"));  // one fewer
  EXPECT_TRUE(differs(R"([{"name":"data","mount_path":"/data"},
    {"name":"ref","mount_path":"/ref"}])"));                          // no longer read-only
  EXPECT_TRUE(differs(R"([{"name":"ref","mount_path":"/ref","read_only":true},
    {"name":"data","mount_path":"/data"}])"));                        // swapped
  EXPECT_TRUE(differs(R"("data:/data")"));
}

TEST(DifferencesTest, ComparesWhatTheViewShowsAsTheServerWouldReadIt) {
  const json::object current = json::parse(R"({"id":"pod_1","name":"a","template_id":"pytorch",
    "gpu_type":"RTX 4090","gpu_count":1,"image":"img:1","env":{"A":"1"},"volume_gb":20})")
                                   .as_object();
  EXPECT_TRUE(Differences(json::parse(R"({"name":"a","template":"pytorch","gpu_type":"4090",
    "gpu_count":1.0,"image":"img:1","env":{"A":"1"},"queue":true})")
                              .as_object(),
                          current)
                  .empty());
  EXPECT_EQ(Differences(json::parse(R"({"name":"a","gpu_type":"A100","image":"img:2",
    "env":{"A":"2"},"volume_gb":20})")
                            .as_object(),
                        current),
            (std::vector<std::string>{"gpu_type", "image", "env"}));
  EXPECT_EQ(JoinWords({"gpu_type", "image", "env"}), "gpu_type, image and env");
  EXPECT_EQ(JoinWords({"a"}), "a");
}

struct Outcome {
  int exit_code;
  std::string out;
  std::string err;
};

class ApplyCommandTest : public ::testing::Test {
 protected:
  std::string WriteSpec(std::string_view text) {
    const std::filesystem::path path = dir_.path() / "spec.yaml";
    std::ofstream(path) << text;
    return path.string();
  }

  Outcome Suanli(FakeApiServer& server, std::vector<std::string> args) {
    std::ostringstream out;
    std::ostringstream err;
    const ApiEnvironment env = server.Environment();
    const int exit_code = RunCli(args, out, err, env);
    return {exit_code, out.str(), err.str()};
  }

  suanli::testing::TempDir dir_;
};

TEST_F(ApplyCommandTest, CreatesWhatIsMissingLeavesWhatIsThereAndDryRunChangesNothing) {
  const std::string spec = WriteSpec(
      "kind: pod\nname: a\ngpu_type: RTX 4090\nimage: img:1\n---\n"
      "kind: pod\nname: b\ngpu_type: 4090\ngpu_count: 2\nimage: img:1\n");
  // Pod a exists as the spec says; b does not.
  FakeApiServer server([](const FakeRequest& request) {
    if (request.method == "GET" && request.target.starts_with("/v1/pods")) {
      return FakeApiServer::Json(200, R"({"pods":[{"id":"pod_a","name":"a","gpu_type":"RTX 4090",
        "image":"img:1","desired_state":"running"},{"id":"pod_old","name":"b",
        "desired_state":"terminated"}]})");
    }
    if (request.method == "GET" && request.target == "/v1/availability") {
      return FakeApiServer::Json(
          200, R"({"gpus":[{"gpu_type":"RTX 4090","price_per_hour_micros":690000}]})");
    }
    if (request.method == "POST") return FakeApiServer::Json(201, R"({"id":"pod_b","name":"b"})");
    return FakeApiServer::Json(500, R"({"error":{"code":"INTERNAL","message":"unexpected"}})");
  });
  Outcome dry = Suanli(server, {"apply", "-f", spec, "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(dry.out, "pod a: unchanged (pod_a)\npod b: would be created, $1.38/h for its GPUs\n");
  for (const FakeRequest& request : server.requests()) EXPECT_EQ(request.method, "GET");

  const Outcome applied = Suanli(server, {"apply", "-f", spec});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(applied.out, "pod a: unchanged (pod_a)\npod b: created (pod_b)\n");
  const FakeRequest& created = server.requests().back();
  EXPECT_EQ(created.method, "POST");
  EXPECT_EQ(created.target, "/v1/pods");
  EXPECT_EQ(json::parse(created.body),
            json::parse(R"({"name":"b","gpu_type":"4090","gpu_count":2,"image":"img:1"})"));
}

TEST_F(ApplyCommandTest, APodThatDiffersIsNotChangedAndAnErrorSaysWhere) {
  const std::string spec = WriteSpec("kind: pod\nname: a\nimage: img:2\n");
  FakeApiServer server([](const FakeRequest& request) {
    if (request.method == "GET") {
      return FakeApiServer::Json(
          200, R"({"pods":[{"id":"pod_a","name":"a","image":"img:1","desired_state":"running"}]})");
    }
    return FakeApiServer::Json(400, R"({"error":{"code":"INVALID_ARGUMENT","message":"no"}})");
  });
  const Outcome outcome = Suanli(server, {"apply", "-f", spec});
  EXPECT_NE(outcome.exit_code, 0);  // the spec is not what runs
  EXPECT_NE(outcome.err.find("1 object(s) differ from the spec and were left as they are"),
            std::string::npos)
      << outcome.err;
  // The advice keeps the data: the pod alone goes, not the file's volumes as delete -f would.
  EXPECT_EQ(outcome.out.find("pod a: exists (pod_a) and differs in image; a pod cannot change in "
                             "place: replace it alone with `suanli pods rm pod_a`, then apply "
                             "again (this keeps the volumes; `delete -f` would delete the file's "
                             "volumes and their data)"),
            0u)
      << outcome.out;
  for (const FakeRequest& request : server.requests()) EXPECT_EQ(request.method, "GET");

  const Outcome missing = Suanli(server, {"apply", "-f", (dir_.path() / "nope.yaml").string()});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("cannot read"), std::string::npos) << missing.err;
}

TEST_F(ApplyCommandTest, GetShowsEachObjectOfTheFileAndWhetherItIsAsSpecified) {
  const std::string spec = WriteSpec(
      "kind: pod\nname: a\nimage: img:1\n---\nkind: pod\nname: b\nimage: img:2\n---\n"
      "kind: template\nname: t\nimage: img:1\n");
  FakeApiServer server([](const FakeRequest& request) {
    if (request.method == "GET" && request.target.starts_with("/v1/pods")) {
      return FakeApiServer::Json(200, R"({"pods":[
        {"id":"pod_a","name":"a","image":"img:1","state":"running","desired_state":"running"},
        {"id":"pod_b","name":"b","image":"img:1","state":"stopped","desired_state":"stopped"}]})");
    }
    if (request.method == "GET") return FakeApiServer::Json(200, R"({"templates":[]})");
    return FakeApiServer::Json(500, R"({"error":{"code":"INTERNAL","message":"unexpected"}})");
  });
  const Outcome table = Suanli(server, {"get", "-f", spec});
  EXPECT_EQ(table.exit_code, 3) << "one object does not exist: " << table.err;
  EXPECT_EQ(table.out,
            "KIND      NAME  ID     STATE    SPEC\n"
            "template  t     -      -        not created\n"
            "pod       a     pod_a  running  as specified\n"
            "pod       b     pod_b  stopped  differs in image\n");
  EXPECT_NE(table.err.find("1 object(s) of " + spec +
                           " do not exist yet; create them: suanli "
                           "apply -f"),
            std::string::npos)
      << table.err;
  int pod_lists = 0;
  for (const FakeRequest& request : server.requests()) {
    EXPECT_EQ(request.method, "GET");
    pod_lists += request.target.starts_with("/v1/pods");
  }
  EXPECT_EQ(pod_lists, 1) << "one list per kind, not one per object";

  const Outcome as_json = Suanli(server, {"get", "-f", spec, "--json"});
  const json::value parsed = json::parse(as_json.out);  // kept: `objects` points into it
  const json::array& objects = parsed.at("objects").as_array();
  ASSERT_EQ(objects.size(), 3u) << as_json.out;
  EXPECT_TRUE(objects[0].at("object").is_null());
  EXPECT_EQ(objects[1].at("object").at("id"), "pod_a");
  EXPECT_EQ(objects[2].at("differences"), json::array{"image"});
}

TEST_F(ApplyCommandTest, DeleteRemovesTheNamedObjectsOnly) {
  const std::string spec = WriteSpec("kind: pod\nname: a\n---\nkind: template\nname: t\n");
  FakeApiServer server([](const FakeRequest& request) {
    if (request.method == "GET" && request.target.starts_with("/v1/pods")) {
      return FakeApiServer::Json(200, R"({"pods":[{"id":"pod_a","name":"a"},
        {"id":"pod_z","name":"z"}]})");
    }
    if (request.method == "GET") return FakeApiServer::Json(200, R"({"templates":[]})");
    return FakeApiServer::Json(200, R"({"id":"pod_a"})");
  });
  const Outcome outcome = Suanli(server, {"delete", "-f", spec, "--force"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "pod a: deleted (pod_a)\ntemplate t: not found (nothing to delete)\n");
  int deletes = 0;
  for (const FakeRequest& request : server.requests()) {
    if (request.method != "DELETE") continue;
    ++deletes;
    EXPECT_EQ(request.target, "/v1/pods/pod_a?force=true");
  }
  EXPECT_EQ(deletes, 1);
}

}  // namespace
}  // namespace suanli::cli
