//===- TccGradShapeInference.cpp - Result types of tcc backward ops -------===//
//
// Backward ops are emitted by autodiff rather than written by users, but
// they are verified like any op: a wrong rule must fail here, not in a
// kernel.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeChecks.h"
#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::shape;

namespace {

LogicalResult checkShapeAttr(std::optional<Location> loc, StringRef name,
                             ArrayRef<int64_t> shape, size_t rank) {
  if (shape.size() != rank || !isSupportedShape(shape))
    return emitOptionalError(loc, "'", name, "' must be a rank-", rank,
                             " shape of positive dims, got ", shapeStr(shape));
  return success();
}

/// The gradient of a sliding-window op has the window op's output shape.
LogicalResult checkWindowGrad(std::optional<Location> loc, Value grad,
                              ArrayRef<int64_t> input, int64_t channels,
                              ArrayRef<int64_t> extent, ArrayRef<int64_t> stride,
                              ArrayRef<int64_t> padding) {
  SmallVector<int64_t> expected{input[0], channels, 0, 0};
  for (int i = 0; i < 2; ++i) {
    // input is a verified shape attribute and padding a checked pair; only
    // the extent (from an unverified weight type) may be out of range.
    if (extent[i] < 1 || extent[i] > input[2 + i] + 2 * padding[i])
      return emitOptionalError(loc, "the window (extent ", extent[i],
                               ") does not fit the padded input ",
                               shapeStr(input));
    expected[2 + i] = windowOutput(input[2 + i], padding[i], extent[i], stride[i]);
  }
  if (shapeOf(grad) != ArrayRef<int64_t>(expected))
    return emitOptionalError(loc, "grad must have the forward result's shape ",
                             shapeStr(expected), ", got ", shapeStr(grad));
  return success();
}

LogicalResult checkSameShape(std::optional<Location> loc, StringRef a, Value va,
                             StringRef b, Value vb) {
  if (shapeOf(va) != shapeOf(vb))
    return emitOptionalError(loc, a, " ", shapeStr(va), " and ", b, " ",
                             shapeStr(vb), " must have one shape");
  return success();
}

LogicalResult checkConvAttrs(std::optional<Location> loc, ArrayRef<int64_t> stride,
                             ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                             int64_t groups) {
  if (failed(checkPair(loc, "stride", stride, 1)) ||
      failed(checkPair(loc, "padding", padding, 0)) ||
      failed(checkPair(loc, "dilation", dilation, 1)))
    return failure();
  if (groups < 1)
    return emitOptionalError(loc, "groups must be positive, got ", groups);
  return success();
}

} // namespace

LogicalResult Conv2dBackwardDataOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  Value grad = adaptor.getGrad(), weight = adaptor.getWeight();
  ArrayRef<int64_t> in = adaptor.getInputShape();
  if (failed(checkRank(loc, "grad", grad, {4}, "[N, O, Ho, Wo]")) ||
      failed(checkRank(loc, "weight", weight, {4}, "[O, C/groups, kH, kW]")) ||
      failed(checkShapeAttr(loc, "input_shape", in, 4)) ||
      failed(checkConvAttrs(loc, adaptor.getStride(), adaptor.getPadding(),
                            adaptor.getDilation(), adaptor.getGroups())))
    return failure();
  ArrayRef<int64_t> w = shapeOf(weight);
  // I64Attr reads back as uint64_t; checkConvAttrs made it positive.
  int64_t groups = static_cast<int64_t>(adaptor.getGroups());
  if (llvm::checkedMul(w[1], groups) != in[1] || w[0] % groups)
    return emitOptionalError(loc, "weight ", shapeStr(weight), " with groups ",
                             adaptor.getGroups(), " does not fit input_shape ",
                             shapeStr(in));
  SmallVector<int64_t> extent;
  for (int i = 0; i < 2; ++i)
    extent.push_back(dilatedExtent(adaptor.getDilation()[i], w[2 + i]).value_or(-1));
  if (failed(checkWindowGrad(loc, grad, in, w[0], extent, adaptor.getStride(),
                             adaptor.getPadding())))
    return failure();
  inferred.push_back(RankedTensorType::get(in, elementTypeOf(grad)));
  return success();
}

