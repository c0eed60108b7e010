#include "agent/container_spec.h"

#include <gtest/gtest.h>

#include <optional>

namespace suanli::agent {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

DesiredPod Jupyter() {
  DesiredPod desired;
  core::Pod& pod = desired.pod;
  pod.id = "pod_abc";
  pod.image = "localhost/suanli/jupyter:latest";
  pod.restarts = 2;
  pod.vcpu = 4;
  pod.memory_gb = 16;
  pod.jupyter_token = "t0k";
  pod.ports = {{8888, "http"}, {22, "tcp"}};
  return desired;
}

ContainerHost Host(std::span<const Gpu> gpus = {}, GpuAccess access = GpuAccess::kNone) {
  return {"node_1", "10.0.0.5", gpus, access, 4096};
}

// The value of `name` in the container's env, or nullopt; fails the test if it is there twice.
std::optional<std::string> EnvValue(const ContainerSpec& spec, std::string_view name) {
  std::optional<std::string> found;
  for (const auto& [key, value] : spec.env) {
    if (key != name) continue;
    EXPECT_FALSE(found.has_value()) << name << " is in the env twice";
    found = value;
  }
  return found;
}

std::vector<Gpu> Gpus(bool simulated) {
  std::vector<Gpu> gpus;
  for (int index = 0; index < 4; ++index) {
    Gpu gpu;
    gpu.index = index;
    gpu.uuid = (simulated ? "SIM-GPU-" : "GPU-") + std::to_string(index);
    gpu.type = "RTX 4090";
    gpu.simulated = simulated;
    gpus.push_back(gpu);
  }
  return gpus;
}

TEST(ContainerSpecTest, NamesLabelsAndLimitsComeFromThePodAndTheHost) {
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec = BuildContainerSpec(Jupyter(), host_ports, Host());
  EXPECT_EQ(spec.name, "suanli-pod_abc");
  EXPECT_EQ(spec.image, "localhost/suanli/jupyter:latest");
  EXPECT_EQ(spec.labels,
            (std::map<std::string, std::string>{
                {"suanli.pod", "pod_abc"}, {"suanli.restarts", "2"}, {"suanli.node", "node_1"}}));
  EXPECT_EQ(spec.publish_address, "10.0.0.5");
  EXPECT_EQ(spec.nano_cpus, 4'000'000'000);
  EXPECT_EQ(spec.memory_bytes, int64_t{16} << 30);
  EXPECT_EQ(spec.pids_limit, 4096) << "the host's pids limit";
  EXPECT_TRUE(spec.command.empty()) << "no command: the image's own";
  EXPECT_FALSE(spec.remap_user_namespace);
  ContainerHost remapping = Host();
  remapping.remap_user_namespace = true;
  EXPECT_TRUE(BuildContainerSpec(Jupyter(), host_ports, remapping).remap_user_namespace);
}

TEST(ContainerSpecTest, EachOwnersPodsShareANetworkOfTheirOwnUnlessTheHostSaysNot) {
  DesiredPod desired = Jupyter();
  desired.pod.owner_id = "usr_a";
  const std::vector<int> host_ports = {20001, 20002};
  EXPECT_EQ(BuildContainerSpec(desired, host_ports, Host()).network, "suanli-net-usr_a");
  desired.pod.owner_id = "usr_b";
  EXPECT_EQ(BuildContainerSpec(desired, host_ports, Host()).network, "suanli-net-usr_b");
  ContainerHost shared = Host();
  shared.owner_networks = false;
  EXPECT_EQ(BuildContainerSpec(desired, host_ports, shared).network, "")
      << "the engine's default network";
}

TEST(ContainerSpecTest, AVolumeOnTheSharedBackendIsItsDirectoryThereOthersNamedVolumes) {
  DesiredPod desired = Jupyter();
  desired.pod.volumes = {{"vol_local", "/data", false, false}, {"vol_team", "/team", true, true}};
  ContainerHost host = Host();
  host.shared_volume_dir = "/mnt/nfs/suanli/";
  const ContainerSpec spec = BuildContainerSpec(desired, std::vector<int>{20001, 20002}, host);
  ASSERT_EQ(spec.more_volumes.size(), 2U);
  EXPECT_EQ(spec.more_volumes[0].name, "suanli-vol_local");
  EXPECT_EQ(spec.more_volumes[0].host_path, "") << "a named engine volume";
  EXPECT_FALSE(spec.more_volumes[0].read_only);
  EXPECT_EQ(spec.more_volumes[1].host_path, "/mnt/nfs/suanli/suanli-vol_team");
  EXPECT_EQ(spec.more_volumes[1].mount_path, "/team");
  EXPECT_TRUE(spec.more_volumes[1].read_only);
}

TEST(ContainerSpecTest, EachPortIsPublishedAsTcpAndNamedInAVariable) {
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec = BuildContainerSpec(Jupyter(), host_ports, Host());
  ASSERT_EQ(spec.ports.size(), 2U);
  EXPECT_EQ(spec.ports[0].container_port, 8888);
  EXPECT_EQ(spec.ports[0].host_port, 20001);
  EXPECT_EQ(spec.ports[0].protocol, "tcp") << "the engine knows only tcp; http is the probe's";
  EXPECT_EQ(spec.ports[1].container_port, 22);
  EXPECT_EQ(spec.ports[1].host_port, 20002);
  EXPECT_EQ(EnvValue(spec, "SUANLI_PORT_8888"), "20001");
  EXPECT_EQ(EnvValue(spec, "SUANLI_PORT_22"), "20002");
}

TEST(ContainerSpecTest, SuanliVariablesFollowThePodsOwnEnv) {
  DesiredPod desired = Jupyter();
  desired.pod.env = {{"B_SETTING", "2"}, {"A_SETTING", "1"}};
  desired.ssh_keys = {"ssh-ed25519 AAAA one", "ssh-ed25519 BBBB two"};
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec = BuildContainerSpec(desired, host_ports, Host());
  EXPECT_EQ(spec.env, (Env{{"A_SETTING", "1"},
                           {"B_SETTING", "2"},
                           {"JUPYTER_TOKEN", "t0k"},
                           {"PUBLIC_KEY", "ssh-ed25519 AAAA one\nssh-ed25519 BBBB two\n"},
                           {"SUANLI_POD_ID", "pod_abc"},
                           {"SUANLI_PORT_22", "20002"},
                           {"SUANLI_PORT_8888", "20001"}}));
  EXPECT_EQ(AuthorizedKeys(desired), "ssh-ed25519 AAAA one\nssh-ed25519 BBBB two\n");
}

TEST(ContainerSpecTest, NoJupyterTokenOrPublicKeyWhenThePodHasNone) {
  DesiredPod desired = Jupyter();
  desired.pod.jupyter_token.clear();
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec = BuildContainerSpec(desired, host_ports, Host());
  EXPECT_EQ(EnvValue(spec, "JUPYTER_TOKEN"), std::nullopt);
  EXPECT_EQ(EnvValue(spec, "PUBLIC_KEY"), std::nullopt);
  EXPECT_EQ(EnvValue(spec, "SUANLI_POD_ID"), "pod_abc");
  EXPECT_EQ(AuthorizedKeys(desired), "");
}

TEST(ContainerSpecTest, TheEnvExpandsSuanliVariablesOnly) {
  DesiredPod desired = Jupyter();
  desired.pod.env = {{"URL", "http://host:${SUANLI_PORT_8888}/?token=${JUPYTER_TOKEN}"},
                     {"MODEL", "llama"},
                     {"ALIAS", "${MODEL} ${UNKNOWN} $HOME"}};
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec = BuildContainerSpec(desired, host_ports, Host());
  EXPECT_EQ(EnvValue(spec, "URL"), "http://host:20001/?token=t0k");
  EXPECT_EQ(EnvValue(spec, "ALIAS"), "${MODEL} ${UNKNOWN} $HOME")
      << "one env entry does not expand another; unknown names stay for a shell";
}

TEST(ContainerSpecTest, TheCommandExpandsSuanliVariablesAndThePodsEnv) {
  DesiredPod desired = Jupyter();
  desired.pod.env = {{"MODEL", "llama-${SUANLI_POD_ID}"}};
  desired.pod.command = {"serve",   "--model",          "${MODEL}", "--port=${SUANLI_PORT_8888}",
                         "--token", "${JUPYTER_TOKEN}", "${HOME}"};
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec = BuildContainerSpec(desired, host_ports, Host());
  EXPECT_EQ(spec.command, (std::vector<std::string>{"serve", "--model", "llama-pod_abc",
                                                    "--port=20001", "--token", "t0k", "${HOME}"}));
}

TEST(ContainerSpecTest, AnEnvEntryOverridesASuanliVariable) {
  DesiredPod desired = Jupyter();
  desired.pod.env = {{"JUPYTER_TOKEN", "mine"}, {"SUANLI_PORT_22", "2222"}};
  desired.pod.command = {"jupyter", "--token=${JUPYTER_TOKEN}", "--ssh=${SUANLI_PORT_22}"};
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec = BuildContainerSpec(desired, host_ports, Host());
  EXPECT_EQ(EnvValue(spec, "JUPYTER_TOKEN"), "mine");
  EXPECT_EQ(EnvValue(spec, "SUANLI_PORT_22"), "2222");
  EXPECT_EQ(spec.command, (std::vector<std::string>{"jupyter", "--token=mine", "--ssh=2222"}));
  EXPECT_EQ(spec.ports[1].host_port, 20002) << "the published port is still the one picked";
}

TEST(ContainerSpecTest, AVolumeOnlyWithASizeAndAMountPath) {
  DesiredPod desired = Jupyter();
  const std::vector<int> host_ports = {20001, 20002};
  desired.pod.volume_mount_path = "/workspace";
  EXPECT_EQ(BuildContainerSpec(desired, host_ports, Host()).volume_name, "")
      << "volume_gb 0: no volume";
  desired.pod.volume_gb = 20;
  desired.pod.volume_mount_path.clear();
  EXPECT_EQ(BuildContainerSpec(desired, host_ports, Host()).volume_name, "");
  desired.pod.volume_mount_path = "/workspace";
  const ContainerSpec spec = BuildContainerSpec(desired, host_ports, Host());
  EXPECT_EQ(spec.volume_name, "suanli-pod_abc");
  EXPECT_EQ(spec.volume_mount_path, "/workspace");
}

TEST(ContainerSpecTest, APodWithoutGpusGetsNone) {
  const std::vector<Gpu> gpus = Gpus(false);
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec = BuildContainerSpec(Jupyter(), host_ports, Host(gpus, GpuAccess::kCdi));
  EXPECT_EQ(spec.gpu_access, GpuAccess::kNone);
  EXPECT_TRUE(spec.gpu_ids.empty());
  EXPECT_EQ(EnvValue(spec, "SUANLI_GPUS"), std::nullopt);
}

TEST(ContainerSpecTest, SimulatedGpusAreNamedButNoDeviceIsAttached) {
  DesiredPod desired = Jupyter();
  desired.pod.gpu_indices = {1, 3};
  const std::vector<Gpu> gpus = Gpus(true);
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec = BuildContainerSpec(desired, host_ports, Host(gpus, GpuAccess::kCdi));
  EXPECT_EQ(EnvValue(spec, "SUANLI_GPUS"), "1,3");
  EXPECT_EQ(EnvValue(spec, "SUANLI_GPUS_SIMULATED"), "1");
  EXPECT_EQ(EnvValue(spec, "NVIDIA_VISIBLE_DEVICES"), "void");
  EXPECT_EQ(spec.gpu_access, GpuAccess::kNone);
  EXPECT_TRUE(spec.gpu_ids.empty());
}

TEST(ContainerSpecTest, CdiGetsTheIndicesOfThePodsGpus) {
  DesiredPod desired = Jupyter();
  desired.pod.gpu_indices = {2, 0};
  const std::vector<Gpu> gpus = Gpus(false);
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec = BuildContainerSpec(desired, host_ports, Host(gpus, GpuAccess::kCdi));
  EXPECT_EQ(spec.gpu_access, GpuAccess::kCdi);
  EXPECT_EQ(spec.gpu_ids, (std::vector<std::string>{"2", "0"}));
  EXPECT_EQ(EnvValue(spec, "SUANLI_GPUS"), "2,0");
  EXPECT_EQ(EnvValue(spec, "SUANLI_GPUS_SIMULATED"), std::nullopt);
  EXPECT_EQ(EnvValue(spec, "NVIDIA_VISIBLE_DEVICES"), std::nullopt);
}

TEST(ContainerSpecTest, DeviceRequestsGetTheUuidsOfThePodsGpus) {
  DesiredPod desired = Jupyter();
  desired.pod.gpu_indices = {2, 0};
  const std::vector<Gpu> gpus = Gpus(false);
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec =
      BuildContainerSpec(desired, host_ports, Host(gpus, GpuAccess::kDeviceRequests));
  EXPECT_EQ(spec.gpu_access, GpuAccess::kDeviceRequests);
  EXPECT_EQ(spec.gpu_ids, (std::vector<std::string>{"GPU-2", "GPU-0"}));
  EXPECT_EQ(EnvValue(spec, "SUANLI_GPUS"), "2,0");
}

TEST(ContainerSpecTest, AGpuIndexTheInventoryLacksIsNotAUuid) {
  DesiredPod desired = Jupyter();
  desired.pod.gpu_indices = {1, 7};
  const std::vector<Gpu> gpus = Gpus(false);
  const std::vector<int> host_ports = {20001, 20002};
  EXPECT_EQ(BuildContainerSpec(desired, host_ports, Host(gpus, GpuAccess::kDeviceRequests)).gpu_ids,
            (std::vector<std::string>{"GPU-1"}));
  EXPECT_EQ(BuildContainerSpec(desired, host_ports, Host(gpus, GpuAccess::kCdi)).gpu_ids,
            (std::vector<std::string>{"1", "7"}))
      << "CDI names the index, and the engine refuses the one it lacks";
  desired.pod.gpu_indices = {7};
  EXPECT_EQ(
      EnvValue(BuildContainerSpec(desired, host_ports, Host(gpus, GpuAccess::kCdi)), "SUANLI_GPUS"),
      std::nullopt)
      << "no GPU of the inventory: none at all";
}

TEST(ContainerSpecTest, AShareIsToldItsPartAndMpsItsLimits) {
  DesiredPod desired = Jupyter();
  desired.pod.gpu_indices = {1};
  desired.pod.gpu_milli = 250;
  std::vector<Gpu> gpus = Gpus(false);
  for (Gpu& gpu : gpus) gpu.memory_gb = 24;
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec spec = BuildContainerSpec(desired, host_ports, Host(gpus, GpuAccess::kCdi));
  EXPECT_EQ(spec.gpu_ids, (std::vector<std::string>{"1"}));  // the whole device, shared
  EXPECT_EQ(EnvValue(spec, "SUANLI_GPU_SHARE"), "0.25");
  EXPECT_EQ(EnvValue(spec, "SUANLI_GPU_MEMORY_MIB"), "6144");
  EXPECT_EQ(EnvValue(spec, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "25");
  EXPECT_EQ(EnvValue(spec, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=6144M");

  desired.pod.gpu_milli = core::kMilliGpu;
  EXPECT_EQ(EnvValue(BuildContainerSpec(desired, host_ports, Host(gpus, GpuAccess::kCdi)),
                     "SUANLI_GPU_SHARE"),
            std::nullopt)
      << "a whole GPU has no share and no MPS limit";
}

TEST(ContainerSpecTest, AMigSliceGoesByItsCdiNameAndItsShareIsOfTheSlice) {
  DesiredPod desired = Jupyter();
  desired.pod.gpu_indices = {1};
  desired.pod.gpu_milli = 214;  // half of a 3g slice (428 of an A100)
  std::vector<Gpu> gpus = Gpus(false);
  gpus[1].uuid = "MIG-1";
  gpus[1].cdi_name = "0:2";
  gpus[1].mig_profile = "3g.40gb";
  gpus[1].capacity_milli = 428;
  gpus[1].memory_gb = 40;
  const std::vector<int> host_ports = {20001, 20002};
  const ContainerSpec cdi = BuildContainerSpec(desired, host_ports, Host(gpus, GpuAccess::kCdi));
  EXPECT_EQ(cdi.gpu_ids, (std::vector<std::string>{"0:2"}));
  EXPECT_EQ(EnvValue(cdi, "SUANLI_GPU_MIG_PROFILE"), "3g.40gb");
  EXPECT_EQ(EnvValue(cdi, "SUANLI_GPU_SHARE"), "0.214");
  EXPECT_EQ(EnvValue(cdi, "SUANLI_GPU_MEMORY_MIB"), "20480");  // half of the slice's 40 GB
  EXPECT_EQ(EnvValue(cdi, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "50");
  EXPECT_EQ(BuildContainerSpec(desired, host_ports, Host(gpus, GpuAccess::kDeviceRequests)).gpu_ids,
            (std::vector<std::string>{"MIG-1"}));
}

TEST(ContainerSpecDeathTest, OneHostPortPerPodPort) {
  const std::vector<int> one_port = {20001};
  EXPECT_DEATH((void)BuildContainerSpec(Jupyter(), one_port, Host()), "one host port per pod port");
}

}  // namespace
}  // namespace suanli::agent
