//===- TccGradients.cpp - Vector-Jacobian products of tcc ops -------------===//
//
// Each differentiable op's DifferentiableOpInterface rule: the ops that
// compute operand gradients from result gradients. Rules build every
// operand gradient they can; autodiff erases the ones nothing uses.
//
//===----------------------------------------------------------------------===//

#include "ir/TccOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

/// The sum of `grad` over every dim but `keep`: the gradient of a bias that
/// was broadcast along those dims.
Value sumAllBut(OpBuilder &b, Location loc, Value grad, int64_t keep) {
  SmallVector<int64_t> axes;
  for (int64_t i = 0, e = shapeOf(grad).size(); i < e; ++i)
    if (i != keep)
      axes.push_back(i);
  return b.create<ReduceSumOp>(loc, grad, b.getDenseI64ArrayAttr(axes));
}

/// Starts a rule: one null gradient per operand.
void reset(Operation *op, SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(op->getNumOperands(), Value());
}

/// A unary op whose gradient is one op of `grad` and an operand or result.
template <typename GradOp, typename... Attrs>
LogicalResult unaryRule(Operation *op, OpBuilder &b, ArrayRef<Value> resultGrads,
                        SmallVectorImpl<Value> &operandGrads, Value saved,
                        Attrs... attrs) {
  reset(op, operandGrads);
  operandGrads[0] = b.create<GradOp>(op->getLoc(), resultGrads[0], saved, attrs...);
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Convolution and linear
//===----------------------------------------------------------------------===//

LogicalResult Conv2dOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  Value dy = resultGrads[0];
  ArrayRef<int64_t> w = shapeOf(getWeight());
  operandGrads[0] = b.create<Conv2dBackwardDataOp>(
      getLoc(), dy, getWeight(), b.getDenseI64ArrayAttr(shapeOf(getInput())),
      getStrideAttr(), getPaddingAttr(), getDilationAttr(), getGroupsAttr());
  operandGrads[1] = b.create<Conv2dBackwardFilterOp>(
      getLoc(), dy, getInput(), b.getDenseI64ArrayAttr({w[2], w[3]}),
      getStrideAttr(), getPaddingAttr(), getDilationAttr(), getGroupsAttr());
  if (getBias())
    operandGrads[2] = sumAllBut(b, getLoc(), dy, 1);
  return success();
}

LogicalResult LinearOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  Value dy = resultGrads[0];
  operandGrads[0] = b.create<LinearBackwardDataOp>(getLoc(), dy, getWeight());
  operandGrads[1] = b.create<LinearBackwardWeightOp>(getLoc(), dy, getInput());
  if (getBias())
    operandGrads[2] =
        sumAllBut(b, getLoc(), dy, static_cast<int64_t>(shapeOf(dy).size()) - 1);
  return success();
}

/// C = op(A) op(B), op a transpose where asked: each operand's gradient is
/// a matmul of dC and the other operand, the transposes chosen so that no
/// transpose op is needed (dA = dC B^T, or its transpose B dC^T when A was
/// transposed; likewise dB).
LogicalResult MatmulOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  Value dc = resultGrads[0], lhs = getLhs(), rhs = getRhs();
  bool ta = getTransposeA(), tb = getTransposeB();
  auto matmul = [&](Value x, Value y, bool tx, bool ty) -> Value {
    return b.create<MatmulOp>(getLoc(), x, y, b.getBoolAttr(tx), b.getBoolAttr(ty));
  };
  operandGrads[0] = ta ? matmul(rhs, dc, tb, true) : matmul(dc, rhs, false, !tb);
  operandGrads[1] = tb ? matmul(dc, lhs, true, ta) : matmul(lhs, dc, !ta, false);
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisation: only the normalised output is differentiated; statistics
// and running averages carry no gradient.
//===----------------------------------------------------------------------===//

