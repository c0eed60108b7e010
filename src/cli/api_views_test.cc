#include "cli/api_views.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <sstream>

namespace suanli::cli {
namespace {

// Two pods as GET /v1/pods answers: one running on a node, one pending with a reason.
constexpr const char* kPodsFixture = R"({"pods":[
  {"id":"pod_7hq2","name":"llama-ft","owner_id":"usr_1","template_id":"tpl_pytorch",
   "image":"pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime","gpu_type":"RTX 4090","gpu_count":1,
   "vcpu":8,"memory_gb":32,"container_disk_gb":50,"volume_gb":20,"volume_mount_path":"/workspace",
   "interruptible":false,"desired_state":"running","state":"running","state_reason":"",
   "actions":["stop","restart","terminate"],"node_id":"node_a","gpu_indices":[2],
   "port_mappings":[{"container_port":8888,"protocol":"http","host_port":41234}],
   "gpu_price_per_hour_micros":740000,"storage_price_per_hour_micros":1917,
   "cost_micros":1234567,"uptime_s":7500,"created_at":"2026-12-02T14:46:25.123Z"},
  {"id":"pod_9x","name":"","gpu_type":"H100 80GB SXM","gpu_count":8,"desired_state":"running",
   "state":"pending","state_reason":"no node has 8 free H100 80GB SXM","node_id":"",
   "cost_micros":0,"uptime_s":0,"created_at":"2026-12-02T15:00:00Z"}
]})";

TEST(ApiViewsTest, PodsTableShowsTheUsefulColumnsAligned) {
  const boost::json::value pods = boost::json::parse(kPodsFixture);
  const std::string table = PodsTable(JsonArray(pods, "pods"));
  std::istringstream lines(table);
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header.rfind("ID", 0), 0u) << header;
  for (const char* column : {"NAME", "STATE", "GPU", "NODE", "COST", "UPTIME", "AGE", "REASON"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column;
  }
  EXPECT_NE(first.find("pod_7hq2"), std::string::npos);
  EXPECT_NE(first.find("llama-ft"), std::string::npos);
  EXPECT_NE(first.find("running"), std::string::npos);
  EXPECT_NE(first.find("1x RTX 4090"), std::string::npos);
  EXPECT_NE(first.find("node_a"), std::string::npos);
  EXPECT_NE(first.find("$1.234567"), std::string::npos) << first;
  EXPECT_NE(first.find("2h05m"), std::string::npos);
  EXPECT_NE(first.find("2026-12-02 14:46"), std::string::npos);
  EXPECT_NE(second.find("8x H100 80GB SXM"), std::string::npos);
  EXPECT_NE(second.find("no node has 8 free H100 80GB SXM"), std::string::npos);
  // Columns line up: STATE starts at the same place in every line.
  EXPECT_EQ(header.find("STATE"), first.find("running"));
  EXPECT_EQ(header.find("STATE"), second.find("pending"));
  EXPECT_EQ(table.back(), '\n');
}

TEST(ApiViewsTest, PodDetailShowsPortsPricesAndIndices) {
  const boost::json::value pods = boost::json::parse(kPodsFixture);
  const std::string detail = PodDetail(JsonArray(pods, "pods")[0]);
  EXPECT_NE(detail.find("GPU:"), std::string::npos);
  EXPECT_NE(detail.find("1x RTX 4090 (GPU 2)"), std::string::npos) << detail;
  EXPECT_NE(detail.find("8888/http -> host port 41234"), std::string::npos) << detail;
  EXPECT_NE(detail.find("$0.74/h GPU"), std::string::npos) << detail;
  EXPECT_NE(detail.find("20 GB at /workspace"), std::string::npos) << detail;
  EXPECT_NE(detail.find("stop, restart, terminate"), std::string::npos) << detail;
}

TEST(ApiViewsTest, PodDetailShowsTheVolumesOfItsOwnerItMounts) {
  const boost::json::value pod = boost::json::parse(R"({"id":"pod_1","state":"stopped",
    "volumes":[{"volume_id":"vol_data","mount_path":"/data","read_only":false},
               {"volume_id":"vol_models","mount_path":"/models","read_only":true}]})");
  const std::string detail = PodDetail(pod);
  EXPECT_NE(detail.find("vol_data at /data, vol_models at /models (read-only)"), std::string::npos)
      << detail;
  EXPECT_EQ(PodDetail(boost::json::parse(R"({"id":"pod_2"})")).find("Volumes:"), std::string::npos)
      << "no row for a pod that mounts none";
}

