//===- TccTrainOps.cpp - Types and verifiers of the training-step ops -----===//

#include "ir/ShapeChecks.h"
#include "ir/TccOps.h"
#include "runtime/common/Schedule.h"

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::shape;

namespace {

/// Optimizer state has the parameter's type; so has the gradient.
LogicalResult checkLikeParam(std::optional<Location> loc, Value param,
                             StringRef name, Value v) {
  if (v && v.getType() != param.getType())
    return emitOptionalError(loc, name, " must have the parameter's type ",
                             param.getType(), ", got ", v.getType());
  return success();
}

} // namespace

LogicalResult LrScheduleOp::inferReturnTypes(MLIRContext *ctx,
                                             std::optional<Location>, Adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  inferred.push_back(scalarF32(ctx));
  return success();
}

/// An f32 scalar of one or more tensors (a norm, a found-inf flag).
static LogicalResult inferScalarOfTensors(MLIRContext *ctx, std::optional<Location> loc,
                                          ValueRange inputs,
                                          SmallVectorImpl<Type> &inferred) {
  if (inputs.empty())
    return emitOptionalError(loc, "needs at least one tensor");
  inferred.push_back(scalarF32(ctx));
  return success();
}

LogicalResult GlobalNormOp::inferReturnTypes(MLIRContext *ctx,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  return inferScalarOfTensors(ctx, loc, adaptor.getInputs(), inferred);
}

LogicalResult ScaleByOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult IncrementOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult FoundNonFiniteOp::inferReturnTypes(MLIRContext *ctx,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &inferred) {
  return inferScalarOfTensors(ctx, loc, adaptor.getInputs(), inferred);
}

LogicalResult UpdateLossScaleOp::inferReturnTypes(MLIRContext *,
                                                  std::optional<Location>,
                                                  Adaptor adaptor,
                                                  SmallVectorImpl<Type> &inferred) {
  inferred.push_back(adaptor.getScale().getType());
  inferred.push_back(adaptor.getGrowthTracker().getType());
  return success();
}

LogicalResult UpdateLossScaleOp::verify() {
  // GradScaler's own checks.
  if (!(getGrowthFactor().convertToDouble() > 1))
    return emitOpError("growth_factor must be > 1");
  double backoff = getBackoffFactor().convertToDouble();
  if (!(backoff > 0 && backoff < 1))
    return emitOpError("backoff_factor must be in (0, 1)");
  if (getGrowthInterval() < 1)
    return emitOpError("growth_interval must be >= 1");
  return success();
}

LogicalResult SgdUpdateOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Value param = adaptor.getParam();
  if (failed(checkLikeParam(loc, param, "grad", adaptor.getGrad())) ||
      failed(checkLikeParam(loc, param, "momentum_buffer",
                            adaptor.getMomentumBuffer())))
    return failure();
  double momentum = adaptor.getMomentum().convertToDouble();
  if (!(momentum >= 0 && momentum < 1))
    return emitOptionalError(loc, "momentum must be in [0, 1), got ", momentum);
  if ((momentum > 0) != static_cast<bool>(adaptor.getMomentumBuffer()))
    return emitOptionalError(loc, "a momentum buffer is needed exactly when "
                                  "momentum > 0");
  if (adaptor.getNesterov() && momentum == 0)
    return emitOptionalError(loc, "nesterov needs momentum > 0");
  inferred.push_back(param.getType());
  if (adaptor.getMomentumBuffer())
    inferred.push_back(param.getType());
  return success();
}

static LogicalResult inferAdamLike(std::optional<Location> loc, Value param,
                                   Value grad, Value m, Value v, double beta1,
                                   double beta2, double eps,
                                   SmallVectorImpl<Type> &inferred) {
  if (failed(checkLikeParam(loc, param, "grad", grad)) ||
      failed(checkLikeParam(loc, param, "exp_avg", m)) ||
      failed(checkLikeParam(loc, param, "exp_avg_sq", v)))
    return failure();
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    return emitOptionalError(loc, "betas must be in [0, 1), got ", beta1, ", ",
                             beta2);
  if (!(eps > 0))
    return emitOptionalError(loc, "eps must be positive, got ", eps);
  inferred.append(3, param.getType());
  return success();
}

LogicalResult AdamwUpdateOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor a,
                                              SmallVectorImpl<Type> &inferred) {
  return inferAdamLike(loc, a.getParam(), a.getGrad(), a.getExpAvg(),
                       a.getExpAvgSq(), a.getBeta1().convertToDouble(),
                       a.getBeta2().convertToDouble(),
                       a.getEps().convertToDouble(), inferred);
}