/// Places the scale/shift gradients of a norm op whose operands are
/// (input, weight?, bias?, ...).
static void assignNormGrads(Value weight, Value bias, Operation *grads,
                            SmallVectorImpl<Value> &operandGrads) {
  operandGrads[0] = grads->getResult(0);
  unsigned next = 1;
  if (weight)
    operandGrads[next++] = grads->getResult(1);
  if (bias)
    operandGrads[next] = grads->getResult(2);
}

LogicalResult BatchNormOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                          SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  if (!resultGrads[0])
    return success();
  if (getSum())
    return buildSynchronisedGradients(b, resultGrads[0], operandGrads);
  auto grads = b.create<BatchNormBackwardOp>(
      getLoc(), resultGrads[0], getInput(), getWeight(), getSavedMean(),
      getSavedInvstd(), getGhostBatchAttr(), getGhostStridedAttr());
  assignNormGrads(getWeight(), getBias(), grads, operandGrads);
  return success();
}

/// A synchronised batch norm (statistics over every rank): each rank's
/// sums, added up over the ranks, give the input gradient; the scale and
/// shift gradients stay this rank's (the gradients' all_reduce sums them).
/// The statistics operands get no gradient: the rule covers them.
LogicalResult BatchNormOp::buildSynchronisedGradients(OpBuilder &b, Value grad,
                                                      SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  auto sums = b.create<BatchNormBackwardSumsOp>(loc, grad, getInput(), getSavedMean(),
                                                getSavedInvstd());
  auto total =
      b.create<AllReduceOp>(loc, ValueRange{sums.getSums()}, b.getStringAttr("sum"));
  operandGrads[0] = b.create<BatchNormBackwardInputOp>(
      loc, grad, getInput(), getWeight(), getSavedMean(), getSavedInvstd(),
      total.getResult(0), getRanksAttr());
  unsigned next = 1;
  if (getWeight())
    operandGrads[next++] = sums.getGradWeight();
  if (getBias())
    operandGrads[next] = sums.getGradBias();
  return success();
}

LogicalResult LayerNormOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                          SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  if (!resultGrads[0])
    return success();
  auto grads = b.create<LayerNormBackwardOp>(
      getLoc(), resultGrads[0], getInput(), getWeight(), getSavedMean(),
      getSavedInvstd(), getNormalizedDimsAttr());
  assignNormGrads(getWeight(), getBias(), grads, operandGrads);
  return success();
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

LogicalResult ReluOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  return unaryRule<ReluBackwardOp>(*this, b, resultGrads, operandGrads, getResult());
}
LogicalResult LeakyReluOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                          SmallVectorImpl<Value> &operandGrads) {
  return unaryRule<LeakyReluBackwardOp>(*this, b, resultGrads, operandGrads,
                                        getInput(), getNegativeSlopeAttr());
}
LogicalResult EluOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  return unaryRule<EluBackwardOp>(*this, b, resultGrads, operandGrads, getInput(),
                                  getAlphaAttr());
}
LogicalResult CeluOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  return unaryRule<CeluBackwardOp>(*this, b, resultGrads, operandGrads, getInput(),
                                   getAlphaAttr());
}
LogicalResult GeluOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  return unaryRule<GeluBackwardOp>(*this, b, resultGrads, operandGrads, getInput(),
                                   getApproximateAttr());
}
LogicalResult SiluOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  return unaryRule<SiluBackwardOp>(*this, b, resultGrads, operandGrads, getInput());
}
LogicalResult SigmoidOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  return unaryRule<SigmoidBackwardOp>(*this, b, resultGrads, operandGrads,
                                      getResult());
}
LogicalResult TanhOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  return unaryRule<TanhBackwardOp>(*this, b, resultGrads, operandGrads, getResult());
}

LogicalResult ScaleOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  operandGrads[0] = b.create<ScaleOp>(getLoc(), resultGrads[0], getFactorAttr());
  return success();
}