TEST(ApiViewsTest, SshArgumentsUseThePublishedPortAndTheNodesAddress) {
  boost::json::value pod = boost::json::parse(R"({"id":"pod_1","state":"running",
    "node_address":"10.0.0.7","jupyter_token":"c0ffee","link_token":"11aa",
    "port_mappings":[{"container_port":8888,"protocol":"http","host_port":41234},
                     {"container_port":22,"protocol":"tcp","host_port":40022}]})");
  std::string why_not;
  EXPECT_EQ(SshArguments(pod, "root", 22, why_not),
            (std::vector<std::string>{"-p", "40022", "root@10.0.0.7"}));
  EXPECT_EQ(SshArguments(pod, "ubuntu", 8888, why_not),
            (std::vector<std::string>{"-p", "41234", "ubuntu@10.0.0.7"}));
  const std::string detail = PodDetail(pod);
  EXPECT_NE(detail.find("ssh -p 40022 root@10.0.0.7  (or: suanli pods ssh pod_1)"),
            std::string::npos)
      << detail;
  EXPECT_NE(detail.find("Jupyter token:"), std::string::npos) << detail;
  EXPECT_NE(detail.find("http://10.0.0.7:41234/lab?token=c0ffee"), std::string::npos) << detail;
  EXPECT_EQ(detail.find("Open:"), std::string::npos) << "no server URL, no links: " << detail;
  EXPECT_NE(PodDetail(pod, "http://10.0.0.2:7070")
                .find("http://10.0.0.2:7070/v1/pods/pod_1/proxy/8888/?suanli_link=11aa"),
            std::string::npos);

  EXPECT_TRUE(SshArguments(pod, "root", 2222, why_not).empty());
  EXPECT_NE(why_not.find("publishes no port 2222 (it has 8888/http -> host port 41234, 22/tcp"),
            std::string::npos)
      << why_not;
  pod.as_object()["node_address"] = "";
  EXPECT_TRUE(SshArguments(pod, "root", 22, why_not).empty());
  EXPECT_NE(why_not.find("--public-address"), std::string::npos) << why_not;
  pod.as_object()["state"] = "stopped";
  EXPECT_TRUE(SshArguments(pod, "root", 22, why_not).empty());
  EXPECT_EQ(why_not, "pod pod_1 is stopped; start it (suanli pods start pod_1 --wait)");
  EXPECT_EQ(PodDetail(pod).find("SSH:"), std::string::npos);
}

TEST(ApiViewsTest, AStoppedPodShowsNoPortsOrLinksEvenIfAnOlderServerSendsThem) {
  boost::json::value pod = boost::json::parse(R"({"id":"pod_1","state":"stopped",
    "node_address":"10.0.0.7","jupyter_token":"c0ffee","link_token":"11aa",
    "port_mappings":[{"container_port":8888,"protocol":"http","host_port":41234},
                     {"container_port":22,"protocol":"tcp","host_port":40022}]})");
  const std::string detail = PodDetail(pod, "http://10.0.0.2:7070");
  for (const char* line : {"Ports:", "SSH:", "Open:", "Jupyter:", "41234", "40022"}) {
    EXPECT_EQ(detail.find(line), std::string::npos) << line << " in " << detail;
  }
  pod.as_object()["state"] = "running";
  EXPECT_NE(PodDetail(pod, "http://10.0.0.2:7070").find("Ports:"), std::string::npos);
}

TEST(ApiViewsTest, AvailabilityCountsFreeGpusAndExplainsStrandedOnes) {
  const boost::json::value answer = boost::json::parse(R"({"gpus":[
    {"gpu_type":"RTX 4090","total":2,"free":0,"stranded":1,"largest_free_on_one_node":0,
     "shared_free_milli":0,"largest_share_free_milli":0,"price_per_hour_micros":740000,
     "simulated":true},
    {"gpu_type":"L4","total":4,"free":4,"stranded":0,"largest_free_on_one_node":4,
     "shared_free_milli":0,"largest_share_free_milli":0,"price_per_hour_micros":400000}]})");
  const std::string table = AvailabilityTable(JsonArray(answer, "gpus"));
  EXPECT_NE(table.find("0 (+1 idle*)"), std::string::npos) << table;
  EXPECT_NE(table.find("* idle GPUs whose node lacks the vCPU or RAM"), std::string::npos) << table;
  const boost::json::value none_stranded = boost::json::parse(R"({"gpus":[
    {"gpu_type":"L4","total":4,"free":4,"price_per_hour_micros":400000}]})");
  EXPECT_EQ(AvailabilityTable(JsonArray(none_stranded, "gpus")).find("idle"), std::string::npos);
}

