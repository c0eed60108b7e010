#include "agent/gpu_meter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/agent_fixture.h"

namespace suanli::agent {
namespace {

using testing::AgentFixture;

GpuInventory OneH100() {
  GpuInventory inventory;
  Gpu gpu;
  gpu.index = 0;
  gpu.uuid = "GPU-1111";
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.type = "H100 SXM";
  inventory.gpus.push_back(gpu);
  inventory.source = "nvml";
  return inventory;
}

MeasuredGpu Measured(const std::string& uuid, double bandwidth) {
  MeasuredGpu gpu;
  gpu.index = 0;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.uuid = uuid;
  gpu.compute_capability = "9.0";
  gpu.memory_gb = 79.1;
  gpu.memory_bandwidth_gbps = bandwidth;
  gpu.fp16_tflops = 700;
  return gpu;
}

// Counts the probe's runs and answers what the test set.
struct ScriptedProbe {
  int runs = 0;
  core::Result<std::vector<MeasuredGpu>> answer = core::NotFoundError("no probe");
  GpuMeter::ProbeRunner Runner() {
    return [this] {
      ++runs;
      return answer;
    };
  }
};

TEST(GpuMeterTest, AFreshMeasurementIsReportedAndKeptForTheNextStart) {
  AgentFixture fixture;
  const GpuInventory gpus = OneH100();
  ScriptedProbe probe;
  probe.answer = std::vector<MeasuredGpu>{Measured("GPU-1111", 3000)};
  int heartbeats_asked = 0;
  GpuMeter meter(
      fixture.context(), gpus, [&] { ++heartbeats_asked; }, probe.Runner());
  meter.Measure();

  ASSERT_EQ(meter.Measurements().size(), 1u);
  EXPECT_EQ(meter.Measurements()[0].index, 0);
  EXPECT_DOUBLE_EQ(meter.Measurements()[0].memory_bandwidth_gbps, 3000);
  EXPECT_EQ(heartbeats_asked, 1);
  EXPECT_EQ(probe.runs, 1);

  // The next start uses what was kept, without running the probe.
  ScriptedProbe second_probe;
  GpuMeter next_start(
      fixture.context(), gpus, [] {}, second_probe.Runner());
  next_start.Measure();
  EXPECT_EQ(second_probe.runs, 0);
  ASSERT_EQ(next_start.Measurements().size(), 1u);
  EXPECT_DOUBLE_EQ(next_start.Measurements()[0].memory_bandwidth_gbps, 3000);
}

TEST(GpuMeterTest, KeptMeasurementsOfOtherGpusAreMeasuredAgain) {
  AgentFixture fixture;
  ASSERT_TRUE(
      fixture.state().Set(kMeasuredGpusKey, EncodeMeasuredGpus({Measured("GPU-9999", 1000)})).ok());
  const GpuInventory gpus = OneH100();
  ScriptedProbe probe;
  probe.answer = std::vector<MeasuredGpu>{Measured("GPU-1111", 3300)};
  GpuMeter meter(
      fixture.context(), gpus, [] {}, probe.Runner());
  meter.Measure();
  EXPECT_EQ(probe.runs, 1);
  ASSERT_EQ(meter.Measurements().size(), 1u);
  EXPECT_DOUBLE_EQ(meter.Measurements()[0].memory_bandwidth_gbps, 3300);
}

TEST(GpuMeterTest, AProbeThatCannotRunLeavesTheDatasheetsAndSaysWhyUnlessItIsMerelyAbsent) {
  AgentFixture fixture;  // gpu_probe "auto"
  const GpuInventory gpus = OneH100();
  ScriptedProbe absent;  // NOT_FOUND: no probe on this host, nobody asked for one
  GpuMeter quiet(
      fixture.context(), gpus, [] {}, absent.Runner());
  quiet.Measure();
  EXPECT_TRUE(quiet.Measurements().empty());
  EXPECT_EQ(fixture.log().find("GPUs not measured"), std::string::npos);

  ScriptedProbe busy;
  busy.answer = core::FailedPreconditionError("pods are running here");
  int heartbeats_asked = 0;
  GpuMeter meter(
      fixture.context(), gpus, [&] { ++heartbeats_asked; }, busy.Runner());
  meter.Measure();
  EXPECT_TRUE(meter.Measurements().empty());
  EXPECT_EQ(heartbeats_asked, 0);
  EXPECT_NE(fixture.log().find("GPUs not measured, so the advisor uses their datasheets: pods are "
                               "running here"),
            std::string::npos);
}

TEST(GpuMeterTest, SimulatedOrUnknownGpusAreNotMeasured) {
  AgentFixture fixture;
  GpuInventory gpus = OneH100();
  gpus.gpus[0].type = "";  // not in the catalog
  ScriptedProbe probe;
  probe.answer = std::vector<MeasuredGpu>{Measured("GPU-1111", 3000)};
  GpuMeter meter(
      fixture.context(), gpus, [] {}, probe.Runner());
  meter.Measure();
  EXPECT_EQ(probe.runs, 0);
  EXPECT_TRUE(meter.Measurements().empty());
}

}  // namespace
}  // namespace suanli::agent
