//===- TccShapeInference.cpp - Result types of tcc ops --------------------===//
//
// Every check that a result shape depends on lives here, so the verifier (via
// InferTypeOpInterface) and the frontend (which reports these messages with
// the model.json node name) see one set of rules. Messages name the expected
// and the actual shapes.
//
//===----------------------------------------------------------------------===//

#include "ir/TccOps.h"
#include "ir/ShapeChecks.h"

#include <cmath>
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::shape;


//===----------------------------------------------------------------------===//
// Convolution and linear
//===----------------------------------------------------------------------===//

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput(), weight = adaptor.getWeight();
  if (failed(checkRank(loc, "input", input, {4}, "[N, C, H, W]")) ||
      failed(checkRank(loc, "weight", weight, {4}, "[O, C/groups, kH, kW]")) ||
      failed(checkPair(loc, "stride", adaptor.getStride(), 1)) ||
      failed(checkPair(loc, "padding", adaptor.getPadding(), 0)) ||
      failed(checkPair(loc, "dilation", adaptor.getDilation(), 1)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(input), w = shapeOf(weight);
  int64_t groups = adaptor.getGroups();
  if (groups < 1)
    return emitOptionalError(loc, "groups must be positive, got ", groups);
  if (in[1] % groups || w[0] % groups)
    return emitOptionalError(loc, "groups ", groups,
                             " must divide both the input channels (", in[1],
                             ") and the output channels (", w[0], ")");
  std::optional<int64_t> expected = llvm::checkedMul(w[1], groups);
  if (expected != in[1])
    return emitOptionalError(loc, "weight ", shapeStr(weight), " with groups ",
                             groups, " expects ",
                             expected ? std::to_string(*expected) : "over 2^63",
                             " input channels, got input ", shapeStr(input));
  if (elementTypeOf(input) != elementTypeOf(weight))
    return emitOptionalError(loc, "input and weight element types differ: ",
                             elementTypeOf(input), " vs ", elementTypeOf(weight));
  if (failed(checkBias(loc, adaptor.getBias(), w[0], elementTypeOf(input))))
    return failure();
  SmallVector<int64_t> out{in[0], w[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    int64_t pad = adaptor.getPadding()[i];
    std::optional<int64_t> extent =
        dilatedExtent(adaptor.getDilation()[i], w[2 + i]);
    if (!extent || *extent > in[2 + i] + 2 * pad)
      return emitOptionalError(loc, "kernel [", w[2], ", ", w[3],
                               "] (dilated extent ",
                               extent ? std::to_string(*extent) : "over 2^63",
                               ") is larger than the padded input (input ",
                               shapeStr(input), ", padding ",
                               shapeStr(adaptor.getPadding()), ")");
    out[2 + i] = windowOutput(in[2 + i], pad, *extent, adaptor.getStride()[i]);
  }
  inferred.push_back(RankedTensorType::get(out, elementTypeOf(input)));
  return success();
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput(), weight = adaptor.getWeight();
  ArrayRef<int64_t> in = shapeOf(input), w = shapeOf(weight);
  if (in.size() < 2)
    return emitOptionalError(loc, "input must be [N, ..., in_features], got ",
                             shapeStr(input));
  if (w.size() != 2)
    return emitOptionalError(loc, "weight must be [out_features, in_features], got ",
                             shapeStr(weight));
  if (w[1] != in.back())
    return emitOptionalError(loc, "weight ", shapeStr(weight), " expects ", w[1],
                             " input features, got input ", shapeStr(input));
  if (elementTypeOf(input) != elementTypeOf(weight))
    return emitOptionalError(loc, "input and weight element types differ: ",
                             elementTypeOf(input), " vs ", elementTypeOf(weight));
  if (failed(checkBias(loc, adaptor.getBias(), w[0], elementTypeOf(input))))
    return failure();
  SmallVector<int64_t> out(in);
  out.back() = w[0];
  inferred.push_back(RankedTensorType::get(out, elementTypeOf(input)));
  return success();
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
  ArrayRef<int64_t> a = shapeOf(lhs), b = shapeOf(rhs);
  if (a.size() < 3 || a.size() != b.size() || a.drop_back(2) != b.drop_back(2))
    return emitOptionalError(loc, "operands must be [N, ..., M, K] and [N, ..., K, P] with "
                                  "the same leading dims, got ",
                             shapeStr(lhs), " and ", shapeStr(rhs));
  bool ta = adaptor.getTransposeA(), tb = adaptor.getTransposeB();
  int64_t m = a[a.size() - (ta ? 1 : 2)], k = a[a.size() - (ta ? 2 : 1)];
  int64_t kb = b[b.size() - (tb ? 1 : 2)], p = b[b.size() - (tb ? 2 : 1)];
  if (k != kb)
    return emitOptionalError(loc, "inner dims differ: ", k, " of ", shapeStr(lhs),
                             ta ? " (transposed)" : "", " and ", kb, " of ", shapeStr(rhs),
                             tb ? " (transposed)" : "");
  if (elementTypeOf(lhs) != elementTypeOf(rhs))
    return emitOptionalError(loc, "operand element types differ: ", elementTypeOf(lhs),
                             " vs ", elementTypeOf(rhs));
  SmallVector<int64_t> out(a.drop_back(2));
  out.append({m, p});
  inferred.push_back(RankedTensorType::get(out, elementTypeOf(lhs)));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

/// A batch norm's optional statistics over all ranks: both sums or none,
/// [C] each, only for a norm over the whole batch; `ranks` > 1 only with them.
static LogicalResult checkSyncStatistics(std::optional<Location> loc, Value sum, Value sq,
                                         int64_t c, int64_t ghost, int64_t ranks) {
  if (failed(checkRanksAttr(loc, ranks)))
    return failure();
  if (static_cast<bool>(sum) != static_cast<bool>(sq))
    return emitOptionalError(loc, "statistics need both the sum and the squared deviations");
  if (!sum) {
    if (ranks != 1)
      return emitOptionalError(loc, "ranks ", ranks, " needs the statistics of those ranks");
    return success();
  }
  if (ghost != 0)
    return emitOptionalError(loc, "statistics over the ranks need ghost_batch 0 (a ghost "
                                  "batch stays within a rank), got ",
                             ghost);
  for (Value v : {sum, sq})
    if (shapeOf(v) != ArrayRef{c})
      return emitOptionalError(loc, "statistics must have shape [", c, "], got ",
                               shapeStr(v));
  return success();
}

/// Checks shared by the two batch-norm forms; returns the channel count.
static FailureOr<int64_t> checkBatchNorm(std::optional<Location> loc, Value input,
                                         Value weight, Value bias, Value mean,
                                         Value var, double eps) {
  if (failed(checkRank(loc, "input", input, {2, 4}, "[N, C] or [N, C, H, W]")))
    return failure();
  int64_t c = shapeOf(input)[1];
  if (failed(checkChannelVector(loc, "weight", weight, {c})) ||
      failed(checkChannelVector(loc, "bias", bias, {c})) ||
      failed(checkChannelVector(loc, "running_mean", mean, {c})) ||
      failed(checkChannelVector(loc, "running_var", var, {c})))
    return failure();
  if (!(eps > 0) || !std::isfinite(eps))
    return emitOptionalError(loc, "eps must be positive and finite, got ", eps);
  return c;
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput();
  FailureOr<int64_t> c = checkBatchNorm(
      loc, input, adaptor.getWeight(), adaptor.getBias(),
      adaptor.getRunningMean(), adaptor.getRunningVar(),
      adaptor.getEps().convertToDouble());
  if (failed(c))
    return failure();
  double momentum = adaptor.getMomentum().convertToDouble();
  if (!(momentum >= 0 && momentum <= 1))
    return emitOptionalError(loc, "momentum must be in [0, 1], got ", momentum);
  ArrayRef<int64_t> in = shapeOf(input);
  int64_t n = in[0], ghost = adaptor.getGhostBatch();
  FailureOr<int64_t> groups = ghostBatchGroups(loc, n, ghost);
  if (failed(groups))
    return failure();
  int64_t groupSize = n / *groups;
  std::optional<int64_t> perChannel = groupSize;
  for (int64_t d : in.drop_front(2))
    perChannel = perChannel ? llvm::checkedMul(*perChannel, d) : std::nullopt;
  if (!perChannel)
    return emitOptionalError(loc, "input ", shapeStr(input),
                             " has more than 2^63 values per channel");
  if (*perChannel < 2)
    return emitOptionalError(
        loc, "needs more than one value per channel in each (ghost) batch to "
             "compute a variance, got input ",
        shapeStr(input), ghost ? " with ghost_batch " : "",
        ghost ? std::to_string(ghost) : "");
  // Type inference may run before the default `ranks` is filled in.
  IntegerAttr ranks = adaptor.getRanksAttr();
  if (failed(checkSyncStatistics(loc, adaptor.getSum(), adaptor.getSquaredDeviations(), *c,
                                 ghost, ranks ? ranks.getInt() : 1)))
    return failure();
  Type f32 = Float32Type::get(ctx);
  Type stats = RankedTensorType::get({n / groupSize, *c}, f32);
  Type running = RankedTensorType::get({*c}, f32);
  inferred.append({input.getType(), stats, stats, running, running});
  return success();
}

LogicalResult BatchNormSumsOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput();
  if (failed(checkRank(loc, "input", input, {2, 4}, "[N, C] or [N, C, H, W]")))
    return failure();
  int64_t c = shapeOf(input)[1];
  if (failed(checkRanksAttr(loc, adaptor.getRanks())))
    return failure();
  if (Value centered = adaptor.getCentered(); centered && shapeOf(centered) != ArrayRef{c})
    return emitOptionalError(loc, "centered must have shape [", c, "], got ",
                             shapeStr(centered));
  inferred.push_back(RankedTensorType::get({c}, Float64Type::get(ctx)));
  return success();
}

LogicalResult BatchNormInferenceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  if (failed(checkBatchNorm(loc, adaptor.getInput(), adaptor.getWeight(),
                            adaptor.getBias(), adaptor.getRunningMean(),
                            adaptor.getRunningVar(),
                            adaptor.getEps().convertToDouble())))
    return failure();
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult BatchNormApplyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput();
  if (failed(checkRank(loc, "input", input, {2, 4}, "[N, C] or [N, C, H, W]")))
    return failure();
  ArrayRef<int64_t> in = shapeOf(input);
  FailureOr<int64_t> groups = ghostBatchGroups(loc, in[0], adaptor.getGhostBatch());
  if (failed(groups) ||
      failed(checkChannelVector(loc, "weight", adaptor.getWeight(), {in[1]})) ||
      failed(checkChannelVector(loc, "bias", adaptor.getBias(), {in[1]})) ||
      failed(checkChannelVector(loc, "saved_mean", adaptor.getSavedMean(), {*groups, in[1]})) ||
      failed(checkChannelVector(loc, "saved_invstd", adaptor.getSavedInvstd(),
                                {*groups, in[1]})))
    return failure();
  inferred.push_back(input.getType());
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput();
  ArrayRef<int64_t> in = shapeOf(input);
  int64_t k = adaptor.getNormalizedDims(), rank = in.size();
  if (rank < 2)
    return emitOptionalError(loc, "input must be [N, ...] with at least one "
                                  "dim to normalise, got ",
                             shapeStr(input));
  if (k < 1 || k >= rank)
    return emitOptionalError(loc, "normalized_dims must be in [1, ", rank - 1,
                             "] for input ", shapeStr(input), ", got ", k);
  ArrayRef<int64_t> normalized = in.take_back(k);
  if (failed(checkChannelVector(loc, "weight", adaptor.getWeight(), normalized)) ||
      failed(checkChannelVector(loc, "bias", adaptor.getBias(), normalized)))
    return failure();
  double eps = adaptor.getEps().convertToDouble();
  if (!(eps > 0) || !std::isfinite(eps))
    return emitOptionalError(loc, "eps must be positive and finite, got ", eps);
  Type stats = RankedTensorType::get(in.drop_back(k), Float32Type::get(ctx));
  inferred.append({input.getType(), stats, stats});
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferPool(loc, adaptor.getInput(), adaptor.getKernel(),
                   adaptor.getStride(), adaptor.getPadding(), inferred);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferPool(loc, adaptor.getInput(), adaptor.getKernel(),
                   adaptor.getStride(), adaptor.getPadding(), inferred);
}

static LogicalResult inferGlobalPool(std::optional<Location> loc, Value input,
                                     SmallVectorImpl<Type> &inferred) {
  if (failed(checkRank(loc, "input", input, {4}, "[N, C, H, W]")))
    return failure();
  ArrayRef<int64_t> in = shapeOf(input);
  inferred.push_back(RankedTensorType::get({in[0], in[1]}, elementTypeOf(input)));
  return success();
}

LogicalResult GlobalAvgPoolOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &inferred) {
  return inferGlobalPool(loc, adaptor.getInput(), inferred);
}

