//===- GpuDescriptions.h - The GPUs tcc can plan for without one -*- C++ -*-===//
//
// cuDNN >= 9.8 chooses engines and builds execution plans for a GPU that is
// only described (a device-property descriptor, given as JSON), so
// `tcc compile --target=cuda --gpu=NAME` bakes its choices on a machine
// with no GPU. These are the built-in descriptions (docs/cuda.md says where
// their numbers come from). Plain C++: no cuDNN.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_GPUDESCRIPTIONS_H
#define TCC_RUNTIME_CUDA_GPUDESCRIPTIONS_H

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::cuda {

struct GpuDescription {
  const char *name;        ///< as --gpu spells it: "h100"
  const char *marketing;   ///< "NVIDIA H100 80GB HBM3 (SXM5)"
  int smVersion;           ///< compute capability as 10*major+minor: 90
  const char *cudnnJson;   ///< CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION
};

/// Every built-in GPU, in the order --help lists them.
const std::vector<GpuDescription> &builtinGpus();

/// The GPU `name` names: a built-in name (h100, h200, a100) or an
/// architecture (sm_80, sm_90, sm_90a: the built-in GPU of that
/// architecture). Null, with `error` saying which names exist, otherwise.
const GpuDescription *findGpu(const std::string &name, std::string &error);

/// "h100 | h200 | a100 | sm_80 | sm_90 | sm_90a", for help texts.
std::string gpuChoices();

/// The architecture tcc compiles an sm for: "90a" for sm 90 (Hopper's
/// architecture-specific features), else "80", "89", ...
inline std::string cudaArch(int sm) { return std::to_string(sm) + (sm == 90 ? "a" : ""); }

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_GPUDESCRIPTIONS_H
