// Tests of GPU discovery.
//
// On a GPU host this file is also the hardware check: build gpus_test and run
//   build/release/src/agent/gpus_test --gtest_filter='*Nvml*'
// NvmlTest.DiscoversThisHostsGpusOrSaysWhyNone then prints the driver, the CUDA version and every
// GPU with its catalog type and one health reading, and checks them; on a host without the driver
// it checks that discovery says so instead. The other Nvml tests drive the same code through
// fake_nvml.cc, a stand-in library with four fixed GPUs.
#include "agent/gpus.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <set>

#include "catalog/catalog_file.h"

namespace suanli::agent {
namespace {

using core::StatusCode;

const catalog::Catalog& BuiltIn() {
  static const catalog::Catalog* catalog = [] {
    core::Result<catalog::Catalog> loaded = catalog::LoadBuiltInCatalog();
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return new catalog::Catalog(std::move(loaded).value());
  }();
  return *catalog;
}

std::vector<Gpu> Parse(std::string_view spec) {
  core::Result<std::vector<Gpu>> gpus = ParseSimulatedGpus(spec, BuiltIn());
  EXPECT_TRUE(gpus.ok()) << spec << ": " << gpus.status().ToString();
  return gpus.ok() ? std::move(gpus).value() : std::vector<Gpu>{};
}

// The message of the error `spec` gives, which must be INVALID_ARGUMENT.
std::string ParseError(std::string_view spec) {
  core::Result<std::vector<Gpu>> gpus = ParseSimulatedGpus(spec, BuiltIn());
  if (gpus.ok()) return "parsed";
  EXPECT_EQ(gpus.status().code(), StatusCode::kInvalidArgument) << spec;
  return gpus.status().message();
}

TEST(SimulatedGpusTest, ParsesACountOfOneType) {
  const std::vector<Gpu> gpus = Parse("4xRTX 4090");
  ASSERT_EQ(gpus.size(), 4u);
  for (int index = 0; index < 4; ++index) {
    const Gpu& gpu = gpus[static_cast<size_t>(index)];
    EXPECT_EQ(gpu.index, index);
    EXPECT_EQ(gpu.uuid, "SIM-GPU-" + std::to_string(index) + "-rtx-4090");
    EXPECT_EQ(gpu.name, "RTX 4090");
    EXPECT_EQ(gpu.type, "RTX 4090");
    EXPECT_EQ(gpu.memory_gb, 24);
    EXPECT_TRUE(gpu.simulated);
  }
}

TEST(SimulatedGpusTest, ParsesListsBareNamesAndForgivingSpelling) {
  const std::vector<Gpu> gpus = Parse("2xA100 80GB,1xRTX 3090");
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].type, "A100 80GB SXM");  // the catalog's preferred A100 80GB
  EXPECT_EQ(gpus[0].memory_gb, 80);
  EXPECT_EQ(gpus[1].uuid, "SIM-GPU-1-a100-80gb-sxm");
  EXPECT_EQ(gpus[2].type, "RTX 3090");
  EXPECT_EQ(gpus[2].uuid, "SIM-GPU-2-rtx-3090");

  ASSERT_EQ(Parse("RTX 4090").size(), 1u);
  EXPECT_EQ(Parse("RTX 4090")[0].uuid, "SIM-GPU-0-rtx-4090");

  const std::vector<Gpu> spaced = Parse(" 2 X rtx4090 , 4090,h100-sxm ");
  ASSERT_EQ(spaced.size(), 4u);
  EXPECT_EQ(spaced[1].type, "RTX 4090");
  EXPECT_EQ(spaced[2].type, "RTX 4090");
  EXPECT_EQ(spaced[3].type, "H100 SXM");
  EXPECT_EQ(spaced[3].index, 3);

  EXPECT_EQ(Parse("64xL4").size(), 64u);
  EXPECT_EQ(Parse("3090 Ti")[0].type, "RTX 3090 Ti");  // leading digits without an 'x' are a name
}