TEST(ApiViewsTest, UserDetailShowsTheQuotasInForce) {
  const boost::json::value user = boost::json::parse(R"({"id":"usr_1","name":"alice",
    "role":"user","balance_micros":1000000,"spend_cap_per_hour_micros":0,
    "created_at":"2026-12-02T14:46:25.123Z","notices":[],"max_pods":100,"max_pending_pods":20,"max_endpoints":5})");
  const std::string detail = UserDetail(user);
  const size_t quota = detail.find("Quota:");
  ASSERT_NE(quota, std::string::npos) << detail;
  EXPECT_NE(detail.find("100 pods, 20 of them pending; 5 endpoints\n", quota), std::string::npos)
      << detail;
  boost::json::value older = user;  // a server from before endpoint quotas
  older.as_object().erase("max_endpoints");
  EXPECT_NE(UserDetail(older).find("100 pods, 20 of them pending\n"), std::string::npos);
}

TEST(ApiViewsTest, PullBarFillsWithTheBytesAndSaysWhenTheTotalIsUnknown) {
  EXPECT_EQ(PullBar(0, 100 << 20), "[--------------------]   0% of 100 MiB");
  EXPECT_EQ(PullBar(25 << 20, 100 << 20), "[#####---------------]  25% of 100 MiB");
  EXPECT_EQ(PullBar(200 << 20, 100 << 20), "[####################] 100% of 100 MiB");
  EXPECT_EQ(PullBar(312 << 20, 0), "[...] 312 MiB");
  EXPECT_EQ(PullBar(-5, 3LL << 30), "[--------------------]   0% of 3.0 GiB");
}

TEST(ApiViewsTest, MissingOrOddFieldsShowAsBlanksNotCrashes) {
  const boost::json::value odd = boost::json::parse(R"([{"id":5,"cost_micros":"x"}, 7, null])");
  const std::string table = PodsTable(odd.as_array());
  EXPECT_NE(table.find("5"), std::string::npos);
  EXPECT_EQ(MoneyText(odd.as_array()[0], "cost_micros"), "-");
  EXPECT_EQ(PodGpuText(odd.as_array()[1]), "-");
}

TEST(ApiViewsTest, DurationsTimesAndMoneyReadEasily) {
  EXPECT_EQ(DurationText(0), "0s");
  EXPECT_EQ(DurationText(45), "45s");
  EXPECT_EQ(DurationText(192), "3m12s");
  EXPECT_EQ(DurationText(7500), "2h05m");
  EXPECT_EQ(DurationText(273600), "3d04h");
  EXPECT_EQ(DurationText(-5), "0s");
  EXPECT_EQ(TimeText("2026-12-02T14:46:25.123Z"), "2026-12-02 14:46");
  EXPECT_EQ(TimeText(""), "-");
  EXPECT_EQ(TimeText("soon"), "soon");
  const boost::json::value user = boost::json::parse(R"({"balance_micros":12500000})");
  EXPECT_EQ(MoneyText(user, "balance_micros"), "$12.50");
}

TEST(ApiViewsTest, NodeDetailShowsEachGpusHealthAndWhyItWasDrained) {
  const boost::json::value node = boost::json::parse(R"({"id":"node_1","name":"gpu-7",
    "state":"ready","cordoned":true,"draining":true,
    "drain_reason":"the agent found 1 GPU(s) of the 2 it had","address":"10.0.0.7",
    "gpus":[{"index":0,"type":"RTX 4090","memory_gb":23.6,"uuid":"GPU-a"}],
    "gpu_health":[{"index":0,"utilization_percent":87,"memory_used_gb":20.25,"temperature_c":71,
                   "power_w":402.5,"xid_errors":0,"last_xid":0},
                  {"index":1,"problem":"GPU is lost"}]})");
  const std::string detail = NodeDetail(
      node, boost::json::parse(R"([{"node_id":"node_1","gpu_indices":[0]}])").as_array());
  EXPECT_NE(detail.find("GPUs in use:"), std::string::npos) << detail;
  EXPECT_NE(detail.find("1 of 1"), std::string::npos) << detail;
  EXPECT_NE(detail.find("Drained:"), std::string::npos) << detail;
  EXPECT_NE(detail.find("1 GPU(s) of the 2 it had"), std::string::npos) << detail;
  EXPECT_NE(detail.find("Address:"), std::string::npos) << detail;
  for (const char* column : {"UTIL", "USED GB", "TEMP", "POWER", "XID"}) {
    EXPECT_NE(detail.find(column), std::string::npos) << column << "\n" << detail;
  }
  for (const char* figure : {"87%", "20.2", "71C", "402W"}) {
    EXPECT_NE(detail.find(figure), std::string::npos) << figure << "\n" << detail;
  }
  EXPECT_NE(detail.find("GPU 1 cannot be read: GPU is lost"), std::string::npos) << detail;
}

