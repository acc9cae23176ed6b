//===- ShapeChecks.h - Helpers of the tcc shape rules -----------*- C++ -*-===//
//
// Private to ir/: shared by the forward (TccShapeInference.cpp) and backward
// (TccGradShapeInference.cpp) ops' type inference.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_IR_SHAPECHECKS_H
#define TCC_IR_SHAPECHECKS_H

#include "ir/TccTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::tcc::shape {

inline std::string shapeStr(ArrayRef<int64_t> shape) { return formatShape(shape); }

inline std::string shapeStr(Value v) {
  return shapeStr(cast<ShapedType>(v.getType()).getShape());
}

inline ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

inline Type elementTypeOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// Bounds window attributes so that size arithmetic cannot overflow.
inline constexpr int64_t kMaxWindowAttr = int64_t(1) << 24;

/// Checks that a spatial attribute is a [h, w] pair with every entry at least
/// `min`.
inline LogicalResult checkPair(std::optional<Location> loc, StringRef name,
                        ArrayRef<int64_t> pair, int64_t min) {
  if (pair.size() != 2)
    return emitOptionalError(loc, "'", name, "' must have 2 entries [h, w], got ",
                             pair.size());
  for (int64_t v : pair)
    if (v < min || v > kMaxWindowAttr)
      return emitOptionalError(loc, "'", name, "' must be ",
                               min == 0 ? "non-negative" : "positive",
                               " and at most ", kMaxWindowAttr, ", got ",
                               shapeStr(pair));
  return success();
}

inline LogicalResult checkRank(std::optional<Location> loc, StringRef what, Value v,
                        ArrayRef<int64_t> ranks, StringRef layout) {
  int64_t rank = shapeOf(v).size();
  if (llvm::is_contained(ranks, rank))
    return success();
  return emitOptionalError(loc, what, " must be ", layout, ", got ",
                           shapeStr(v));
}

/// The ghost batches a batch norm over `batch` samples normalises one by one
/// (`ghostBatch` samples each; 0: the whole batch, one group), or failure
/// with an error.
inline FailureOr<int64_t> ghostBatchGroups(std::optional<Location> loc, int64_t batch,
                                           int64_t ghostBatch) {
  if (ghostBatch < 0 || (ghostBatch > 0 && batch % ghostBatch))
    return emitOptionalError(loc, "ghost_batch ", ghostBatch,
                             " must be 0 (whole batch) or divide the batch size ", batch);
  return ghostBatch ? batch / ghostBatch : 1;
}

/// A per-channel f32 vector [c] (normalisation parameters and statistics).
inline LogicalResult checkChannelVector(std::optional<Location> loc, StringRef what,
                                 Value v, ArrayRef<int64_t> expected) {
  if (!v)
    return success();
  if (shapeOf(v) != expected)
    return emitOptionalError(loc, what, " must have shape ", shapeStr(expected),
                             ", got ", shapeStr(v));
  if (!elementTypeOf(v).isF32())
    return emitOptionalError(loc, what, " must be f32, got ", v.getType());
  return success();
}

/// The `ranks` of a synchronised batch norm's ops: the processes whose
/// samples its statistics cover.
inline LogicalResult checkRanksAttr(std::optional<Location> loc, int64_t ranks) {
  if (ranks < 1)
    return emitOptionalError(loc, "ranks must be >= 1, got ", ranks);
  return success();
}

/// The optional bias of conv2d and linear: [out] of the input's element type.
inline LogicalResult checkBias(std::optional<Location> loc, Value bias, int64_t out,
                        Type elementType) {
  if (!bias)
    return success();
  if (shapeOf(bias) != ArrayRef<int64_t>{out})
    return emitOptionalError(loc, "bias must have shape [", out, "], got ",
                             shapeStr(bias));
  if (elementTypeOf(bias) != elementType)
    return emitOptionalError(loc, "bias element type ", elementTypeOf(bias),
                             " differs from the input's ", elementType);
  return success();
}

/// The span of a dilated window, dilation * (k - 1) + 1, or nullopt when it
/// overflows (shapes built by a pass are not verified yet when inferred).
inline std::optional<int64_t> dilatedExtent(int64_t dilation, int64_t k) {
  if (k < 1)
    return std::nullopt;
  return llvm::checkedMulAdd(dilation, k - 1, int64_t(1));
}

/// Output size of a sliding window of effective extent `extent` over `size`
/// padded by `pad` on both sides, as PyTorch's floor mode computes it.
/// The callers bound pad by checkPair and extent by the padded size first.
inline int64_t windowOutput(int64_t size, int64_t pad, int64_t extent,
                     int64_t stride) {
  return (size + 2 * pad - extent) / stride + 1;
}

/// Shared by the poolings: [N, C, H, W] in, [N, C, Ho, Wo] out.
inline LogicalResult inferPool(std::optional<Location> loc, Value input,
                        ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                        ArrayRef<int64_t> padding,
                        SmallVectorImpl<Type> &inferred) {
  if (failed(checkRank(loc, "input", input, {4}, "[N, C, H, W]")) ||
      failed(checkPair(loc, "kernel", kernel, 1)) ||
      failed(checkPair(loc, "stride", stride, 1)) ||
      failed(checkPair(loc, "padding", padding, 0)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(input);
  SmallVector<int64_t> out{in[0], in[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    if (2 * padding[i] > kernel[i])
      return emitOptionalError(loc, "padding ", shapeStr(padding),
                               " must be at most half the kernel ",
                               shapeStr(kernel));
    if (kernel[i] > in[2 + i] + 2 * padding[i])
      return emitOptionalError(loc, "kernel ", shapeStr(kernel),
                               " is larger than the padded input (input ",
                               shapeStr(input), ", padding ",
                               shapeStr(padding), ")");
    out[2 + i] = windowOutput(in[2 + i], padding[i], kernel[i], stride[i]);
  }
  inferred.push_back(RankedTensorType::get(out, elementTypeOf(input)));
  return success();
}

inline LogicalResult checkReduction(std::optional<Location> loc, StringRef reduction) {
  if (reduction == "mean" || reduction == "sum")
    return success();
  return emitOptionalError(loc, "reduction must be \"mean\" or \"sum\", got \"",
                           reduction, "\"");
}

/// The operands and attributes of cross_entropy and its backward op.
inline LogicalResult checkCrossEntropy(std::optional<Location> loc, Value logitsV,
                                       Value labelsV, double s,
                                       StringRef reduction) {
  ArrayRef<int64_t> logits = shapeOf(logitsV);
  ArrayRef<int64_t> labels = shapeOf(labelsV);
  if (logits.size() != 2)
    return emitOptionalError(loc, "logits must be [N, classes], got ",
                             shapeStr(logits));
  if (labels != ArrayRef<int64_t>{logits[0]})
    return emitOptionalError(loc, "labels must be [", logits[0],
                             "] to match logits ", shapeStr(logits), ", got ",
                             shapeStr(labels));
  if (!(s >= 0 && s < 1))
    return emitOptionalError(loc, "label_smoothing must be in [0, 1), got ", s);
  return checkReduction(loc, reduction);
}

inline Type scalarF32(MLIRContext *ctx) {
  return RankedTensorType::get({}, Float32Type::get(ctx));
}

} // namespace mlir::tcc::shape

#endif // TCC_IR_SHAPECHECKS_H