TEST(SimulatedGpusTest, HaveAFixedTopology) {
  // PCIe cards: a switch per four GPUs. SXM boards: one NVLink group.
  const std::vector<Gpu> pcie = Parse("8xL40S");
  ASSERT_EQ(pcie.size(), 8u);
  for (const Gpu& gpu : pcie) EXPECT_EQ(gpu.link_group, gpu.index < 4 ? 0 : 4) << gpu.index;
  const std::vector<Gpu> sxm = Parse("2xRTX 4090,8xH100 SXM");
  ASSERT_EQ(sxm.size(), 10u);
  EXPECT_EQ(sxm[1].link_group, 0);
  for (size_t i = 2; i < sxm.size(); ++i) EXPECT_EQ(sxm[i].link_group, 2) << i;
  EXPECT_EQ(sxm[5].cdi_name, "5");
}

TEST(SimulatedGpusTest, SplitsMigCapableGpusIntoSlices) {
  const std::vector<Gpu> gpus = Parse("2xA100 80GB SXM mig=3g.40gb+2g.20gb+1g.10gb");
  ASSERT_EQ(gpus.size(), 6u);
  EXPECT_EQ(gpus[0].mig_profile, "3g.40gb");
  EXPECT_EQ(gpus[0].capacity_milli, 428);  // 3 of 7 compute slices
  EXPECT_EQ(gpus[0].memory_gb, 40);
  EXPECT_EQ(gpus[0].type, "A100 80GB SXM");
  EXPECT_EQ(gpus[0].name, "A100 80GB SXM MIG 3g.40gb");
  EXPECT_EQ(gpus[0].uuid, "SIM-MIG-0-0-a100-80gb-sxm");
  EXPECT_EQ(gpus[1].capacity_milli, 285);
  EXPECT_EQ(gpus[2].capacity_milli, 142);
  EXPECT_EQ(gpus[4].cdi_name, "1:1");  // the second GPU's second slice
  EXPECT_EQ(gpus[4].nvml_index, 1);
  EXPECT_EQ(gpus[4].index, 4);
  EXPECT_EQ(Parse("H100 SXM mig=7g.80gb")[0].capacity_milli, core::kMilliGpu);  // all 7

  EXPECT_EQ(ParseError("1xRTX 4090 mig=1g.5gb"),
            "--simulate-gpus: the RTX 4090 has no MIG; only the A100, A30, H100, H200 and B200 do");
  EXPECT_EQ(ParseError("1xA100 80GB SXM mig=4g.40gb+4g.40gb"),
            "--simulate-gpus: the slices of an A100 80GB SXM add up to 8 compute slices and 80 GB, "
            "more than its 7 and 80 GB");
  EXPECT_EQ(ParseError("1xA100 80GB SXM mig=3g"),
            "--simulate-gpus entry '1xA100 80GB SXM': '3g' is not a MIG profile; write them as "
            "NVIDIA names them, joined by '+', e.g. '1xA100 80GB mig=3g.40gb+2g.20gb+2g.20gb'");
}

TEST(SimulatedGpusTest, ARestartReportsTheSameDevices) {
  const std::vector<Gpu> first = Parse("2xA100 80GB,1xRTX 3090");
  const std::vector<Gpu> second = Parse("2xA100 80GB,1xRTX 3090");
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].uuid, second[i].uuid);
}

TEST(SimulatedGpusTest, SaysWhatIsWrongWithABadSpec) {
  const std::string example = "write e.g. '4xRTX 4090' or '2xA100 80GB,1xRTX 3090'";
  EXPECT_EQ(ParseError(""), "--simulate-gpus is empty; " + example);
  EXPECT_EQ(ParseError("  "), "--simulate-gpus is empty; " + example);
  EXPECT_EQ(ParseError("0xRTX 4090"),
            "--simulate-gpus entry '0xRTX 4090' asks for 0 GPUs; the count must be from 1 to 64; " +
                example);
  EXPECT_EQ(ParseError("65xRTX 4090"),
            "--simulate-gpus entry '65xRTX 4090' asks for 65 GPUs; the count must be from 1 to "
            "64; " +
                example);
  EXPECT_EQ(ParseError("99999999999999999999xRTX 4090"),
            "--simulate-gpus entry '99999999999999999999xRTX 4090' asks for "
            "99999999999999999999 GPUs; the count must be from 1 to 64; " +
                example);
  EXPECT_EQ(
      ParseError("-1xRTX 4090"),
      "--simulate-gpus entry '-1xRTX 4090' needs a whole count from 1 to 64 before the 'x'; " +
          example);
  EXPECT_EQ(ParseError("1.5xRTX 4090"),
            "--simulate-gpus entry '1.5xRTX 4090' needs a whole count from 1 to 64 before the "
            "'x'; " +
                example);
  EXPECT_EQ(ParseError("x4090"),
            "--simulate-gpus entry 'x4090' has no count before the 'x'; " + example);
  EXPECT_EQ(ParseError("4x"),
            "--simulate-gpus entry '4x' names no GPU after the count; " + example);
  EXPECT_EQ(ParseError("2xA100 80GB,,1xRTX 3090"),
            "--simulate-gpus '2xA100 80GB,,1xRTX 3090' has an empty entry; " + example);
  EXPECT_EQ(ParseError("4xRTX 4090,"),
            "--simulate-gpus '4xRTX 4090,' has an empty entry; " + example);
  EXPECT_EQ(ParseError("40xRTX 4090,30xL4"),
            "--simulate-gpus asks for more than 64 GPUs in all; " + example);
  EXPECT_EQ(ParseError("4xRTX 4909"),
            "--simulate-gpus: no GPU type named 'RTX 4909'; did you mean RTX 4090? ('suanli gpus' "
            "lists them all)");
  EXPECT_EQ(ParseError("2xQuantum X1"),
            "--simulate-gpus: no GPU type named 'Quantum X1' ('suanli gpus' lists them all)");
}