LogicalResult ScaleByOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  Value grad = resultGrads[0];
  operandGrads[0] = b.create<ScaleByOp>(getLoc(), grad, getFactor());
  // d/dfactor = sum(grad * input), an f32 scalar like the factor (the
  // steps never need it: the loss scale is not trained).
  auto input = cast<RankedTensorType>(getInput().getType());
  if (!input.getElementType().isF32())
    return success();
  Value product = b.create<MulOp>(getLoc(), grad, getInput());
  operandGrads[1] = input.getRank() == 0 ? product : sumAllBut(b, getLoc(), product, -1);
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

LogicalResult MaxPool2dOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                          SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  operandGrads[0] = b.create<MaxPool2dBackwardOp>(getLoc(), resultGrads[0], getInput(),
                                                  getKernelAttr(), getStrideAttr(),
                                                  getPaddingAttr());
  return success();
}

LogicalResult AvgPool2dOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                          SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  operandGrads[0] = b.create<AvgPool2dBackwardOp>(
      getLoc(), resultGrads[0], b.getDenseI64ArrayAttr(shapeOf(getInput())),
      getKernelAttr(), getStrideAttr(), getPaddingAttr(), getCountIncludePadAttr());
  return success();
}

LogicalResult GlobalAvgPoolOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                              SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  operandGrads[0] = b.create<GlobalAvgPoolBackwardOp>(
      getLoc(), resultGrads[0], b.getDenseI64ArrayAttr(shapeOf(getInput())));
  return success();
}

LogicalResult GlobalMaxPoolOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                              SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  operandGrads[0] =
      b.create<GlobalMaxPoolBackwardOp>(getLoc(), resultGrads[0], getInput());
  return success();
}

//===----------------------------------------------------------------------===//
// Binary elementwise
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildGradients(OpBuilder &, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  operandGrads[0] = operandGrads[1] = resultGrads[0];
  return success();
}

LogicalResult MulOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  operandGrads[0] = b.create<MulOp>(getLoc(), resultGrads[0], getRhs());
  operandGrads[1] = b.create<MulOp>(getLoc(), resultGrads[0], getLhs());
  return success();
}

LogicalResult ChannelMulOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                           SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  operandGrads[0] = b.create<ChannelMulOp>(getLoc(), resultGrads[0], getGate());
  operandGrads[1] = b.create<ChannelMulBackwardGateOp>(getLoc(), resultGrads[0], getInput());
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  int64_t offset = 0, axis = getAxis();
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    int64_t size = shapeOf(input)[axis];
    if (isa<FloatType>(cast<ShapedType>(input.getType()).getElementType()))
      operandGrads[i] = b.create<SliceOp>(getLoc(), resultGrads[0], getAxisAttr(),
                                          b.getI64IntegerAttr(offset),
                                          b.getI64IntegerAttr(size));
    offset += size;
  }
  return success();
}

LogicalResult SliceOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  if (!isa<FloatType>(cast<ShapedType>(getInput().getType()).getElementType()))
    return success();
  operandGrads[0] = b.create<SliceBackwardOp>(
      getLoc(), resultGrads[0], getAxisAttr(), getOffsetAttr(),
      b.getI64IntegerAttr(shapeOf(getInput())[getAxis()]));
  return success();
}

/// The input had 1 along the axis: the copies' gradients summed, the 1
/// restored. With nothing before the axis (a parameter over the batch) the
/// sum runs on a [size, rest] view, a sum that keeps one axis, as a bias
/// gradient's (which every target runs).
LogicalResult ExpandOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  Value dy = resultGrads[0];
  ArrayRef<int64_t> out = shapeOf(dy);
  int64_t axis = getAxis();
  if (llvm::all_of(out.take_front(axis), [](int64_t d) { return d == 1; })) {
    int64_t rest = 1;
    for (int64_t d : out.drop_front(axis + 1))
      rest *= d;
    dy = b.create<ReshapeOp>(getLoc(), dy, b.getDenseI64ArrayAttr({out[axis], rest}));
    axis = 0;
  }
  Value sum = b.create<ReduceSumOp>(getLoc(), dy, b.getDenseI64ArrayAttr({axis}));
  operandGrads[0] =
      b.create<ReshapeOp>(getLoc(), sum, b.getDenseI64ArrayAttr(shapeOf(getInput())));
  return success();
}

