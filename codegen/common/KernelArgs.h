//===- KernelArgs.h - An op's kernel arguments, built once ------*- C++ -*-===//
//
// The shape and geometry arguments of the kernels (runtime/kernels/) that
// an op runs with, as the kernels' own structs. The code generators print
// them (cpp()); the test interpreter of test/gradients passes them to the
// kernels directly. Both build them here, so what the generated code runs
// and what the gradient tests check cannot drift apart.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_KERNELARGS_H
#define TCC_CODEGEN_KERNELARGS_H

#include "ir/TccOps.h"

#include "runtime/kernels/Attention.h"
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Norm.h"
#include "runtime/kernels/Pool.h"

#include <optional>
#include <string>

namespace mlir::tcc::kernel_args {

namespace k = ::tcc::rt::kernels;

/// Conv2dShape{input, weight, stride, padding, dilation, groups} of each
/// convolution op: the forward's input and weight; backward-data's
/// input_shape and weight; backward-filter's input and result (the weight).
k::Conv2dShape conv2d(Conv2dOp op);
k::Conv2dShape conv2d(Conv2dBackwardDataOp op);
k::Conv2dShape conv2d(Conv2dBackwardFilterOp op);

/// Pool2dShape of the pooling ops' input (input_shape for avg-pool
/// backward).
k::Pool2dShape pool2d(MaxPool2dOp op);
k::Pool2dShape pool2d(MaxPool2dBackwardOp op);
k::Pool2dShape pool2d(AvgPool2dOp op);
k::Pool2dShape pool2d(AvgPool2dBackwardOp op);

/// BatchNormShape{n, c, h*w..., ghost batch} of the input (of an NHWC
/// input: {n*h*w, c, 1}, each sample h*w rows); inference normalises the
/// whole batch.
k::BatchNormShape batchNorm(BatchNormOp op);
k::BatchNormShape batchNorm(BatchNormInferenceOp op);
k::BatchNormShape batchNorm(BatchNormBackwardOp op);
k::BatchNormShape batchNorm(BatchNormApplyOp op);
k::BatchNormShape batchNorm(BatchNormSumsOp op);
k::BatchNormShape batchNorm(BatchNormBackwardSumsOp op);
k::BatchNormShape batchNorm(BatchNormBackwardInputOp op);

/// AttentionShape of the attention ops, from their query, key and value.
k::AttentionShape attention(ScaledDotProductAttentionOp op);
k::AttentionShape attention(ScaledDotProductAttentionBackwardOp op);

/// A tensor viewed as [outer, axis, inner] around dimension `axis`.
struct Around {
  int64_t outer, axis, inner;
};
Around around(ArrayRef<int64_t> dims, int64_t axis);

/// The input of a reduce_sum that sums every dim but one (a bias's
/// gradient) around the dim it keeps (an NHWC input summed to its
/// channels: [n*h*w, c, 1]); nullopt for other reductions.
std::optional<Around> keptAxis(ReduceSumOp op);

/// The C++ expressions that make each struct, as the cpu target prints them.
std::string cpp(const k::Conv2dShape &shape);
std::string cpp(const k::Pool2dShape &shape);
std::string cpp(const k::BatchNormShape &shape);
std::string cpp(const Around &around);
std::string cpp(const k::AttentionShape &shape);

} // namespace mlir::tcc::kernel_args

#endif // TCC_CODEGEN_KERNELARGS_H