struct NvmlName {
  std::string_view nvml_name;
  double memory_gib;  // as NVML reports it: total bytes / 2^30
  std::string_view type;
};

// Names as real drivers report them, with the memory nvidia-smi shows.
constexpr NvmlName kNvmlNames[] = {
    {"NVIDIA GeForce RTX 4090", 23.99, "RTX 4090"},
    {"NVIDIA GeForce RTX 3090", 24.0, "RTX 3090"},
    {"NVIDIA GeForce RTX 3090 Ti", 24.0, "RTX 3090 Ti"},
    {"NVIDIA GeForce RTX 3060", 12.0, "RTX 3060 12GB"},
    {"NVIDIA GeForce RTX 4060 Ti", 15.7, "RTX 4060 Ti 16GB"},
    {"NVIDIA GeForce RTX 5090", 31.4, "RTX 5090"},
    {"NVIDIA TITAN RTX", 23.6, "Titan RTX"},
    {"Quadro RTX 8000", 47.5, "Quadro RTX 8000"},
    {"NVIDIA RTX A4000", 15.99, "RTX A4000"},
    {"NVIDIA RTX A5000", 23.99, "RTX A5000"},
    {"NVIDIA RTX A6000", 47.99, "RTX A6000"},
    {"NVIDIA RTX 6000 Ada Generation", 47.99, "RTX 6000 Ada"},
    {"NVIDIA RTX 4000 Ada Generation", 19.7, "RTX 4000 Ada"},
    {"NVIDIA L4", 22.49, "L4"},
    {"NVIDIA L40", 44.99, "L40"},
    {"NVIDIA L40S", 44.99, "L40S"},
    {"Tesla T4", 15.0, "T4"},
    {"Tesla T4", 14.76, "T4"},  // ECC on
    {"NVIDIA A10", 22.49, "A10"},
    {"NVIDIA A10G", 22.49, "A10"},
    {"NVIDIA A40", 44.99, "A40"},
    {"Tesla V100-SXM2-16GB", 15.78, "V100 16GB SXM2"},
    {"Tesla V100-SXM2-32GB", 31.75, "V100 32GB SXM2"},
    {"Tesla V100-PCIE-16GB", 15.78, "V100 16GB PCIe"},
    {"Tesla V100-PCIE-32GB", 31.75, "V100 32GB PCIe"},
    {"NVIDIA A100-PCIE-40GB", 39.59, "A100 40GB PCIe"},
    {"NVIDIA A100-SXM4-40GB", 39.59, "A100 40GB SXM"},
    {"NVIDIA A100 80GB PCIe", 79.15, "A100 80GB PCIe"},
    {"NVIDIA A100-SXM4-80GB", 80.0, "A100 80GB SXM"},
    {"NVIDIA H100 PCIe", 79.65, "H100 PCIe"},
    {"NVIDIA H100 80GB HBM3", 79.65, "H100 SXM"},
    {"NVIDIA H100 NVL", 93.58, "H100 NVL"},
    {"NVIDIA H200", 140.4, "H200"},
    {"NVIDIA B200", 178.4, "B200"},
    {"NVIDIA GeForce RTX 4090", 0, "RTX 4090"},  // memory unknown: the name alone decides
    // Not in the catalog, or not told apart by name and memory: reported by NVML's name.
    {"NVIDIA GeForce RTX 3060", 8.0, ""},     // the 8 GB card is another GPU
    {"NVIDIA GeForce RTX 4060 Ti", 8.0, ""},  // likewise
    {"NVIDIA GeForce RTX 3080", 12.0, ""},    // the catalog's RTX 3080 is the 10 GB one
    {"NVIDIA GeForce RTX 4070", 12.0, ""},    // not the RTX 4070 Ti
    {"NVIDIA GeForce RTX 4090 D", 23.99, ""},
    {"NVIDIA GeForce RTX 4090 Laptop GPU", 16.0, ""},
    {"NVIDIA H100", 79.65, ""},  // PCIe or SXM?
    {"NVIDIA H200 NVL", 140.4, ""},
    {"Tesla V100S-PCIE-32GB", 31.75, ""},
    {"Quadro RTX 6000", 23.6, ""},
    {"NVIDIA A800 80GB PCIe", 79.15, ""},
    {"", 0, ""},
};

