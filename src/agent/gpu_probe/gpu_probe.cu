// suanli-gpu-probe: measures each visible GPU's memory bandwidth and dense tensor throughput, and
// prints one JSON object per GPU on its own line (src/agent/gpu_probe.h parses them):
//
//   {"index":0,"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-...","compute_capability":"9.0",
//    "memory_gb":79.2,"memory_bandwidth_gbps":2900.5,"fp16_tflops":610.2,"bf16_tflops":605.0,
//    "fp8_tflops":1020.4}
//
// bf16_tflops is absent before compute capability 8.0, fp8_tflops before 8.9 (and when built by
// nvcc older than 12.4). Errors: a message on stderr and exit 1; no CUDA device (or no driver):
// "no CUDA device: ..." and exit 2.
//
// How it measures (docs/agent.md, "Measured calibration"):
// - bandwidth: a copy kernel over two buffers far larger than L2, counting bytes read plus bytes
//   written, in decimal GB/s as datasheets count them;
// - tensor throughput: every warp of a full grid issues back-to-back matrix multiply-accumulates
//   on operands held in registers (WMMA 16x16x16 for fp16 and bf16, PTX mma.sync m16n8k32 e4m3
//   for fp8), FP32 accumulate, so the figure is what the tensor cores deliver at this card's
//   clocks and power limit, not a GEMM library's tiling efficiency. Our own kernel because cuBLAS
//   may not be installed where the agent runs, and its choice of kernels changes between versions.
// Each figure is the best of a few timed runs (cudaEvents) after a warm-up.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace {

// PTX's fp8 mma.sync needs PTX ISA 8.4 (CUDA 12.4); an older nvcc builds the probe without it.
#if __CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 4)
#define SUANLI_PROBE_FP8 1
#else
#define SUANLI_PROBE_FP8 0
#endif

constexpr int kExitError = 1;
constexpr int kExitNoDevice = 2;
constexpr int kTimedRuns = 3;
constexpr double kTargetRunMs = 100;  // each timed tensor run
constexpr int kThreadsPerBlock = 256;
constexpr int kWmmaChains = 4;  // independent accumulators per warp, to hide the MMA latency
constexpr int kFp8Chains = 8;
constexpr double kFlopsPerMma = 2.0 * 16 * 16 * 16;  // m16n16k16 and m16n8k32 alike

[[noreturn]] void Fail(int device, const char* what, cudaError_t error) {
  std::fprintf(stderr, "suanli-gpu-probe: GPU %d: %s failed: %s\n", device, what,
               cudaGetErrorString(error));
  std::exit(kExitError);
}

void Check(int device, const char* what, cudaError_t error) {
  if (error != cudaSuccess) Fail(device, what, error);
}

// ---- Memory bandwidth ----

__global__ void CopyKernel(const float4* __restrict__ in, float4* __restrict__ out, size_t count) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    out[i] = in[i];
  }
}

// Milliseconds of the fastest of kTimedRuns runs of `launch` (after one warm-up).
template <typename Launch>
float BestMs(int device, Launch launch) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  Check(device, "cudaEventCreate", cudaEventCreate(&start));
  Check(device, "cudaEventCreate", cudaEventCreate(&stop));
  launch();
  Check(device, "the warm-up run", cudaDeviceSynchronize());
  float best = 0;
  for (int run = 0; run < kTimedRuns; ++run) {
    Check(device, "cudaEventRecord", cudaEventRecord(start));
    launch();
    Check(device, "a kernel launch", cudaGetLastError());
    Check(device, "cudaEventRecord", cudaEventRecord(stop));
    Check(device, "a timed run", cudaEventSynchronize(stop));
    float ms = 0;
    Check(device, "cudaEventElapsedTime", cudaEventElapsedTime(&ms, start, stop));
    if (run == 0 || ms < best) best = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best;
}

double MeasureBandwidthGbps(int device, const cudaDeviceProp& prop) {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  Check(device, "cudaMemGetInfo", cudaMemGetInfo(&free_bytes, &total_bytes));
  const size_t l2 = prop.l2CacheSize > 0 ? static_cast<size_t>(prop.l2CacheSize) : (64u << 20);
  // Each buffer at least 512 MiB and 8 times L2, so neither fits in the cache; at most a third
  // of the free memory.
  size_t bytes = std::max<size_t>(size_t{512} << 20, 8 * l2);
  bytes = std::min(bytes, free_bytes / 3) & ~size_t{0xFFFF};
  if (bytes < 4 * l2) {
    std::fprintf(stderr,
                 "suanli-gpu-probe: GPU %d: only %zu MiB free; the bandwidth test needs two "
                 "buffers of %zu MiB (4 times L2): run it when the GPU is idle\n",
                 device, free_bytes >> 20, (4 * l2) >> 20);
    std::exit(kExitError);
  }
  void* in = nullptr;
  void* out = nullptr;
  Check(device, "cudaMalloc", cudaMalloc(&in, bytes));
  Check(device, "cudaMalloc", cudaMalloc(&out, bytes));
  Check(device, "cudaMemset", cudaMemset(in, 1, bytes));
  Check(device, "cudaMemset", cudaMemset(out, 0, bytes));
  const size_t count = bytes / sizeof(float4);
  const int blocks =
      prop.multiProcessorCount * std::max(1, prop.maxThreadsPerMultiProcessor / kThreadsPerBlock);
  constexpr int kCopiesPerRun = 10;
  const float ms = BestMs(device, [&] {
    for (int copy = 0; copy < kCopiesPerRun; ++copy) {
      CopyKernel<<<blocks, kThreadsPerBlock>>>(static_cast<const float4*>(in),
                                               static_cast<float4*>(out), count);
    }
  });
  cudaFree(in);
  cudaFree(out);
  return 2.0 * static_cast<double>(bytes) * kCopiesPerRun / (ms * 1e-3) / 1e9;
}

