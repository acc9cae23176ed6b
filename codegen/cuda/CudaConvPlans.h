//===- CudaConvPlans.h - The cuDNN engines baked into a cuda step -*- C++ -*-===//
//
// The cuda target fixes every convolution's cuDNN engine at compile time
// (docs/cuda.md): it collects the distinct convolution problems of the
// planned steps (codegen/cuda/StepProblems.h), asks cuDNN's heuristics for a
// described GPU, and keeps the first engine that builds. The choices go on
// the module as its `tcc.cuda_target` attribute, which the cuda target
// prints as the trainer's table; `--emit=conv-plans` prints it as JSON.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_CUDACONVPLANS_H
#define TCC_CODEGEN_CUDACONVPLANS_H

#include "codegen/cuda/StepProblems.h"
#include "runtime/cuda/ConvPlans.h"
#include "runtime/cuda/GpuDescriptions.h"
#include "runtime/cuda/TuningFile.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::tcc {

/// A convolution problem of the step and the engine chosen for it.
struct BakedStepConv {
  StepConv conv;
  ::tcc::cuda::ConvChoice choice;
};

/// Chooses the engine of every convolution of the planned `module` for
/// `gpu`: the measured one where `tuning` (checked against `gpu` and this
/// cuDNN by the caller) has the problem, cuDNN's heuristics otherwise.
/// False with `error` naming the conv, its nodes and the fix when one has
/// no engine, or when the tuning file's does not build.
bool bakeConvPlans(ModuleOp module, const ::tcc::cuda::GpuDescription &gpu,
                   int64_t workspaceLimit, const ::tcc::cuda::TuningFile *tuning,
                   std::vector<BakedStepConv> &baked, std::string &error);

/// Sets the module's `tcc.cuda_target` attribute: the GPU, the cuDNN
/// version, --allow-fallback, the workspace limit and every convolution's
/// engine with what the choice saw (the rows of --emit=conv-plans, format
/// tcc-conv-plans/1, docs/cuda.md), which the cuda target bakes into the
/// trainer (CudaTarget.cpp); and the workspace of every convolution (its
/// engine's), matmul (cuBLASLt's) and multi-block sum as the op's
/// `tcc.workspace` (#tcc.workspace<bytes = N>), for the memory plan to place.
void attachCudaTarget(ModuleOp module, const ::tcc::cuda::GpuDescription &gpu,
                      bool allowFallback, int64_t workspaceLimit,
                      const std::vector<BakedStepConv> &baked);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CUDACONVPLANS_H
