//===- CudaBake.h - The cuda target's choices fixed at compile time -*- C++ -*-===//
//
// Before the step is planned, the cuda target fixes every convolution's
// cuDNN engine (cuDNN's heuristics for --gpu, or a `tcc tune` file given by
// --tuning-db) and the workspaces the memory plan places (docs/cuda.md,
// docs/tuning.md).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TOOLS_TCC_CUDABAKE_H
#define TCC_TOOLS_TCC_CUDABAKE_H

#include "tools/tcc/CompileOptions.h"

#include "mlir/IR/BuiltinOps.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace tcc {

/// The cuDNN engine of every convolution of the step, chosen for --gpu or
/// measured by 'tcc tune' (--tuning-db), as the module's tcc.cuda_target
/// attribute that bakes them into the cuda target's source, and the
/// workspaces of the convolutions and matmuls for the memory plan; `table`
/// (when not null) for --emit=conv-plans and the source tree. False with
/// `error`; warnings go to `facts`.
bool bakeCudaTarget(mlir::ModuleOp planned, const CompileOptions &options,
                    nlohmann::json *table, CompileFacts &facts, std::string &error);

} // namespace tcc

#endif // TCC_TOOLS_TCC_CUDABAKE_H
