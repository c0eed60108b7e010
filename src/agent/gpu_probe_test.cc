#include "agent/gpu_probe.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "testing/temp_dir.h"

namespace suanli::agent {
namespace {

constexpr std::string_view kH100Line =
    R"({"index":0,"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-8c1e55a2-4f1e-7a3b-9d0c-1a2b3c4d5e6f",)"
    R"("compute_capability":"9.0","memory_gb":79.2,"memory_bandwidth_gbps":2914.5,)"
    R"("fp16_tflops":610.2,"bf16_tflops":605.0,"fp8_tflops":1020.4})";

// kH100Line with `field`'s value replaced by `value` (the text after "field":), or the field
// removed when `value` is empty.
std::string WithField(std::string_view field, std::string_view value) {
  std::string line(kH100Line);
  const std::string key = "\"" + std::string(field) + "\":";
  const size_t start = line.find(key);
  EXPECT_NE(start, std::string::npos) << field;
  size_t end = start + key.size();
  if (line[end] == '"') end = line.find('"', end + 1) + 1;
  end = line.find_first_of(",}", end);
  if (value.empty()) {
    const bool last = line[end] == '}';
    line.erase(last ? start - 1 : start, last ? end - start + 1 : end - start + 1);
  } else {
    line.replace(start + key.size(), end - start - key.size(), value);
  }
  return line;
}

void ExpectInvalid(std::string_view text, std::string_view names) {
  core::Result<std::vector<MeasuredGpu>> gpus = ParseGpuProbeOutput(text);
  ASSERT_FALSE(gpus.ok()) << text;
  EXPECT_EQ(gpus.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(gpus.status().message().find(names), std::string::npos) << gpus.status().message();
}

TEST(GpuProbeTest, ParsesOneGpusMeasurements) {
  core::Result<std::vector<MeasuredGpu>> gpus = ParseGpuProbeOutput(std::string(kH100Line) + "\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 1u);
  const MeasuredGpu& gpu = gpus->front();
  EXPECT_EQ(gpu.index, 0);
  EXPECT_EQ(gpu.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu.uuid, "GPU-8c1e55a2-4f1e-7a3b-9d0c-1a2b3c4d5e6f");
  EXPECT_EQ(gpu.compute_capability, "9.0");
  EXPECT_DOUBLE_EQ(gpu.memory_gb, 79.2);
  EXPECT_DOUBLE_EQ(gpu.memory_bandwidth_gbps, 2914.5);
  EXPECT_DOUBLE_EQ(gpu.fp16_tflops, 610.2);
  EXPECT_EQ(gpu.bf16_tflops, 605.0);
  EXPECT_EQ(gpu.fp8_tflops, 1020.4);
}

TEST(GpuProbeTest, ParsesSeveralGpusSkippingBlankLinesAndLeavingUnmeasuredRatesAbsent) {
  const std::string t4 =
      R"({"index":1,"name":"Tesla T4","uuid":"GPU-00000000-0000-0000-0000-000000000001",)"
      R"("compute_capability":"7.5","memory_gb":14.6,"memory_bandwidth_gbps":240,)"
      R"("fp16_tflops":52.3})";
  core::Result<std::vector<MeasuredGpu>> gpus =
      ParseGpuProbeOutput("\n" + std::string(kH100Line) + "\r\n\n  " + t4 + "\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*gpus)[1].index, 1);
  EXPECT_EQ((*gpus)[1].memory_bandwidth_gbps, 240);  // an integer is a number too
  EXPECT_FALSE((*gpus)[1].bf16_tflops.has_value());
  EXPECT_FALSE((*gpus)[1].fp8_tflops.has_value());
}

TEST(GpuProbeTest, RefusesAnUnknownFieldByName) {
  std::string line(kH100Line);
  line.insert(line.size() - 1, R"(,"int8_tops":2000)");
  ExpectInvalid(line, "unknown field 'int8_tops'");
}

TEST(GpuProbeTest, RefusesEachMissingRequiredFieldByName) {
  for (const std::string_view field : {"index", "name", "uuid", "compute_capability", "memory_gb",
                                       "memory_bandwidth_gbps", "fp16_tflops"}) {
    SCOPED_TRACE(field);
    ExpectInvalid(WithField(field, ""), field);
  }
}

TEST(GpuProbeTest, RefusesNonsenseValuesNamingTheField) {
  ExpectInvalid(WithField("memory_bandwidth_gbps", "-5"), "memory_bandwidth_gbps");
  ExpectInvalid(WithField("memory_bandwidth_gbps", "0"), "memory_bandwidth_gbps");
  ExpectInvalid(WithField("memory_bandwidth_gbps", "1e9"), "memory_bandwidth_gbps");
  ExpectInvalid(WithField("fp16_tflops", "\"610\""), "fp16_tflops: must be a number");
  ExpectInvalid(WithField("bf16_tflops", "-1"), "bf16_tflops");
  ExpectInvalid(WithField("fp8_tflops", "5e6"), "fp8_tflops");
  ExpectInvalid(WithField("fp8_tflops", "null"), "fp8_tflops");
  ExpectInvalid(WithField("memory_gb", "0"), "memory_gb");
  ExpectInvalid(WithField("index", "-1"), "index");
  ExpectInvalid(WithField("index", "0.5"), "index");
  ExpectInvalid(WithField("name", "\" \""), "name: must not be empty");
  ExpectInvalid(WithField("uuid", "\"8c1e55a2\""), "uuid: must start with GPU-");
  ExpectInvalid(WithField("uuid", "\"SIM-8c1e55a2\""), "uuid: must start with GPU-");
  ExpectInvalid(WithField("compute_capability", "\"nine\""), "compute_capability");
  ExpectInvalid(WithField("compute_capability", "9.0"), "compute_capability: must be a string");
}

TEST(GpuProbeTest, RefusesWhatIsNotOneJsonObjectALineNamingTheLine) {
  ExpectInvalid(std::string(kH100Line) + "\nCUDA error: out of memory\n", "line 2");
  ExpectInvalid(R"([1, 2])", "line 1");
  ExpectInvalid(std::string(kH100Line).substr(0, 40), "not valid JSON");
}

TEST(GpuProbeTest, RefusesAGpuMeasuredTwice) {
  ExpectInvalid(std::string(kH100Line) + "\n" + std::string(kH100Line),
                "index 0 was measured twice");
  ExpectInvalid(std::string(kH100Line) + "\n" + WithField("index", "1"), "measured twice");
}

TEST(GpuProbeTest, RefusesOutputWithoutAGpu) {
  ExpectInvalid("", "printed no GPU");
  ExpectInvalid("\n \n", "printed no GPU");
}

TEST(GpuProbeTest, ComparesEachFigureWithTheDatasheets) {
  catalog::GpuType h100;
  h100.bandwidth_gbs = 3350;
  h100.fp16_tflops = 989;
  h100.bf16_tflops = 989;
  h100.fp8_tflops = 1979;
  core::Result<std::vector<MeasuredGpu>> gpus = ParseGpuProbeOutput(kH100Line);
  ASSERT_TRUE(gpus.ok());
  EXPECT_EQ(CompareWithDatasheet(gpus->front(), &h100),
            "memory 2914.5 GB/s (87% of 3350); fp16 610.2 TFLOPS (62% of 989); "
            "bf16 605.0 TFLOPS (61% of 989); fp8 1020.4 TFLOPS (52% of 1979)");

  MeasuredGpu t4 = gpus->front();
  t4.bf16_tflops.reset();
  t4.fp8_tflops.reset();
  catalog::GpuType sheet = h100;
  sheet.bf16_tflops.reset();
  EXPECT_EQ(CompareWithDatasheet(t4, &sheet),
            "memory 2914.5 GB/s (87% of 3350); fp16 610.2 TFLOPS (62% of 989); "
            "fp8 not measured (needs compute capability 8.9; datasheet 1979 TFLOPS)");
  EXPECT_EQ(CompareWithDatasheet(t4, nullptr),
            "memory 2914.5 GB/s (not in the catalog); fp16 610.2 TFLOPS (not in the catalog)");
}

// A stand-in probe: a shell script with `body`.
std::filesystem::path WriteScript(const testing::TempDir& dir, std::string_view name,
                                  std::string_view body) {
  const std::filesystem::path path = dir.File(name);
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(GpuProbeTest, FindsTheProbeBesideSuanliOrWhereTheEnvironmentSays) {
  testing::TempDir dir;
  core::Result<std::filesystem::path> missing = FindGpuProbe("", dir.path());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), core::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("SUANLI_GPU_PROBE="), std::string::npos);

  const std::filesystem::path beside = WriteScript(dir, "suanli-gpu-probe", "exit 0");
  core::Result<std::filesystem::path> found = FindGpuProbe("", dir.path());
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, beside);

  const std::filesystem::path elsewhere = WriteScript(dir, "my-probe", "exit 0");
  EXPECT_EQ(FindGpuProbe(elsewhere.string(), "/nonexistent").value(), elsewhere);
  std::ofstream(dir.File("not-executable")) << "x";
  core::Result<std::filesystem::path> bad =
      FindGpuProbe(dir.File("not-executable").string(), dir.path());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("is not an executable file"), std::string::npos);
}

TEST(GpuProbeTest, RunsTheProbeAndParsesWhatItPrints) {
  testing::TempDir dir;
  const std::filesystem::path probe =
      WriteScript(dir, "probe",
                  "echo \"$@\" > \"$(dirname \"$0\")/args\"\necho 'warming up' >&2\ncat <<'END'\n" +
                      std::string(kH100Line) + "\nEND");
  GpuProbeOptions options;
  options.device = 3;
  core::Result<std::vector<MeasuredGpu>> gpus = RunGpuProbe(probe, options);
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_DOUBLE_EQ(gpus->front().memory_bandwidth_gbps, 2914.5);
  std::string args;
  std::getline(std::ifstream(dir.File("args")), args);
  EXPECT_EQ(args, "--device 3");
}

TEST(GpuProbeTest, NoCudaDeviceIsAFailedPreconditionWithTheProbesWords) {
  testing::TempDir dir;
  const std::filesystem::path probe = WriteScript(
      dir, "probe", "echo 'no CUDA device: CUDA driver version is insufficient' >&2\nexit 2");
  core::Result<std::vector<MeasuredGpu>> gpus = RunGpuProbe(probe);
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_EQ(gpus.status().message(), "no CUDA device: CUDA driver version is insufficient");
}

TEST(GpuProbeTest, AFailingProbeIsUnavailableWithItsMessage) {
  testing::TempDir dir;
  const std::filesystem::path probe = WriteScript(
      dir, "probe", "echo 'suanli-gpu-probe: GPU 0: cudaMalloc failed: out of memory' >&2\nexit 1");
  core::Result<std::vector<MeasuredGpu>> gpus = RunGpuProbe(probe);
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), core::StatusCode::kUnavailable);
  EXPECT_NE(gpus.status().message().find("exited with status 1: suanli-gpu-probe: GPU 0: "
                                         "cudaMalloc failed: out of memory"),
            std::string::npos)
      << gpus.status().message();

