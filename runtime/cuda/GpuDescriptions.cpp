//===- GpuDescriptions.cpp - The built-in GPU descriptions ----------------===//
//
// The fields are cudaDeviceProp's, named as cuDNN's device-property JSON
// names them (cuDNN 9.19 requires every one). The values are the boards'
// published figures: SM count, L2 size, shared memory per block (opt-in)
// and clocks are what cuDNN's heuristics use; memory size and PCI id are
// not (docs/cuda.md).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/GpuDescriptions.h"

namespace tcc::cuda {

namespace {

#define TCC_GPU_JSON(SMS, L2, SMEM_OPTIN, SM_KHZ, MEM_KHZ, MEM_BYTES, VER,     \
                     NAME)                                                     \
  "{\"deviceName\": \"" NAME "\", \"deviceVer\": " #VER                        \
  ", \"driverVer\": 13000, \"cudaDeviceId\": 0, \"pciDeviceId\": 0, "          \
  "\"multiProcessorCount\": " #SMS ", \"l2CacheSize\": " #L2                   \
  ", \"maxSharedMemoryPerBlock\": 49152, \"maxSharedMemoryPerBlockOptin\": "   \
  #SMEM_OPTIN ", \"reservedSharedMemoryPerBlock\": 1024, "                     \
  "\"regsPerBlock\": 65536, \"maxRegistersPerSM\": 65536, \"warpSize\": 32, "  \
  "\"maxThreadsPerBlock\": 1024, \"maxThreadsPerSM\": 2048, "                  \
  "\"maxCtasPerSM\": 32, \"maxGridSize\": [2147483647, 65535, 65535], "        \
  "\"maxBlockSize\": [1024, 1024, 64], \"smClockRateKHz\": " #SM_KHZ           \
  ", \"memClockRateKHz\": " #MEM_KHZ ", \"totalGlobalMem\": " #MEM_BYTES       \
  ", \"isTccDriver\": 0, \"supportCoopLaunch\": 1}"

const std::vector<GpuDescription> kGpus = {
    {"h100", "NVIDIA H100 80GB HBM3 (SXM5)", 90,
     TCC_GPU_JSON(132, 52428800, 232448, 1980000, 2619000, 85520809984, 900,
                  "NVIDIA H100 80GB HBM3")},
    {"h200", "NVIDIA H200 141GB HBM3e (SXM)", 90,
     TCC_GPU_JSON(132, 62914560, 232448, 1980000, 3201000, 150754820096, 900,
                  "NVIDIA H200")},
    {"a100", "NVIDIA A100 80GB (SXM4)", 80,
     TCC_GPU_JSON(108, 41943040, 166912, 1410000, 1593000, 85198045184, 800,
                  "NVIDIA A100-SXM4-80GB")},
};

#undef TCC_GPU_JSON

/// Architectures --gpu accepts, and the built-in GPU that stands for each.
struct Architecture {
  const char *name, *gpu;
};
const Architecture kArchitectures[] = {
    {"sm_80", "a100"}, {"sm_90", "h100"}, {"sm_90a", "h100"}};

} // namespace

const std::vector<GpuDescription> &builtinGpus() { return kGpus; }

const GpuDescription *findGpu(const std::string &name, std::string &error) {
  std::string gpuName = name;
  for (const Architecture &arch : kArchitectures)
    if (name == arch.name)
      gpuName = arch.gpu;
  for (const GpuDescription &gpu : kGpus)
    if (gpuName == gpu.name)
      return &gpu;
  error = "unknown GPU '" + name + "'; tcc has descriptions of " + gpuChoices();
  return nullptr;
}

std::string gpuChoices() {
  std::string text;
  for (const GpuDescription &gpu : kGpus)
    text += (text.empty() ? "" : " | ") + std::string(gpu.name);
  for (const Architecture &arch : kArchitectures)
    text += " | " + std::string(arch.name);
  return text;
}

} // namespace tcc::cuda
