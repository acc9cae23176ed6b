//===- StepProblems.h - The library calls of a step, as problems -*- C++ -*-===//
//
// The convolutions of a planned step as cuDNN sees them
// (runtime/cuda/ConvProblem.h): the compiler chooses an engine for each
// distinct problem (codegen/cuda/CudaConvPlans.h) and the cuda target finds
// each op's row of the baked table by its problem (CudaOps.cpp). Its
// matmuls as cuBLASLt sees them (runtime/cuda/MatmulProblem.h): what
// `tcc tune` times and a tuning file's algorithms are baked for.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_STEPPROBLEMS_H
#define TCC_CODEGEN_STEPPROBLEMS_H

#include "runtime/cuda/ConvProblem.h"
#include "runtime/cuda/MatmulProblem.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tcc {

/// The problem a conv2d, conv2d_backward_data or conv2d_backward_filter op
/// poses; failure when its tensors differ in element type. A conv2d's bias
/// is its epilogue, with the ReLU of a conv_epilogue group it is in (in a
/// conv_statistics group, the statistics are the epilogue): the
/// step bakes an engine for that problem, or for the one without an
/// epilogue where cuDNN has none (bakedConvProblem).
FailureOr<::tcc::cuda::ConvProblem> convProblemOf(Operation *op);

/// The row of the baked table (its problem `keys`) that runs `problem`: the
/// problem itself, or, where cuDNN had no engine for its epilogue, the
/// convolution without it; none when neither is there.
std::optional<::tcc::cuda::ConvProblem>
bakedConvProblem(const ::tcc::cuda::ConvProblem &problem, ArrayRef<std::string> keys);

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

/// "'conv1', 'conv2'": the model nodes that pose a problem, for messages;
/// "the step" when none is known.
std::string quotedNodes(const std::vector<std::string> &nodes);

/// What a tcc.linear's epilogue applies: a matmul_epilogue group's ReLU, or
/// its tanh GELU, with the linear's result stored too (gelu_aux) where the
/// group yields it (the GELU's backward reads it); none outside a group.
::tcc::cuda::MatmulActivation epilogueActivationOf(Operation *linear);

/// The problem of a tcc.linear (a matmul_epilogue group's adds its activation),
/// tcc.linear_backward_data, tcc.linear_backward_weight or (f32) tcc.matmul
/// op, as the cuda trainer poses it; failure for another op, or one whose
/// tensors are not all f32, bf16 or f16 of one type.
FailureOr<::tcc::cuda::MatmulProblem> matmulProblemOf(Operation *op);

/// Every matmul problem `op` poses: matmulProblemOf's, or an attention's
/// head products (runtime/cuda/AttentionProducts.h); none for other ops.
std::vector<::tcc::cuda::MatmulProblem> matmulProblemsOf(Operation *op);

/// A distinct matmul problem of the step and the model nodes that pose it.
struct StepMatmul {
  ::tcc::cuda::MatmulProblem problem;
  std::vector<std::string> nodes;
};

/// The distinct matmul problems of the steps of a planned module, in the
/// order the steps first pose them.
void collectMatmulProblems(ModuleOp module, std::vector<StepMatmul> &matmuls);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_STEPPROBLEMS_H