  core::Result<std::vector<MeasuredGpu>> absent = RunGpuProbe(dir.File("no-such-probe"));
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), core::StatusCode::kUnavailable);
  EXPECT_NE(absent.status().message().find("cannot run"), std::string::npos);

  const std::filesystem::path garbled = WriteScript(dir, "garbled", "echo '{\"index\": -1}'");
  EXPECT_EQ(RunGpuProbe(garbled).status().code(), core::StatusCode::kInvalidArgument);
}

TEST(GpuProbeTest, AProbeRunningPastTheTimeoutIsStopped) {
  testing::TempDir dir;
  const std::filesystem::path probe = WriteScript(dir, "probe", "exec sleep 30");
  GpuProbeOptions options;
  options.timeout = std::chrono::seconds(1);
  core::Result<std::vector<MeasuredGpu>> gpus = RunGpuProbe(probe, options);
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), core::StatusCode::kUnavailable);
  EXPECT_NE(gpus.status().message().find("ran past 1 s"), std::string::npos);
}

TEST(GpuProbeTest, AStoppingAgentStopsTheProbe) {
  testing::TempDir dir;
  const std::filesystem::path probe = WriteScript(dir, "probe", "exec sleep 30");
  GpuProbeOptions options;
  int asked = 0;
  options.cancelled = [&asked] { return ++asked > 1; };
  const auto start = std::chrono::steady_clock::now();
  core::Result<std::vector<MeasuredGpu>> gpus = RunGpuProbe(probe, options);
  ASSERT_FALSE(gpus.ok());
  EXPECT_NE(gpus.status().message().find("the agent is stopping"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

// The agent keeps what the probe printed across restarts, in the probe's own format.
TEST(GpuProbeTest, MeasurementsReadBackAsTheyWereAndMapToTheNodesGpusByUuid) {
  const std::string sim =
      R"({"index":1,"name":"RTX 4090","uuid":"SIM-GPU-1-rtx-4090","compute_capability":"8.9",)"
      R"("memory_gb":24,"memory_bandwidth_gbps":900,"fp16_tflops":150})";
  core::Result<std::vector<MeasuredGpu>> parsed =
      ParseGpuProbeOutput(std::string(kH100Line) + "\n" + sim);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  core::Result<std::vector<MeasuredGpu>> again = ParseGpuProbeOutput(EncodeMeasuredGpus(*parsed));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(again->size(), 2u);
  EXPECT_EQ(EncodeMeasuredGpus(*again), EncodeMeasuredGpus(*parsed));
  EXPECT_EQ((*again)[0].fp8_tflops, 1020.4);
  EXPECT_FALSE((*again)[1].bf16_tflops.has_value());

  // Only GPUs of this node count, under the node's index for them.
  const std::vector<core::GpuMeasurement> node =
      ToNodeMeasurements(*again, {{"SIM-GPU-1-rtx-4090", 7}, {"GPU-elsewhere", 0}});
  ASSERT_EQ(node.size(), 1u);
  EXPECT_EQ(node[0].index, 7);
  EXPECT_EQ(node[0].memory_bandwidth_gbps, 900);
  EXPECT_EQ(node[0].fp16_tflops, 150);
  EXPECT_FALSE(node[0].bf16_tflops.has_value());
}

}  // namespace
}  // namespace suanli::agent
