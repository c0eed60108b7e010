#include "agent/readiness_prober.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "testing/agent_fixture.h"

namespace suanli::agent {
namespace {

using core::PodState;
using testing::AgentFixture;

// A readiness probe whose answers the test sets: the host ports that answer, and every address
// asked.
struct ScriptedPorts {
  std::set<int> answering;
  std::vector<std::string> addresses;
  ReadinessProber::PortCheck Check() {
    return [this](const std::string& address, const core::PortMapping& port) {
      addresses.push_back(address);
      return answering.contains(port.host_port);
    };
  }
};

void QueueRunning(StatusReporter& reporter, AgentFixture& fixture) {
  PodReportFields running("pod_a", PodState::kRunning, fixture.clock().Now());
  running.container_id = "c1";
  running.port_mappings = {{22, "tcp", 20022}, {8888, "http", 20888}};
  reporter.Queue(running);
}

TEST(ReadinessProberTest, APodIsReadyOnceEveryPortAnswersAndSaidSoOnce) {
  AgentFixture fixture;
  StatusReporter reporter(fixture.context());
  ScriptedPorts ports;
  ReadinessProber prober(fixture.context(), reporter, ports.Check());
  QueueRunning(reporter, fixture);

  ports.answering = {20022};  // SSH is up, Jupyter not yet
  prober.Probe();
  EXPECT_EQ(fixture.Reports().size(), 1u);
  EXPECT_TRUE(reporter.Unready().contains("pod_a"));

  ports.answering = {20022, 20888};
  fixture.clock().Advance(std::chrono::seconds(4));
  prober.Probe();
  std::vector<testing::QueuedReport> reports = fixture.Reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].report.state, PodState::kRunning);
  EXPECT_TRUE(reports[1].report.ready.value_or(false));
  EXPECT_EQ(reports[1].report.container_id, "c1");
  EXPECT_EQ(reports[1].report.port_mappings.size(), 2u);
  EXPECT_EQ(reports[1].report.at, AgentFixture::kStart + std::chrono::seconds(4));
  EXPECT_TRUE(reporter.Unready().empty());

  prober.Probe();  // nothing waits any more
  EXPECT_EQ(fixture.Reports().size(), 2u);
}

TEST(ReadinessProberTest, APodThatStoppedBeforeItsPortsAnsweredIsNotProbed) {
  AgentFixture fixture;
  StatusReporter reporter(fixture.context());
  ScriptedPorts ports;
  ReadinessProber prober(fixture.context(), reporter, ports.Check());
  QueueRunning(reporter, fixture);
  reporter.Queue(PodReportFields("pod_a", PodState::kExited, fixture.clock().Now()));
  ports.answering = {20022, 20888};
  prober.Probe();
  EXPECT_TRUE(ports.addresses.empty());
  EXPECT_EQ(fixture.Reports().size(), 2u);
}

TEST(ReadinessProberTest, PortsPublishedOnEveryAddressAreProbedOnLoopback) {
  AgentOptions options;
  options.publish_address = "0.0.0.0";
  AgentFixture fixture(options);
  StatusReporter reporter(fixture.context());
  ScriptedPorts ports;
  ReadinessProber prober(fixture.context(), reporter, ports.Check());
  QueueRunning(reporter, fixture);
  prober.Probe();
  ASSERT_FALSE(ports.addresses.empty());
  EXPECT_EQ(ports.addresses[0], "127.0.0.1");

  AgentOptions public_options;
  public_options.publish_address = "10.1.2.3";
  AgentFixture on_public(public_options);
  StatusReporter public_reporter(on_public.context());
  ScriptedPorts public_ports;
  ReadinessProber public_prober(on_public.context(), public_reporter, public_ports.Check());
  QueueRunning(public_reporter, on_public);
  public_prober.Probe();
  ASSERT_FALSE(public_ports.addresses.empty());
  EXPECT_EQ(public_ports.addresses[0], "10.1.2.3");
}

}  // namespace
}  // namespace suanli::agent