LogicalResult LambUpdateOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor a,
                                             SmallVectorImpl<Type> &inferred) {
  return inferAdamLike(loc, a.getParam(), a.getGrad(), a.getExpAvg(),
                       a.getExpAvgSq(), a.getBeta1().convertToDouble(),
                       a.getBeta2().convertToDouble(),
                       a.getEps().convertToDouble(), inferred);
}

LogicalResult EmaUpdateOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  if (adaptor.getEma().getType() != adaptor.getValue().getType())
    return emitOptionalError(loc, "ema and value must have one type");
  double decay = adaptor.getDecay().convertToDouble();
  if (!(decay > 0 && decay < 1) || adaptor.getEvery() < 1)
    return emitOptionalError(loc, "decay must be in (0, 1) and every >= 1");
  inferred.push_back(adaptor.getEma().getType());
  return success();
}

LogicalResult LookaheadUpdateOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  if (adaptor.getFast().getType() != adaptor.getSlow().getType())
    return emitOptionalError(loc, "fast and slow weights must have one type");
  double alpha = adaptor.getAlpha().convertToDouble();
  StringRef schedule = adaptor.getAlphaSchedule();
  if (!(alpha > 0 && alpha <= 1) || adaptor.getEvery() < 1 ||
      (schedule != "constant" && schedule != "cubic"))
    return emitOptionalError(loc, "alpha must be in (0, 1], every >= 1 and "
                                  "alpha_schedule \"constant\" or \"cubic\"");
  inferred.append(2, adaptor.getFast().getType());
  return success();
}

LogicalResult CountCorrectOp::inferReturnTypes(MLIRContext *ctx,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> logits = shapeOf(adaptor.getLogits());
  if (logits.size() != 2 ||
      shapeOf(adaptor.getLabels()) != ArrayRef<int64_t>{logits[0]})
    return emitOptionalError(loc, "logits must be [N, classes] and labels [N], "
                                  "got ",
                             shapeStr(logits), " and ",
                             shapeStr(adaptor.getLabels()));
  inferred.push_back(RankedTensorType::get({}, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult ShiftOp::verify() {
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  if (shape.size() != 4)
    return emitOpError("input must be [N, C, H, W]");
  // I64Attr reads back as uint64_t; shifts are signed.
  int64_t dy = static_cast<int64_t>(getDy()), dx = static_cast<int64_t>(getDx());
  if (std::abs(dy) >= shape[2] || std::abs(dx) >= shape[3])
    return emitOpError("shift (") << dy << ", " << dx
                                  << ") must be smaller than the image";
  return success();
}

LogicalResult FlipOp::verify() {
  if (getInput().getType().getShape().size() != 4)
    return emitOpError("input must be [N, C, H, W]");
  return success();
}

LogicalResult MicroBatchesOp::verify() {
  int64_t count = static_cast<int64_t>(getCount());
  if (count < 1)
    return emitOpError("count must be >= 1, got ") << count;
  Block &body = getBody().front();
  size_t nBatched = getBatched().size(), nCarried = getInits().size();
  if (body.getNumArguments() != nBatched + nCarried)
    return emitOpError("body needs ") << nBatched + nCarried
                                      << " arguments (a slice of each batched "
                                         "operand, then the carried values), got "
                                      << body.getNumArguments();
  for (auto [i, operand] : llvm::enumerate(getBatched())) {
    ArrayRef<int64_t> shape = cast<ShapedType>(operand.getType()).getShape();
    if (shape.empty() || shape[0] % count)
      return emitOpError("batched operand #")
             << i << " " << operand.getType() << " must split into " << count
             << " equal slices along dim 0";
    SmallVector<int64_t> slice(shape);
    slice[0] /= count;
    auto expected = RankedTensorType::get(
        slice, cast<ShapedType>(operand.getType()).getElementType());
    if (body.getArgument(i).getType() != expected)
      return emitOpError("body argument #")
             << i << " must be the slice " << expected << ", got "
             << body.getArgument(i).getType();
  }
  for (auto [i, init] : llvm::enumerate(getInits()))
    if (getCarriedArgument(i).getType() != init.getType())
      return emitOpError("carried body argument #")
             << i << " must have its init's type " << init.getType();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end with tcc.yield");
  if (yield.getValues().size() != getNumResults())
    return emitOpError("yields ") << yield.getValues().size()
                                  << " values for " << getNumResults()
                                  << " results";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(yield.getValues(), getResults()))) {
    auto [yielded, result] = pair;
    Type expected = i < nCarried ? getInits()[i].getType() : yielded.getType();
    if (yielded.getType() != expected || result.getType() != expected)
      return emitOpError("result #") << i << " must have type " << expected
                                     << " (a carried value keeps its init's type; "
                                        "a sum its summand's)";
  }
  return success();
}