/// Each summed element gets the gradient of its sum: the gradient with 1s
/// at the summed axes, expanded along each.
LogicalResult ReduceSumOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                          SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  ArrayRef<int64_t> in = shapeOf(getInput());
  SmallVector<int64_t> kept(in);
  for (int64_t axis : getAxes())
    kept[axis] = 1;
  Value grad = b.create<ReshapeOp>(getLoc(), resultGrads[0], b.getDenseI64ArrayAttr(kept));
  for (int64_t axis : getAxes())
    grad = b.create<ExpandOp>(getLoc(), grad, b.getI64IntegerAttr(axis),
                              b.getI64IntegerAttr(in[axis]));
  operandGrads[0] = grad;
  return success();
}

/// The padded channels are constants: the gradient is the first C.
LogicalResult PadChannelsOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                            SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  operandGrads[0] = b.create<SliceOp>(getLoc(), resultGrads[0], b.getI64IntegerAttr(1),
                                      b.getI64IntegerAttr(0),
                                      b.getI64IntegerAttr(shapeOf(getInput())[1]));
  return success();
}

/// flatten and reshape only reinterpret the elements: reshape back.
static LogicalResult reshapeBack(Operation *op, OpBuilder &b,
                                 ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  reset(op, operandGrads);
  operandGrads[0] = b.create<ReshapeOp>(
      op->getLoc(), resultGrads[0],
      b.getDenseI64ArrayAttr(shapeOf(op->getOperand(0))));
  return success();
}

LogicalResult FlattenOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  return reshapeBack(*this, b, resultGrads, operandGrads);
}

LogicalResult ReshapeOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  return reshapeBack(*this, b, resultGrads, operandGrads);
}

LogicalResult TransposeOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                          SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  operandGrads[0] = b.create<TransposeOp>(getLoc(), resultGrads[0],
                                          b.getDenseI64ArrayAttr(inverse));
  return success();
}

LogicalResult CastOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  Type source = cast<ShapedType>(getInput().getType()).getElementType();
  if (isa<FloatType>(source))
    operandGrads[0] = b.create<CastOp>(getLoc(), resultGrads[0], TypeAttr::get(source));
  return success();
}

//===----------------------------------------------------------------------===//
// Regularisation, probabilities, losses
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  // The same mask (same seed and stream) and scale apply to the gradient.
  reset(*this, operandGrads);
  operandGrads[0] = b.create<DropoutOp>(getLoc(), resultGrads[0], getSeed(),
                                        getPAttr(), getStreamAttr());
  return success();
}

LogicalResult SoftmaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  operandGrads[0] = b.create<SoftmaxBackwardOp>(getLoc(), resultGrads[0], getResult(),
                                                getAxisAttr());
  return success();
}

LogicalResult LogSoftmaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                           SmallVectorImpl<Value> &operandGrads) {
  reset(*this, operandGrads);
  operandGrads[0] = b.create<LogSoftmaxBackwardOp>(getLoc(), resultGrads[0],
                                                   getResult(), getAxisAttr());
  return success();
}

LogicalResult CrossEntropyOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                             SmallVectorImpl<Value> &operandGrads) {
  if (getValid())
    return emitOpError("with `valid` (the evaluation's test loss) has no gradient");
  reset(*this, operandGrads);
  operandGrads[0] = b.create<CrossEntropyBackwardOp>(
      getLoc(), resultGrads[0], getLogits(), getLabels(), getLabelSmoothingAttr(),
      getReductionAttr());
  return success();
}

LogicalResult MseLossOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  if (getValid())
    return emitOpError("with `valid` (the evaluation's test loss) has no gradient");
  reset(*this, operandGrads);
  Value dx = b.create<MseLossBackwardOp>(getLoc(), resultGrads[0], getInput(),
                                         getTarget(), getReductionAttr());
  operandGrads[0] = dx;
  operandGrads[1] = b.create<ScaleOp>(getLoc(), dx, b.getF64FloatAttr(-1.0));
  return success();
}