TEST(CatalogTypeForNvmlNameTest, MapsRealNvmlNamesToCatalogTypes) {
  for (const NvmlName& row : kNvmlNames) {
    EXPECT_EQ(CatalogTypeForNvmlName(row.nvml_name, row.memory_gib, BuiltIn()), row.type)
        << "'" << row.nvml_name << "' with " << row.memory_gib << " GiB";
    if (!row.type.empty()) {
      // Each expected type is a canonical name of the catalog.
      core::Result<const catalog::GpuType*> type = BuiltIn().FindExact(row.type);
      ASSERT_TRUE(type.ok()) << type.status().ToString();
      EXPECT_EQ((*type)->name, row.type);
    }
  }
}

TEST(CatalogTypeForNvmlNameTest, MemoryTellsTheA100SizesApart) {
  // A name with no size: the memory alone picks the card.
  EXPECT_EQ(CatalogTypeForNvmlName("NVIDIA A100 PCIe", 39.59, BuiltIn()), "A100 40GB PCIe");
  EXPECT_EQ(CatalogTypeForNvmlName("NVIDIA A100 PCIe", 79.15, BuiltIn()), "A100 80GB PCIe");
  EXPECT_EQ(CatalogTypeForNvmlName("NVIDIA A100 PCIe", 0, BuiltIn()), "");
  // A name whose size the memory contradicts is not trusted.
  EXPECT_EQ(CatalogTypeForNvmlName("NVIDIA A100-SXM4-80GB", 39.59, BuiltIn()), "");
}

#ifdef SUANLI_FAKE_NVML
std::unique_ptr<Nvml> LoadFake() {
  core::Result<std::unique_ptr<Nvml>> nvml = Nvml::Load(SUANLI_FAKE_NVML);
  EXPECT_TRUE(nvml.ok()) << nvml.status().ToString();
  return nvml.ok() ? std::move(nvml).value() : nullptr;
}

