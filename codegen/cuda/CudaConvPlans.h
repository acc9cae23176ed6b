//===- CudaConvPlans.h - The cuDNN engines baked into a cuda step -*- C++ -*-===//
//
// The cuda target fixes every convolution's cuDNN engine at compile time
// (docs/cuda.md): it collects the distinct convolution problems of the
// planned @train_step and @eval_step (forward, backward-data,
// backward-filter), asks cuDNN's heuristics for a described GPU, and keeps
// the first engine that builds. `tcc compile --target=cuda --emit=conv-plans`
// prints the table; the generated trainer bakes it in.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_CUDACONVPLANS_H
#define TCC_CODEGEN_CUDACONVPLANS_H

#include "runtime/cuda/ConvProblem.h"
#include "runtime/cuda/GpuDescriptions.h"

#include "mlir/IR/BuiltinOps.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace mlir::tcc {

/// A distinct convolution problem of the step and the model nodes whose ops
/// pose it (a layer's forward in the train and eval step is one problem).
struct StepConv {
  ::tcc::cuda::ConvProblem problem;
  std::vector<std::string> nodes;
};

/// The distinct convolution problems of @train_step and @eval_step of a
/// planned module, in the order the steps first pose them. False with
/// `error` on an op whose tensors differ in element type.
bool collectConvProblems(ModuleOp module, std::vector<StepConv> &convs,
                         std::string &error);

/// Chooses the engine of every convolution of the planned `module` for
/// `gpu` and returns the table (format tcc-conv-plans/1, docs/cuda.md).
/// False with `error` naming the conv, its nodes and the fix when one has
/// no engine.
bool bakeConvPlans(ModuleOp module, const ::tcc::cuda::GpuDescription &gpu,
                   int64_t workspaceLimit, nlohmann::json &table,
                   std::string &error);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CUDACONVPLANS_H