// ---- Tensor throughput ----

template <typename T>
__device__ T ToElement(float value) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half(value);
  } else {
    return __float2bfloat16(value);
  }
}

// Each warp multiplies one 16x16 A by one 16x16 B into kWmmaChains accumulators, `iterations`
// times each. `out` holds every warp's accumulators, so nothing is optimised away.
template <typename T>
__device__ void WmmaLoop(float* out, int iterations) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kWmmaChains];
  for (int i = 0; i < a.num_elements; ++i) {
    a.x[i] = ToElement<T>(0.01f * static_cast<float>((threadIdx.x + i) % 7 + 1));
  }
  for (int i = 0; i < b.num_elements; ++i) {
    b.x[i] = ToElement<T>(0.01f * static_cast<float>((threadIdx.x * 3 + i) % 5 + 1));
  }
#pragma unroll
  for (int chain = 0; chain < kWmmaChains; ++chain) wmma::fill_fragment(acc[chain], 0.0f);
  for (int iteration = 0; iteration < iterations; ++iteration) {
#pragma unroll
    for (int chain = 0; chain < kWmmaChains; ++chain) wmma::mma_sync(acc[chain], a, b, acc[chain]);
  }
  const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
#pragma unroll
  for (int chain = 0; chain < kWmmaChains; ++chain) {
    wmma::store_matrix_sync(out + (warp * kWmmaChains + chain) * 256, acc[chain], 16,
                            wmma::mem_row_major);
  }
}

__global__ void Fp16Kernel(float* out, int iterations) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  WmmaLoop<__half>(out, iterations);
#endif
}

// bf16 tensor cores start at compute capability 8.0; the host never launches this before.
__global__ void Bf16Kernel(float* out, int iterations) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  WmmaLoop<__nv_bfloat16>(out, iterations);
#endif
}

