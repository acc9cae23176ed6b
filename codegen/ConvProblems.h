//===- ConvProblems.h - The convolution problems of a step -------*- C++ -*-===//
//
// The convolutions of a planned step as cuDNN sees them
// (runtime/cuda/ConvProblem.h): the compiler chooses an engine for each
// distinct problem (codegen/cuda/CudaConvPlans.h) and the cuda target finds
// each op's row of the baked table by its problem (CudaOps.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_CONVPROBLEMS_H
#define TCC_CODEGEN_CONVPROBLEMS_H

#include "runtime/cuda/ConvProblem.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::tcc {

/// The problem a conv2d, conv2d_backward_data or conv2d_backward_filter op
/// poses; failure when its tensors differ in element type.
FailureOr<::tcc::cuda::ConvProblem> convProblemOf(Operation *op);

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

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CONVPROBLEMS_H