LogicalResult Conv2dBackwardFilterOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  Value grad = adaptor.getGrad(), input = adaptor.getInput();
  ArrayRef<int64_t> kernel = adaptor.getKernel();
  if (failed(checkRank(loc, "grad", grad, {4}, "[N, O, Ho, Wo]")) ||
      failed(checkRank(loc, "input", input, {4}, "[N, C, H, W]")) ||
      failed(checkPair(loc, "kernel", kernel, 1)) ||
      failed(checkConvAttrs(loc, adaptor.getStride(), adaptor.getPadding(),
                            adaptor.getDilation(), adaptor.getGroups())))
    return failure();
  ArrayRef<int64_t> in = shapeOf(input);
  int64_t groups = adaptor.getGroups(), out = shapeOf(grad)[1];
  if (in[1] % groups || out % groups)
    return emitOptionalError(loc, "groups ", groups,
                             " must divide the input channels (", in[1],
                             ") and the output channels (", out, ")");
  SmallVector<int64_t> extent;
  for (int i = 0; i < 2; ++i)
    extent.push_back(dilatedExtent(adaptor.getDilation()[i], kernel[i]).value_or(-1));
  if (failed(checkWindowGrad(loc, grad, in, out, extent, adaptor.getStride(),
                             adaptor.getPadding())))
    return failure();
  inferred.push_back(RankedTensorType::get(
      {out, in[1] / groups, kernel[0], kernel[1]}, elementTypeOf(grad)));
  return success();
}

LogicalResult LinearBackwardDataOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> g = shapeOf(adaptor.getGrad()), w = shapeOf(adaptor.getWeight());
  if (g.size() < 2 || w.size() != 2 || g.back() != w[0])
    return emitOptionalError(loc, "grad ", shapeStr(g), " and weight ",
                             shapeStr(w), " do not fit [..., O] x [O, I]");
  SmallVector<int64_t> out(g);
  out.back() = w[1];
  inferred.push_back(RankedTensorType::get(out, elementTypeOf(adaptor.getGrad())));
  return success();
}

LogicalResult LinearBackwardWeightOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> g = shapeOf(adaptor.getGrad()), x = shapeOf(adaptor.getInput());
  if (g.size() < 2 || g.size() != x.size() || g.drop_back() != x.drop_back())
    return emitOptionalError(loc, "grad ", shapeStr(g), " and input ",
                             shapeStr(x), " must agree on the leading dims");
  inferred.push_back(RankedTensorType::get({g.back(), x.back()},
                                           elementTypeOf(adaptor.getGrad())));
  return success();
}

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  SmallVector<int64_t> out;
  int64_t previous = -1;
  for (int64_t axis : axes) {
    if (axis <= previous || axis >= static_cast<int64_t>(in.size()))
      return emitOptionalError(loc, "axes ", shapeStr(axes),
                               " must be strictly increasing dims of ",
                               shapeStr(in));
    previous = axis;
  }
  for (int64_t i = 0, e = in.size(); i < e; ++i)
    if (!llvm::is_contained(axes, i))
      out.push_back(in[i]);
  inferred.push_back(RankedTensorType::get(out, elementTypeOf(adaptor.getInput())));
  return success();
}

/// Shared by the normalisation backward ops: `paramShape` is the shape of the
/// scale and shift, `statsShape` that of the saved statistics.
static LogicalResult inferNormGrad(std::optional<Location> loc, Value grad,
                                   Value input, Value weight, Value mean,
                                   Value invstd, ArrayRef<int64_t> paramShape,
                                   ArrayRef<int64_t> statsShape,
                                   SmallVectorImpl<Type> &inferred) {
  if (failed(checkSameShape(loc, "grad", grad, "input", input)) ||
      failed(checkChannelVector(loc, "weight", weight, paramShape)) ||
      failed(checkChannelVector(loc, "saved_mean", mean, statsShape)) ||
      failed(checkChannelVector(loc, "saved_invstd", invstd, statsShape)))
    return failure();
  Type param = RankedTensorType::get(paramShape, Float32Type::get(grad.getContext()));
  inferred.append({grad.getType(), param, param});
  return success();
}