TEST(NvmlTest, DiscoversTheGpusOfAFakeNvml) {
  std::unique_ptr<Nvml> nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  const GpuInventory inventory = nvml->Discover(BuiltIn());
  EXPECT_EQ(inventory.source, "nvml");
  EXPECT_EQ(inventory.driver_version, "550.54.15");
  EXPECT_EQ(inventory.cuda_version, "12.4");
  ASSERT_EQ(inventory.gpus.size(), 3u);
  EXPECT_EQ(inventory.gpus[0].index, 0);
  EXPECT_EQ(inventory.gpus[0].uuid, "GPU-00000000-fake-0000-0000-a10080000000");
  EXPECT_EQ(inventory.gpus[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(inventory.gpus[0].type, "A100 80GB SXM");
  EXPECT_EQ(inventory.gpus[0].memory_gb, 80);
  EXPECT_FALSE(inventory.gpus[0].simulated);
  EXPECT_EQ(inventory.gpus[1].type, "RTX 4090");
  EXPECT_NEAR(inventory.gpus[1].memory_gb, 23.99, 0.01);
  EXPECT_EQ(inventory.gpus[2].name, "NVIDIA Quantum X1");
  EXPECT_EQ(inventory.gpus[2].type, "");
  EXPECT_EQ(inventory.note, "GPU 3: GPU is lost");
  // GPUs 0 and 2 share a PCIe switch; GPU 1 is across the CPUs.
  EXPECT_EQ(inventory.gpus[0].link_group, 0);
  EXPECT_EQ(inventory.gpus[1].link_group, 1);
  EXPECT_EQ(inventory.gpus[2].link_group, 0);
  EXPECT_EQ(inventory.gpus[1].cdi_name, "1");
  EXPECT_EQ(inventory.gpus[0].mig_profile, "");
}

TEST(NvmlTest, OffersTheMigSlicesOfAGpuInMigMode) {
  setenv("SUANLI_FAKE_NVML_MIG", "1", 1);
  std::unique_ptr<Nvml> nvml = LoadFake();
  unsetenv("SUANLI_FAKE_NVML_MIG");
  ASSERT_NE(nvml, nullptr);
  const GpuInventory inventory = nvml->Discover(BuiltIn());
  // GPU 0's two slices, then GPUs 1 and 2, numbered in order.
  ASSERT_EQ(inventory.gpus.size(), 4u);
  const Gpu& big = inventory.gpus[0];
  EXPECT_EQ(big.index, 0);
  EXPECT_EQ(big.uuid, "MIG-aaaaaaaa-fake-0000-0000-300000000000");
  EXPECT_EQ(big.type, "A100 80GB SXM");
  EXPECT_EQ(big.mig_profile, "3g.40gb");
  EXPECT_EQ(big.capacity_milli, 428);
  EXPECT_EQ(big.cdi_name, "0:0");
  EXPECT_NEAR(big.memory_gb, 39.25, 0.01);
  EXPECT_EQ(big.name, "NVIDIA A100-SXM4-80GB MIG 3g.40gb");
  const Gpu& small = inventory.gpus[1];
  EXPECT_EQ(small.mig_profile, "1g.10gb");
  EXPECT_EQ(small.capacity_milli, 142);
  EXPECT_EQ(small.cdi_name, "0:2");
  EXPECT_EQ(small.nvml_index, 0);
  EXPECT_EQ(inventory.gpus[2].index, 2);
  EXPECT_EQ(inventory.gpus[2].nvml_index, 1);
  EXPECT_EQ(inventory.gpus[2].cdi_name, "1");
  EXPECT_EQ(inventory.gpus[2].mig_profile, "");
  // Health stays per GPU.
  EXPECT_EQ(nvml->Health().size(), 4u);
}

TEST(NvmlTest, ReadsHealthAndCountsXidEventsOfAFakeNvml) {
  std::unique_ptr<Nvml> nvml = LoadFake();
  ASSERT_NE(nvml, nullptr);
  const std::vector<GpuHealth> health = nvml->Health();
  ASSERT_EQ(health.size(), 4u);
  EXPECT_EQ(health[0].utilization_percent, 87);
  EXPECT_EQ(health[0].memory_used_gb, 10);
  EXPECT_EQ(health[0].temperature_c, 64);
  EXPECT_EQ(health[0].power_w, 312.5);
  EXPECT_EQ(health[0].ecc_uncorrected_errors, 2);
  EXPECT_EQ(health[0].xid_errors, 1);
  EXPECT_EQ(health[0].last_xid, 79);
  EXPECT_EQ(health[0].problem, "");
  EXPECT_EQ(health[1].ecc_uncorrected_errors, -1);  // GeForce: no ECC counters
  EXPECT_EQ(health[1].xid_errors, -1);              // not registered for XID events
  EXPECT_EQ(health[1].problem, "");
  EXPECT_EQ(health[3].index, 3);
  EXPECT_EQ(health[3].problem, "GPU is lost");
  EXPECT_EQ(health[3].temperature_c, -1);

  // Counts are kept across readings, and an event is counted once.
  const std::vector<GpuHealth> again = nvml->Health();
  EXPECT_EQ(again[0].xid_errors, 1);
  EXPECT_EQ(again[0].last_xid, 79);
}
#endif

TEST(NvmlTest, SaysWhyWhenTheLibraryIsMissingOrIsNotNvml) {
  core::Result<std::unique_ptr<Nvml>> missing = Nvml::Load("libsuanli-no-such-nvml.so.1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(missing.status().message(),
            "libsuanli-no-such-nvml.so.1 not found: no NVIDIA driver on this host");

  core::Result<std::unique_ptr<Nvml>> not_nvml = Nvml::Load("libm.so.6");
  ASSERT_FALSE(not_nvml.ok());
  EXPECT_EQ(not_nvml.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(not_nvml.status().message(),
            "libm.so.6 has no nvmlInit_v2: this NVIDIA driver is too old for suanli; update it");
}

TEST(NvmlTest, SimulatedGpusNeverTouchNvml) {
  core::Result<GpuInventory> inventory = DiscoverGpus(BuiltIn(), "2xH100 SXM");
  ASSERT_TRUE(inventory.ok()) << inventory.status().ToString();
  EXPECT_EQ(inventory->source, "simulated");
  EXPECT_EQ(inventory->gpus.size(), 2u);
  EXPECT_EQ(inventory->driver_version, "");
  EXPECT_EQ(DiscoverGpus(BuiltIn(), "0xH100").status().code(), StatusCode::kInvalidArgument);
}

// The hardware check (see the top of this file): whatever this host has, discovery must describe
// it. Which branch runs depends on whether the driver's library loads here, not on an assumption.
TEST(NvmlTest, DiscoversThisHostsGpusOrSaysWhyNone) {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  const bool has_driver = library != nullptr;
  if (library != nullptr) dlclose(library);

  core::Result<GpuInventory> inventory = DiscoverGpus(BuiltIn(), "");
  ASSERT_TRUE(inventory.ok()) << inventory.status().ToString();
  std::cout << "source: " << inventory->source << "\ndriver: " << inventory->driver_version
            << "\ncuda: " << inventory->cuda_version << "\nnote: " << inventory->note << "\n";
  for (const Gpu& gpu : inventory->gpus) {
    std::cout << "gpu " << gpu.index << ": " << gpu.name << " | type '" << gpu.type << "' | "
              << gpu.memory_gb << " GiB | " << gpu.uuid << " | link group " << gpu.link_group
              << " | cdi " << gpu.cdi_name << " | mig '" << gpu.mig_profile << "' ("
              << gpu.capacity_milli << " milli)\n";
  }
  if (!has_driver) {
    EXPECT_EQ(inventory->source, "none");
    EXPECT_EQ(inventory->note, "libnvidia-ml.so.1 not found: no NVIDIA driver on this host");
    EXPECT_TRUE(inventory->gpus.empty());
    return;
  }

  EXPECT_EQ(inventory->source, "nvml") << inventory->note;
  EXPECT_FALSE(inventory->driver_version.empty());
  EXPECT_FALSE(inventory->gpus.empty()) << inventory->note;
  std::set<int> physical;
  for (const Gpu& gpu : inventory->gpus) {
    EXPECT_EQ(gpu.uuid.rfind(gpu.mig_profile.empty() ? "GPU-" : "MIG-", 0), 0u) << gpu.uuid;
    EXPECT_GT(gpu.memory_gb, 0);
    EXPECT_FALSE(gpu.name.empty());
    EXPECT_FALSE(gpu.simulated);
    physical.insert(gpu.nvml_index);
  }
  core::Result<std::unique_ptr<Nvml>> nvml = Nvml::Load();
  ASSERT_TRUE(nvml.ok()) << nvml.status().ToString();
  const std::vector<GpuHealth> health = (*nvml)->Health();
  EXPECT_EQ(health.size(), physical.size());  // readings are per GPU, MIG slices or not
  for (const GpuHealth& reading : health) {
    std::cout << "health " << reading.index << ": " << reading.utilization_percent << "% | "
              << reading.memory_used_gb << " GiB used | " << reading.temperature_c << " C | "
              << reading.power_w << " W | ecc " << reading.ecc_uncorrected_errors << " | xid "
              << reading.xid_errors << " (last " << reading.last_xid << ") | problem '"
              << reading.problem << "'\n";
    EXPECT_EQ(reading.problem, "");
    EXPECT_GE(reading.utilization_percent, 0);
    EXPECT_GE(reading.memory_used_gb, 0);
    EXPECT_GT(reading.temperature_c, 0);
  }
}

}  // namespace
}  // namespace suanli::agent