// FP8 (e4m3 x e4m3, FP32 accumulate) through PTX mma.sync m16n8k32, which WMMA does not offer;
// compute capability 8.9 and later. Each thread holds its share of A (16 bytes), B (8 bytes) and
// kFp8Chains accumulators of 4 floats.
__global__ void Fp8Kernel(float* out, int iterations) {
#if SUANLI_PROBE_FP8 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  // 0x38 is 1.0 in e4m3 and 0x30 is 0.5; vary the bytes so the data is not all one value.
  const uint32_t seed = (threadIdx.x % 3) << 3;
  const uint32_t a0 = 0x30383038u ^ seed, a1 = 0x38303830u ^ seed, a2 = 0x30303838u,
                 a3 = 0x38383030u;
  const uint32_t b0 = 0x2830382Cu ^ seed, b1 = 0x302C2838u;
  float acc[kFp8Chains][4] = {};
  for (int iteration = 0; iteration < iterations; ++iteration) {
#pragma unroll
    for (int chain = 0; chain < kFp8Chains; ++chain) {
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
          "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
          : "+f"(acc[chain][0]), "+f"(acc[chain][1]), "+f"(acc[chain][2]), "+f"(acc[chain][3])
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
  }
  const size_t thread = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
#pragma unroll
  for (int chain = 0; chain < kFp8Chains; ++chain) {
    for (int i = 0; i < 4; ++i) out[(thread * kFp8Chains + chain) * 4 + i] = acc[chain][i];
  }
#endif
}

// TFLOPS of `kernel`, whose every warp does `mmas_per_iteration` MMAs of kFlopsPerMma per
// iteration. The iteration count is scaled so a timed run takes about kTargetRunMs.
double MeasureTflops(int device, const cudaDeviceProp& prop, void (*kernel)(float*, int),
                     int mmas_per_iteration) {
  int blocks_per_sm = 0;
  Check(device, "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, kThreadsPerBlock, 0));
  const int blocks = prop.multiProcessorCount * std::max(1, std::min(blocks_per_sm, 4));
  const size_t warps = static_cast<size_t>(blocks) * kThreadsPerBlock / 32;
  float* out = nullptr;
  // Enough for either kernel: 32 threads x kFp8Chains x 4 floats = kWmmaChains x 256 floats.
  const size_t floats = warps * std::max(kWmmaChains * 256, 32 * kFp8Chains * 4);
  Check(device, "cudaMalloc", cudaMalloc(&out, floats * sizeof(float)));
  int iterations = 1024;
  float ms = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {  // scale up until a run is long enough to time
    ms = BestMs(device, [&] { kernel<<<blocks, kThreadsPerBlock>>>(out, iterations); });
    if (ms >= 0.5 * kTargetRunMs || iterations >= (1 << 26)) break;
    const double scaled = iterations * kTargetRunMs / std::max(ms, 0.01f);
    iterations = static_cast<int>(std::min(scaled, double{1 << 26}));
  }
  cudaFree(out);
  const double flops = static_cast<double>(warps) * iterations * mmas_per_iteration * kFlopsPerMma;
  return flops / (ms * 1e-3) / 1e12;
}

// ---- Output ----

std::string JsonString(const char* text) {
  std::string out = "\"";
  for (const char* c = text; *c != '\0'; ++c) {
    const unsigned char byte = static_cast<unsigned char>(*c);
    if (byte == '"' || byte == '\\') {
      out += '\\';
      out += *c;
    } else if (byte < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", byte);
      out += escaped;
    } else {
      out += *c;
    }
  }
  return out + "\"";
}

// nvidia-smi's form: GPU-8c1e55a2-4f1e-...
std::string UuidText(const cudaUUID_t& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof(hex), "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    text += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

void ProbeDevice(int device) {
  Check(device, "cudaSetDevice", cudaSetDevice(device));
  cudaDeviceProp prop{};
  Check(device, "cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, device));
  const int capability = prop.major * 10 + prop.minor;
  if (capability < 75) {
    std::fprintf(stderr,
                 "suanli-gpu-probe: GPU %d (%s) has compute capability %d.%d; the probe is built "
                 "for 7.5 and later\n",
                 device, prop.name, prop.major, prop.minor);
    std::exit(kExitError);
  }
  const double bandwidth = MeasureBandwidthGbps(device, prop);
  const double fp16 = MeasureTflops(device, prop, Fp16Kernel, kWmmaChains);
  std::string line = "{\"index\":" + std::to_string(device) + ",\"name\":" + JsonString(prop.name) +
                     ",\"uuid\":" + JsonString(UuidText(prop.uuid).c_str()) +
                     ",\"compute_capability\":\"" + std::to_string(prop.major) + "." +
                     std::to_string(prop.minor) + "\"";
  char number[64];
  std::snprintf(number, sizeof(number), ",\"memory_gb\":%.1f",
                static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
  line += number;
  std::snprintf(number, sizeof(number), ",\"memory_bandwidth_gbps\":%.1f", bandwidth);
  line += number;
  std::snprintf(number, sizeof(number), ",\"fp16_tflops\":%.1f", fp16);
  line += number;
  if (capability >= 80) {
    const double bf16 = MeasureTflops(device, prop, Bf16Kernel, kWmmaChains);
    std::snprintf(number, sizeof(number), ",\"bf16_tflops\":%.1f", bf16);
    line += number;
  }
  if (SUANLI_PROBE_FP8 && capability >= 89) {
    const double fp8 = MeasureTflops(device, prop, Fp8Kernel, kFp8Chains);
    std::snprintf(number, sizeof(number), ",\"fp8_tflops\":%.1f", fp8);
    line += number;
  }
  std::printf("%s}\n", line.c_str());
  std::fflush(stdout);
  cudaDeviceReset();  // frees this GPU's context before the next one is measured
}

}  // namespace

int main(int argc, char** argv) {
  int only_device = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      char* end = nullptr;
      const long device = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || device < 0 || device > 1023) {
        std::fprintf(stderr, "suanli-gpu-probe: --device takes a GPU index, got '%s'\n", argv[i]);
        return kExitError;
      }
      only_device = static_cast<int>(device);
    } else {
      std::fprintf(stderr,
                   "usage: suanli-gpu-probe [--device N]\n"
                   "Measures each GPU's memory bandwidth and fp16/bf16/fp8 tensor throughput and "
                   "prints one JSON object per GPU per line.\n");
      return std::strcmp(argv[i], "--help") == 0 ? 0 : kExitError;
    }
  }
  // Number GPUs as NVML and nvidia-smi do (PCI bus order), not fastest first.
  setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", /*overwrite=*/0);
  int count = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    std::fprintf(stderr, "no CUDA device: %s", cudaGetErrorString(error));
    if (error == cudaErrorInsufficientDriver) {
      std::fprintf(stderr,
                   " (no NVIDIA driver, or one too old for CUDA %d.%d, which this probe was built "
                   "with: update the driver, or build the probe with an older CUDA toolkit)",
                   CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    }
    std::fprintf(stderr, "\n");
    return kExitNoDevice;
  }
  if (count == 0) {
    std::fprintf(stderr, "no CUDA device: the driver sees none (CUDA_VISIBLE_DEVICES?)\n");
    return kExitNoDevice;
  }
  if (only_device >= count) {
    std::fprintf(stderr, "suanli-gpu-probe: --device %d: there are %d GPUs (0 to %d)\n",
                 only_device, count, count - 1);
    return kExitError;
  }
  for (int device = 0; device < count; ++device) {
    if (only_device < 0 || device == only_device) ProbeDevice(device);
  }
  return 0;
}