LogicalResult BatchNormBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput();
  if (failed(checkRank(loc, "input", input, {2, 4}, "[N, C] or [N, C, H, W]")))
    return failure();
  ArrayRef<int64_t> in = shapeOf(input);
  FailureOr<int64_t> groups = ghostBatchGroups(loc, in[0], adaptor.getGhostBatch());
  if (failed(groups))
    return failure();
  return inferNormGrad(loc, adaptor.getGrad(), input, adaptor.getWeight(),
                       adaptor.getSavedMean(), adaptor.getSavedInvstd(), {in[1]},
                       {*groups, in[1]}, inferred);
}

LogicalResult BatchNormBackwardSumsOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput();
  if (failed(checkRank(loc, "input", input, {2, 4}, "[N, C] or [N, C, H, W]")))
    return failure();
  int64_t c = shapeOf(input)[1];
  SmallVector<Type> grads;
  if (failed(inferNormGrad(loc, adaptor.getGrad(), input, Value(), adaptor.getSavedMean(),
                           adaptor.getSavedInvstd(), {c}, {1, c}, grads)))
    return failure();
  inferred.append({RankedTensorType::get({2, c}, Float64Type::get(ctx)), grads[1], grads[2]});
  return success();
}

LogicalResult BatchNormBackwardInputOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput();
  if (failed(checkRank(loc, "input", input, {2, 4}, "[N, C] or [N, C, H, W]")))
    return failure();
  int64_t c = shapeOf(input)[1];
  if (failed(checkRanksAttr(loc, adaptor.getRanks())))
    return failure();
  if (shapeOf(adaptor.getSums()) != ArrayRef<int64_t>{2, c})
    return emitOptionalError(loc, "sums must have shape [2, ", c, "], got ",
                             shapeStr(adaptor.getSums()));
  SmallVector<Type> grads;
  if (failed(inferNormGrad(loc, adaptor.getGrad(), input, adaptor.getWeight(),
                           adaptor.getSavedMean(), adaptor.getSavedInvstd(), {c}, {1, c},
                           grads)))
    return failure();
  inferred.push_back(grads[0]);
  return success();
}

LogicalResult LayerNormBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  int64_t k = adaptor.getNormalizedDims(), rank = in.size();
  if (k < 1 || k >= rank)
    return emitOptionalError(loc, "normalized_dims must be in [1, ", rank - 1,
                             "] for input ", shapeStr(in), ", got ", k);
  return inferNormGrad(loc, adaptor.getGrad(), adaptor.getInput(),
                       adaptor.getWeight(), adaptor.getSavedMean(),
                       adaptor.getSavedInvstd(), in.take_back(k),
                       in.drop_back(k), inferred);
}

LogicalResult MaxPool2dBackwardOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  SmallVector<Type> forward;
  if (failed(inferPool(loc, adaptor.getInput(), adaptor.getKernel(),
                       adaptor.getStride(), adaptor.getPadding(), forward)))
    return failure();
  if (forward.front() != adaptor.getGrad().getType())
    return emitOptionalError(loc, "grad must have the forward result's type ",
                             forward.front(), ", got ", adaptor.getGrad().getType());
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult AvgPool2dBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = adaptor.getInputShape();
  if (failed(checkShapeAttr(loc, "input_shape", in, 4)) ||
      failed(checkPair(loc, "kernel", adaptor.getKernel(), 1)) ||
      failed(checkPair(loc, "stride", adaptor.getStride(), 1)) ||
      failed(checkPair(loc, "padding", adaptor.getPadding(), 0)) ||
      failed(checkWindowGrad(loc, adaptor.getGrad(), in, in[1],
                             adaptor.getKernel(), adaptor.getStride(),
                             adaptor.getPadding())))
    return failure();
  inferred.push_back(RankedTensorType::get(in, elementTypeOf(adaptor.getGrad())));
  return success();
}

LogicalResult ChannelMulBackwardGateOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  if (in.size() < 3 || adaptor.getGrad().getType() != adaptor.getInput().getType())
    return emitOptionalError(loc, "grad and input must be one type of rank 3 or more, got ",
                             shapeStr(adaptor.getGrad()), " and ", shapeStr(adaptor.getInput()));
  inferred.push_back(RankedTensorType::get(in.take_front(2), elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult GlobalAvgPoolBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = adaptor.getInputShape();
  if (failed(checkShapeAttr(loc, "input_shape", in, 4)))
    return failure();
  if (shapeOf(adaptor.getGrad()) != in.take_front(2))
    return emitOptionalError(loc, "grad must be [N, C] = ",
                             shapeStr(in.take_front(2)), ", got ",
                             shapeStr(adaptor.getGrad()));
  inferred.push_back(RankedTensorType::get(in, elementTypeOf(adaptor.getGrad())));
  return success();
}

LogicalResult GlobalMaxPoolBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput();
  if (failed(checkRank(loc, "input", input, {4}, "[N, C, H, W]")))
    return failure();
  if (shapeOf(adaptor.getGrad()) != shapeOf(input).take_front(2))
    return emitOptionalError(loc, "grad must be [N, C] = ",
                             shapeStr(shapeOf(input).take_front(2)), ", got ",
                             shapeStr(adaptor.getGrad()));
  inferred.push_back(input.getType());
  return success();
}

LogicalResult SliceBackwardOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> shape(shapeOf(adaptor.getGrad()));
  int64_t axis = adaptor.getAxis(), offset = adaptor.getOffset(),
          extent = adaptor.getExtent();
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    return emitOptionalError(loc, "axis ", axis, " is out of range for ",
                             shapeStr(shape));
  if (offset < 0 || offset > extent - shape[axis])
    return emitOptionalError(loc, "grad ", shapeStr(shape), " placed at ", offset,
                             " does not fit in extent ", extent, " of dim ", axis);
  shape[axis] = extent;
  inferred.push_back(RankedTensorType::get(shape, elementTypeOf(adaptor.getGrad())));
  return success();
}

static LogicalResult inferSoftmaxGrad(std::optional<Location> loc, Value grad,
                                      Value result, int64_t axis,
                                      SmallVectorImpl<Type> &inferred) {
  if (grad.getType() != result.getType())
    return emitOptionalError(loc, "grad and result must have one type, got ",
                             grad.getType(), " and ", result.getType());
  if (axis < 0 || axis >= static_cast<int64_t>(shapeOf(grad).size()))
    return emitOptionalError(loc, "axis ", axis, " is out of range");
  inferred.push_back(grad.getType());
  return success();
}

LogicalResult SoftmaxBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  return inferSoftmaxGrad(loc, adaptor.getGrad(), adaptor.getResultValue(),
                          adaptor.getAxis(), inferred);
}

LogicalResult LogSoftmaxBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  return inferSoftmaxGrad(loc, adaptor.getGrad(), adaptor.getResultValue(),
                          adaptor.getAxis(), inferred);
}

LogicalResult CrossEntropyBackwardOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  if (failed(checkCrossEntropy(loc, adaptor.getLogits(), adaptor.getLabels(),
                               adaptor.getLabelSmoothing().convertToDouble(),
                               adaptor.getReduction())))
    return failure();
  inferred.push_back(adaptor.getLogits().getType());
  return success();
}

LogicalResult MseLossBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInput().getType() != adaptor.getTarget().getType())
    return emitOptionalError(loc, "input and target must have one type, got ",
                             adaptor.getInput().getType(), " and ",
                             adaptor.getTarget().getType());
  if (failed(checkReduction(loc, adaptor.getReduction())))
    return failure();
  inferred.push_back(adaptor.getInput().getType());
  return success();
}