LogicalResult GlobalMaxPoolOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &inferred) {
  return inferGlobalPool(loc, adaptor.getInput(), inferred);
}

//===----------------------------------------------------------------------===//
// Binary elementwise
//===----------------------------------------------------------------------===//

static LogicalResult inferBinary(std::optional<Location> loc, Value lhs, Value rhs,
                                 SmallVectorImpl<Type> &inferred) {
  if (lhs.getType() != rhs.getType())
    return emitOptionalError(loc, "operands must have the same shape and "
                                  "element type, got ",
                             lhs.getType(), " (", shapeStr(lhs), ") and ",
                             rhs.getType(), " (", shapeStr(rhs), ")");
  inferred.push_back(lhs.getType());
  return success();
}

LogicalResult AddOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  return inferBinary(loc, adaptor.getLhs(), adaptor.getRhs(), inferred);
}

LogicalResult MulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  return inferBinary(loc, adaptor.getLhs(), adaptor.getRhs(), inferred);
}

LogicalResult ChannelMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  if (in.size() < 3 || shapeOf(adaptor.getGate()) != in.take_front(2) ||
      elementTypeOf(adaptor.getInput()) != elementTypeOf(adaptor.getGate()))
    return emitOptionalError(loc, "needs an input [N, C, ...] of rank 3 or more and a gate "
                                  "[N, C] of its element type, got ",
                             shapeStr(adaptor.getInput()), " and ",
                             shapeStr(adaptor.getGate()));
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult PadChannelsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> shape(shapeOf(adaptor.getInput()));
  if (shape.size() < 2)
    return emitOptionalError(loc, "pad_channels needs [N, C, ...], got ", shapeStr(shape));
  if (adaptor.getChannels() < shape[1])
    return emitOptionalError(loc, "pad_channels to ", adaptor.getChannels(),
                             " channels, fewer than the input's ", shape[1]);
  shape[1] = adaptor.getChannels();
  inferred.push_back(RankedTensorType::get(shape, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.size() < 2)
    return emitOptionalError(loc, "needs at least 2 inputs, got ", inputs.size());
  SmallVector<int64_t> out(shapeOf(inputs[0]));
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= static_cast<int64_t>(out.size()))
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             out.size());
  for (Value v : inputs.drop_front()) {
    ArrayRef<int64_t> s = shapeOf(v);
    bool agree = s.size() == out.size() && elementTypeOf(v) == elementTypeOf(inputs[0]);
    for (size_t i = 0; agree && i < s.size(); ++i)
      agree = static_cast<int64_t>(i) == axis || s[i] == out[i];
    if (!agree)
      return emitOptionalError(loc, "inputs must agree on every dim but axis ",
                               axis, " and on the element type, got ",
                               inputs[0].getType(), " and ", v.getType());
    std::optional<int64_t> sum = llvm::checkedAdd(out[axis], s[axis]);
    if (!sum)
      return emitOptionalError(loc, "the inputs' dims ", axis,
                               " add up to more than 2^63");
    out[axis] = *sum;
  }
  inferred.push_back(RankedTensorType::get(out, elementTypeOf(inputs[0])));
  return success();
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  if (in.size() < 2)
    return emitOptionalError(loc, "input must be [N, ...] with at least one "
                                  "dim after the batch, got ",
                             shapeStr(in));
  std::optional<int64_t> features = 1;
  for (int64_t d : in.drop_front())
    features = features ? llvm::checkedMul(*features, d) : std::nullopt;
  if (!features)
    return emitOptionalError(loc, "input ", shapeStr(in),
                             " has more than 2^63 values per sample");
  inferred.push_back(RankedTensorType::get({in[0], *features},
                                           elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  Value input = adaptor.getInput();
  ArrayRef<int64_t> shape = adaptor.getShape();
  int64_t inCount = cast<ShapedType>(input.getType()).getNumElements();
  int64_t outCount = 1;
  for (int64_t d : shape) {
    if (d < 1 || __builtin_mul_overflow(outCount, d, &outCount))
      return emitOptionalError(loc, "shape ", shapeStr(shape),
                               " must have positive dims and fit in 64 bits");
  }
  if (inCount != outCount)
    return emitOptionalError(loc, "cannot reshape ", shapeStr(input), " (",
                             inCount, " elements) to ", shapeStr(shape), " (",
                             outCount, " elements)");
  inferred.push_back(RankedTensorType::get(shape, elementTypeOf(input)));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> shape(shapeOf(adaptor.getInput()));
  int64_t axis = adaptor.getAxis(), offset = adaptor.getOffset(),
          size = adaptor.getSize();
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    return emitOptionalError(loc, "axis ", axis, " is out of range for ",
                             shapeStr(shape));
  if (offset < 0 || size < 1 || size > shape[axis] || offset > shape[axis] - size)
    return emitOptionalError(loc, "slice [", offset, ", ", offset, " + ", size,
                             ") is not inside dim ", axis, " of ",
                             shapeStr(shape));
  shape[axis] = size;
  inferred.push_back(RankedTensorType::get(shape, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult ExpandOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> shape(shapeOf(adaptor.getInput()));
  int64_t axis = adaptor.getAxis(), size = adaptor.getSize();
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) || shape[axis] != 1)
    return emitOptionalError(loc, "axis ", axis, " must be a dim of size 1 of ",
                             shapeStr(shape));
  if (size < 1)
    return emitOptionalError(loc, "size must be positive, got ", size);
  shape[axis] = size;
  inferred.push_back(RankedTensorType::get(shape, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  SmallVector<bool> seen(in.size(), false);
  SmallVector<int64_t> out;
  if (perm.size() != in.size())
    return emitOptionalError(loc, "perm ", shapeStr(perm), " must have one entry per dim of ",
                             shapeStr(adaptor.getInput()));
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[p])
      return emitOptionalError(loc, "perm ", shapeStr(perm),
                               " is not a permutation of the ", in.size(),
                               " dims of ", shapeStr(adaptor.getInput()));
    seen[p] = true;
    out.push_back(in[p]);
  }
  inferred.push_back(RankedTensorType::get(out, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult CastOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  Type element = adaptor.getElementType();
  if (!element.isF32() && !element.isF16() && !element.isBF16() &&
      !element.isSignlessInteger(64) && !element.isUnsignedInteger(8))
    return emitOptionalError(loc, "element_type must be f32, f16, bf16, i64 "
                                  "or ui8, got ",
                             element);
  inferred.push_back(RankedTensorType::get(shapeOf(adaptor.getInput()), element));
  return success();
}

//===----------------------------------------------------------------------===//
// Regularisation and probabilities
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  double p = adaptor.getP().convertToDouble();
  if (!(p >= 0 && p < 1))
    return emitOptionalError(loc, "p must be in [0, 1), got ", p);
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

static LogicalResult inferSoftmaxLike(std::optional<Location> loc, Value input,
                                      int64_t axis,
                                      SmallVectorImpl<Type> &inferred) {
  int64_t rank = shapeOf(input).size();
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "axis ", axis, " is out of range for input ",
                             shapeStr(input));
  inferred.push_back(input.getType());
  return success();
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferSoftmaxLike(loc, adaptor.getInput(), adaptor.getAxis(), inferred);
}

LogicalResult LogSoftmaxOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  return inferSoftmaxLike(loc, adaptor.getInput(), adaptor.getAxis(), inferred);
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *ctx,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &inferred) {
  if (failed(checkCrossEntropy(loc, adaptor.getLogits(), adaptor.getLabels(),
                               adaptor.getLabelSmoothing().convertToDouble(),
                               adaptor.getReduction())))
    return failure();
  inferred.push_back(scalarF32(ctx));
  return success();
}

LogicalResult MseLossOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInput().getType() != adaptor.getTarget().getType())
    return emitOptionalError(loc, "input and target must have one type, got ",
                             adaptor.getInput().getType(), " and ",
                             adaptor.getTarget().getType());
  if (failed(checkReduction(loc, adaptor.getReduction())))
    return failure();
  inferred.push_back(scalarF32(ctx));
  return success();
}

LogicalResult OneHotOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> labels = shapeOf(adaptor.getLabels());
  if (labels.size() != 1)
    return emitOptionalError(loc, "labels must be [N], got ", shapeStr(labels));
  int64_t classes = adaptor.getClasses();
  if (classes < 1 || classes > kMaxDim)
    return emitOptionalError(loc, "classes must be in [1, ", kMaxDim, "], got ",
                             classes);
  inferred.push_back(
      RankedTensorType::get({labels[0], classes}, Float32Type::get(ctx)));
  return success();
}
