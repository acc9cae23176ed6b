//===- TccTokenLoss.cpp - Shapes and gradient of the per-token loss -------===//
//
// The shape rules of token_cross_entropy, its backward op and
// count_correct_tokens, and the loss's vector-Jacobian product. See
// TccTokenLossOps.td for the semantics.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeChecks.h"
#include "ir/TccOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::shape;

namespace {

/// logits [N, T, K] and labels [N, T].
LogicalResult checkTokenLogits(std::optional<Location> loc, Value logits, Value labels) {
  if (failed(checkRank(loc, "logits", logits, {3}, "[N, T, classes]")))
    return failure();
  ArrayRef<int64_t> l = shapeOf(logits);
  if (shapeOf(labels) != l.drop_back())
    return emitOptionalError(loc, "labels must be ", shapeStr(l.drop_back()),
                             " to match logits ", shapeStr(l), ", got ", shapeStr(labels));
  return success();
}

LogicalResult checkTokenLoss(std::optional<Location> loc, Value logits, Value labels,
                             double smoothing, StringRef reduction) {
  if (failed(checkTokenLogits(loc, logits, labels)))
    return failure();
  if (!(smoothing >= 0 && smoothing < 1))
    return emitOptionalError(loc, "label_smoothing must be in [0, 1), got ", smoothing);
  return checkReduction(loc, reduction);
}

} // namespace

LogicalResult TokenCrossEntropyOp::inferReturnTypes(MLIRContext *ctx,
                                                    std::optional<Location> loc,
                                                    Adaptor adaptor,
                                                    SmallVectorImpl<Type> &inferred) {
  if (failed(checkTokenLoss(loc, adaptor.getLogits(), adaptor.getLabels(),
                            adaptor.getLabelSmoothing().convertToDouble(),
                            adaptor.getReduction())))
    return failure();
  inferred.push_back(scalarF32(ctx));
  return success();
}

LogicalResult TokenCrossEntropyBackwardOp::inferReturnTypes(MLIRContext *,
                                                            std::optional<Location> loc,
                                                            Adaptor adaptor,
                                                            SmallVectorImpl<Type> &inferred) {
  if (failed(checkTokenLoss(loc, adaptor.getLogits(), adaptor.getLabels(),
                            adaptor.getLabelSmoothing().convertToDouble(),
                            adaptor.getReduction())))
    return failure();
  inferred.push_back(adaptor.getLogits().getType());
  return success();
}

LogicalResult CountCorrectTokensOp::inferReturnTypes(MLIRContext *ctx,
                                                     std::optional<Location> loc,
                                                     Adaptor adaptor,
                                                     SmallVectorImpl<Type> &inferred) {
  if (failed(checkTokenLogits(loc, adaptor.getLogits(), adaptor.getLabels())))
    return failure();
  inferred.push_back(RankedTensorType::get({}, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult TokenCrossEntropyOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                                  SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  operandGrads[0] = b.create<TokenCrossEntropyBackwardOp>(
      getLoc(), resultGrads[0], getLogits(), getLabels(), getIgnoreIndexAttr(),
      getLabelSmoothingAttr(), getReductionAttr());
  return success();
}
