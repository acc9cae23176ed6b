//===- ConvPlans.h - cuDNN engines for the step's convolutions --*- C++ -*-===//
//
// A convolution problem becomes a cuDNN graph (the frontend's graph API) the
// same way at compile time and at run time; only what picks the engine
// differs. At compile time cuDNN's heuristics choose for a described GPU
// (GpuDescriptions.h), with no GPU present, and the choice (engine id and
// knob values) is baked into the trainer; at run time the trainer rebuilds
// exactly that plan and never runs heuristics.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_CONVPLANS_H
#define TCC_RUNTIME_CUDA_CONVPLANS_H

#include "runtime/cuda/ConvProblem.h"
#include "runtime/cuda/GpuDescriptions.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tcc::cuda {

/// One engine configuration: what is baked per conv problem.
struct ConvEngine {
  int64_t engine = -1; ///< cuDNN's global engine index
  /// (cudnnBackendKnobType_t, value), sorted by knob: cuDNN's own numbering,
  /// as in the plan's name.
  std::vector<std::pair<int64_t, int64_t>> knobs;
  int64_t workspaceBytes = 0;
  /// "eng62_k2=0_k13=1...": cuDNN's name of the plan, for messages.
  std::string name;
  /// What cuDNN says of its numerics: "TENSOR_CORE", "WINOGRAD", ...
  std::vector<std::string> numericNotes;
};

/// What the compile-time choice saw besides its answer.
struct ConvChoice {
  ConvEngine engine;
  int candidates = 0;  ///< engine configurations the heuristics offered
  int rank = 0;        ///< the position of the chosen one among them
  /// Its time on the tuned GPU when a tuning file chose it, else negative.
  double tunedMicroseconds = -1;
  /// A tuning file's engine that cuDNN also built for the description (the
  /// heuristics' choices always are).
  bool builtWithoutGpu = true;
  /// The CUTLASS kernel baked in place of cuDNN's engine, where the tuning
  /// file measured it faster (CutlassKernel.h); empty for cuDNN's. Then
  /// `engine` is the cuDNN engine it replaced, and cudnnMicroseconds that
  /// engine's time.
  std::string cutlass;
  int64_t cutlassWorkspaceBytes = 0;
  double cudnnMicroseconds = -1;

  /// What the trainer runs: the CUTLASS kernel's name, or the engine's.
  const std::string &bakedName() const { return cutlass.empty() ? engine.name : cutlass; }
  /// The workspace the memory plan gives each op of the problem.
  int64_t bakedWorkspaceBytes() const {
    return cutlass.empty() ? engine.workspaceBytes : cutlassWorkspaceBytes;
  }
};

/// The largest cuDNN workspace a conv's engine may ask for, unless the
/// caller says otherwise: engines that want more are passed over.
constexpr int64_t kDefaultConvWorkspaceLimit = int64_t(256) << 20;

/// Chooses the engine for `problem` on `gpu` as cuDNN's heuristics (mode A)
/// rank them: the first that builds and fits `workspaceLimit`. Needs no
/// GPU. False with `error` (no engine at all, or a problem cuDNN refuses).
bool chooseConvEngine(const ConvProblem &problem, const GpuDescription &gpu,
                      int64_t workspaceLimit, ConvChoice &choice,
                      std::string &error);

/// Every engine configuration `tcc tune` would time for `problem` on the
/// described `gpu` (ConvGraph.h, buildAllCandidates), without a GPU: what
/// `tcc-tune --list` prints. False with `error` when none builds.
bool listConvEngines(const ConvProblem &problem, const GpuDescription &gpu,
                     int64_t workspaceLimit, std::vector<ConvEngine> &engines,
                     std::string &error);

/// Builds the plan of a baked `engine` for `problem` on `gpu`, as the
/// trainer will, without a GPU; sets its workspace. False with `error` when
/// this cuDNN cannot build it, or builds another configuration than
/// `engine.name` says.
bool rebuildConvPlan(const ConvProblem &problem, const GpuDescription &gpu,
                     const ConvEngine &engine, int64_t &workspaceBytes,
                     std::string &error);

/// Reads "eng45_k2=5_k5=4_k14=4" (cuDNN's name of an engine configuration:
/// the engine's global index, then backend knob type = value) into
/// `engine`. False if the name has another form.
bool parsePlanName(const std::string &name, ConvEngine &engine);

/// cuDNN's version as cudnnGetVersion() gives it (91900 for 9.19.0).
int64_t cudnnVersion();

/// "9.19.0" for 91900.
inline std::string cudnnVersionName(int64_t version) {
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_CONVPLANS_H