TEST(ApiViewsTest, BalanceWithNothingChargedHasNoRunway) {
  const boost::json::value balance = boost::json::parse(
      R"({"balance_micros":5000000,"spend_rate_per_hour_micros":0,"runway_s":null,
          "spend_cap_per_hour_micros":0,"storage_per_gb_month_micros":100000})");
  const std::string detail = BalanceDetail(balance);
  EXPECT_NE(detail.find("Balance:    $5.00"), std::string::npos) << detail;
  EXPECT_NE(detail.find("nothing is charged now"), std::string::npos) << detail;
  EXPECT_NE(detail.find("Spend cap:  none"), std::string::npos) << detail;
  const boost::json::value spending = boost::json::parse(
      R"({"balance_micros":5000000,"spend_rate_per_hour_micros":740000,"runway_s":24324})");
  EXPECT_NE(BalanceDetail(spending).find("6h45m"), std::string::npos) << BalanceDetail(spending);
}

TEST(ApiViewsTest, UsageTableTotalsTheRows) {
  const boost::json::value usage = boost::json::parse(R"({"usage":[
    {"key":"2026-12-01","gpu_micros":1480000,"storage_micros":20000,"total_micros":1500000,
     "gpu_seconds":7200},
    {"key":"2026-12-02","gpu_micros":740000,"storage_micros":0,"total_micros":740000,
     "gpu_seconds":3600}]})");
  const std::string table = UsageTable(JsonArray(usage, "usage"), "day");
  EXPECT_EQ(table.rfind("DAY", 0), 0u) << table;
  EXPECT_NE(table.find("2.00"), std::string::npos) << table;
  EXPECT_NE(table.find("total: $2.24"), std::string::npos) << table;
}

TEST(ApiViewsTest, NodesTableGroupsGpusAndMarksSimulatedOnes) {
  const boost::json::value nodes = boost::json::parse(R"([{"id":"node_a","name":"box",
    "state":"ready","cordoned":true,"draining":false,"gpus":[
      {"index":0,"type":"RTX 4090","simulated":true},{"index":1,"type":"RTX 4090","simulated":true}],
    "vcpu":32,"memory_gb":128,"agent_version":"0.1.0",
    "last_heartbeat":"2026-12-02T15:00:01Z"}])");
  // Two pods share GPU 1 of node_a; one pod is on another node, one on none.
  const boost::json::value pods = boost::json::parse(R"([
    {"id":"p1","node_id":"node_a","gpu_indices":[1]},{"id":"p2","node_id":"node_a","gpu_indices":[1]},
    {"id":"p3","node_id":"node_b","gpu_indices":[0]},{"id":"p4","node_id":"","gpu_indices":[]}])");
  const std::string table = NodesTable(nodes.as_array(), pods.as_array());
  EXPECT_NE(table.find("ready,cordoned"), std::string::npos) << table;
  EXPECT_NE(table.find("2x RTX 4090 (simulated)"), std::string::npos) << table;
  EXPECT_NE(table.find("1/2"), std::string::npos) << table;
}

TEST(ApiViewsTest, EventsShowWhyAndAuditShowsWhoAndHowItEnded) {
  const boost::json::value events = boost::json::parse(R"({"events":[
    {"id":7,"time":"2026-12-02T14:46:25.123Z","kind":"pod.idle_stop","object_id":"pod_1",
     "user_id":"usr_1","message":"pod pod_1 stopped: idle for 30m","detail":{}},
    {"id":8,"time":"2026-12-02T14:47:00.000Z","kind":"node.unreachable","object_id":"",
     "message":"node n1 is unreachable","detail":{}}]})");
  const std::string table = EventsTable(JsonArray(events, "events"));
  EXPECT_EQ(table.rfind("ID", 0), 0u) << table;
  EXPECT_NE(table.find("pod.idle_stop"), std::string::npos);
  EXPECT_NE(table.find("stopped: idle for 30m"), std::string::npos);
  EXPECT_NE(table.find("  -  "), std::string::npos) << "no object: a dash\n" << table;
  EXPECT_EQ(EventLine(JsonArray(events, "events")[0]),
            "2026-12-02T14:46:25.123Z  pod.idle_stop  pod_1  pod pod_1 stopped: idle for 30m\n");
  const boost::json::value audit = boost::json::parse(R"({"entries":[
    {"id":1,"time":"2026-12-02T14:46:25.123Z","user_id":"usr_1","token_id":"tok_1",
     "action":"POST /v1/pods/{id}/stop","object_id":"pod_1","status":404,
     "error_code":"NOT_FOUND"}]})");
  const std::string log = AuditTable(JsonArray(audit, "entries"));
  EXPECT_NE(log.find("POST /v1/pods/{id}/stop"), std::string::npos) << log;
  EXPECT_NE(log.find("404 NOT_FOUND"), std::string::npos) << log;
  EXPECT_NE(log.find("tok_1"), std::string::npos) << log;
}

}  // namespace
}  // namespace suanli::cli
