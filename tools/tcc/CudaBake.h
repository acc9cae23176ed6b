//===- CudaBake.h - The cuda target's choices fixed at compile time -*- C++ -*-===//
//
// Before the step is planned, the cuda target fixes every convolution's
// cuDNN engine (cuDNN's heuristics for --gpu, or a `tcc tune` file given by
// --tuning-db) and the workspaces the memory plan places; once it is
// planned (fusion has given matmuls their epilogues), the matmul algorithms
// the tuning file measured (docs/cuda.md, docs/tuning.md).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TOOLS_TCC_CUDABAKE_H
#define TCC_TOOLS_TCC_CUDABAKE_H

#include "tools/tcc/CompileOptions.h"

#include "runtime/cuda/GpuDescriptions.h"
#include "runtime/cuda/TuningFile.h"

#include "mlir/IR/BuiltinOps.h"

#include <nlohmann/json.hpp>

#include <string>

namespace tcc {

/// The choices, as the module's tcc.cuda_target attribute that bakes them
/// into the cuda target's source, and as `table` for --emit=conv-plans and
/// the source tree. Each part is false with `error`; warnings go to `facts`.
class CudaBake {
public:
  CudaBake(const CompileOptions &options, CompileFacts &facts)
      : options(options), facts(facts) {}

  /// Before planning: the --tuning-db file, the cuDNN engine of every
  /// convolution of the step, chosen for --gpu or measured, and the
  /// workspaces of the convolutions, matmuls and sums for the memory plan.
  bool beforePlanning(mlir::ModuleOp step, std::string &error);
  /// After planning (beforePlanning succeeded): the step's matmul problems, with the tuning file's
  /// algorithms where it has them.
  bool afterPlanning(mlir::ModuleOp planned, std::string &error);

  nlohmann::json table; ///< format tcc-conv-plans/1

private:
  const CompileOptions &options;
  CompileFacts &facts;
  const tcc::cuda::GpuDescription *gpu = nullptr; ///< --gpu's, found before planning
  tcc::cuda::TuningFile tuning;
  bool tuned = false; ///< whether `tuning` was read and is for this GPU
};

} // namespace tcc

#endif // TCC_TOOLS_TCC_CUDABAKE_H
