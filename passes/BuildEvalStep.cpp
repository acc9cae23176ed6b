//===- BuildEvalStep.cpp - @forward + recipe -> @eval_step ----------------===//
//
// Evaluation: running BN statistics, no dropout, EMA weights when the recipe
// keeps them, and the logits averaged over the test-time-augmentation views;
// it returns the test loss sum (the training criterion) and the correct count.
// A token model also gets @predict_step: the same forward on one sequence,
// returning its logits (`tcc sample`).
//
//===----------------------------------------------------------------------===//

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "passes/StepBuilder.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// A group of TTA views whose logits are averaged, and the group's weight.
struct ViewGroup {
  SmallVector<Value> views;
  double weight;
};

/// The TTA views of eval.tta, weighted as airbench does: the images (and
/// their mirror with "flip") carry 1/2, and with "translate" the shifts by
/// (t, t) and (-t, -t) (and their mirrors) 1/4 each; without "translate"
/// the images carry everything.
SmallVector<ViewGroup> ttaViews(OpBuilder &b, Location loc, Value images,
                                const ::tcc::rt::EvalRecipe &eval) {
  bool flip = eval.flipViews;
  int64_t t = eval.translate;
  bool translate = eval.translateViews && t > 0;
  SmallVector<Value> bases{images};
  if (translate)
    for (int64_t sign : {1, -1})
      bases.push_back(b.create<ShiftOp>(loc, images, b.getI64IntegerAttr(sign * t),
                                        b.getI64IntegerAttr(sign * t)));
  SmallVector<ViewGroup> groups;
  for (auto [i, v] : llvm::enumerate(bases)) {
    ViewGroup group{{v}, !translate ? 1.0 : i == 0 ? 0.5 : 0.25};
    if (flip)
      group.views.push_back(b.create<FlipOp>(loc, v));
    groups.push_back(group);
  }
  return groups;
}

/// The training criterion (@loss) on the evaluation's logits, summed over
/// the batch's `valid` samples as the training metrics sum it: the sum of
/// per-sample losses, where a sample's loss under an MSE "mean" is the mean
/// over its elements. The trainer divides by the samples: test_loss.
FailureOr<Value> buildTestLossSum(OpBuilder &b, func::FuncOp loss, Value logits,
                                  Value labels, Value valid) {
  Block *block = b.getInsertionBlock();
  Operation *last = b.getInsertionPoint() == block->begin()
                        ? nullptr
                        : &*std::prev(b.getInsertionPoint());
  FailureOr<SmallVector<Value>> outputs =
      inlineForward(b, loss, {logits, labels}, /*evalMode=*/true);
  if (failed(outputs))
    return failure();
  Value total = outputs->front();
  // The ops just inlined: the criterion counts the valid rows only, summed.
  double perSample = 1.0;
  auto first = last ? std::next(last->getIterator()) : block->begin();
  for (Operation &op : llvm::make_range(first, b.getInsertionPoint())) {
    auto sumValid = [&](auto criterion) {
      criterion.getValidMutable().assign(valid);
      criterion.setReduction("sum");
    };
    if (auto ce = dyn_cast<CrossEntropyOp>(op))
      sumValid(ce);
    // Padding positions of a short batch hold ignore_index (the gather's).
    if (auto tokens = dyn_cast<TokenCrossEntropyOp>(op))
      tokens.setReduction("sum");
    if (auto mse = dyn_cast<MseLossOp>(op)) {
      if (mse.getReduction() == "mean") {
        auto shape = cast<ShapedType>(mse.getInput().getType()).getShape();
        for (int64_t d : shape.drop_front())
          perSample *= static_cast<double>(d);
      }
      sumValid(mse);
    }
  }
  if (perSample != 1.0)
    total = b.create<ScaleOp>(total.getLoc(), total, b.getF64FloatAttr(1.0 / perSample));
  return total;
}

/// True if eval.tta asks for more than the images themselves.
bool hasTtaViews(const ::tcc::rt::EvalRecipe &eval) {
  return eval.flipViews || eval.translateViews;
}

/// @forward's arguments in evaluation, from the step's state arguments:
/// parameters and buffers, or their EMA copies; the input left unset.
SmallVector<Value> evalForwardArgs(StepPlan &plan, ValueRange state) {
  SmallVector<Value> args(plan.forward.getNumArguments());
  for (auto [i, e] : llvm::enumerate(plan.state))
    if (e.kind == kind::kParam || e.kind == kind::kBuffer) {
      int ema = plan.find("ema." + e.name);
      args[e.source] = state[ema >= 0 ? ema : static_cast<int>(i)];
    }
  if (plan.seedArg >= 0) // dropout is the identity here; any seed will do
    args[plan.seedArg] = state[0];
  return args;
}

/// Builds the evaluation function `name`: with the recipe's TTA views, or
/// (`tta` false) on the images alone.
LogicalResult buildEvalFunction(ModuleOp module, StepPlan &plan, StringRef name,
                                bool tta) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  Location loc = plan.forward.getLoc();
  auto input = cast<RankedTensorType>(plan.forward.getArgument(plan.inputArg).getType());
  int64_t batch = plan.eval.batchSize;
  SmallVector<int64_t> imageShape(input.getShape());
  imageShape[0] = batch;
  Type i64 = RankedTensorType::get({}, b.getI64Type());

  SmallVector<int64_t> labelsShape(
      cast<ShapedType>(plan.loss.getArgument(1).getType()).getShape());
  labelsShape[0] = batch;
  SmallVector<Type> argTypes{RankedTensorType::get(imageShape, input.getElementType()),
                             RankedTensorType::get(labelsShape, b.getI64Type()), i64};
  SmallVector<Attribute> argAttrs;
  for (StringRef role : {role::kInput, role::kLabels, role::kValid})
    argAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(kRoleAttr, b.getStringAttr(role))));
  plan.appendStateArgs(argTypes, argAttrs, ctx, /*whole=*/plan.shardsParameters());

  b.setInsertionPointToEnd(module.getBody());
  auto fn = b.create<func::FuncOp>(loc, name, b.getFunctionType(argTypes, {}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  ValueRange state = entry->getArguments().drop_front(3);

  SmallVector<Value> args = evalForwardArgs(plan, state);

  // sum over groups of weight * mean of the group's logits
  Value sum;
  SmallVector<ViewGroup> groups{{{entry->getArgument(0)}, 1.0}};
  if (tta)
    groups = ttaViews(b, loc, entry->getArgument(0), plan.eval);
  for (const ViewGroup &group : groups) {
    Value groupSum;
    for (Value view : group.views) {
      args[plan.inputArg] = view;
      FailureOr<SmallVector<Value>> outputs =
          inlineForward(b, plan.forward, args, /*evalMode=*/true);
      if (failed(outputs))
        return failure();
      Value logits = outputs->front();
      groupSum = groupSum ? b.create<AddOp>(loc, groupSum, logits).getResult() : logits;
    }
    double scale = group.weight / group.views.size();
    if (scale != 1.0)
      groupSum = b.create<ScaleOp>(loc, groupSum, b.getF64FloatAttr(scale));
    sum = sum ? b.create<AddOp>(loc, sum, groupSum).getResult() : groupSum;
  }
  Value labels = entry->getArgument(1), valid = entry->getArgument(2);
  FailureOr<Value> lossSum = buildTestLossSum(b, plan.loss, sum, labels, valid);
  if (failed(lossSum))
    return failure();
  TokenCrossEntropyOp tokenLoss;
  plan.loss.walk([&](TokenCrossEntropyOp op) { tokenLoss = op; });
  Value correct;
  if (tokenLoss)
    correct = b.create<CountCorrectTokensOp>(loc, sum, labels, tokenLoss.getIgnoreIndexAttr());
  else
    correct = b.create<CountCorrectOp>(loc, sum, labels, valid);
  b.create<func::ReturnOp>(loc, ValueRange{*lossSum, correct});
  fn.setFunctionType(
      b.getFunctionType(argTypes, {lossSum->getType(), correct.getType()}));
  fn.setAllArgAttrs(argAttrs);
  StringRef roles[] = {role::kLossSum, role::kCorrect};
  for (auto [i, r] : llvm::enumerate(roles))
    fn.setResultAttrs(i, b.getDictionaryAttr(
                             b.getNamedAttr(kRoleAttr, b.getStringAttr(r))));
  return success();
}

/// @predict_step: the evaluation's forward (running statistics, no dropout,
/// EMA weights when the recipe keeps them, no TTA) on one sample, returning
/// the logits. One sample: autoregressive sampling extends one sequence.
LogicalResult buildPredictFunction(ModuleOp module, StepPlan &plan) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  Location loc = plan.forward.getLoc();
  auto input = cast<RankedTensorType>(plan.forward.getArgument(plan.inputArg).getType());
  SmallVector<int64_t> inputShape(input.getShape());
  inputShape[0] = 1;
  SmallVector<Type> argTypes{RankedTensorType::get(inputShape, input.getElementType())};
  SmallVector<Attribute> argAttrs{
      b.getDictionaryAttr(b.getNamedAttr(kRoleAttr, b.getStringAttr(role::kInput)))};
  plan.appendStateArgs(argTypes, argAttrs, ctx);

  b.setInsertionPointToEnd(module.getBody());
  auto fn = b.create<func::FuncOp>(loc, kPredictStepName, b.getFunctionType(argTypes, {}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  ValueRange state = entry->getArguments().drop_front(1);
  SmallVector<Value> args = evalForwardArgs(plan, state);
  args[plan.inputArg] = entry->getArgument(0);
  FailureOr<SmallVector<Value>> outputs =
      inlineForward(b, plan.forward, args, /*evalMode=*/true);
  if (failed(outputs))
    return failure();
  Value logits = outputs->front();
  b.create<func::ReturnOp>(loc, ValueRange{logits});
  fn.setFunctionType(b.getFunctionType(argTypes, {logits.getType()}));
  fn.setAllArgAttrs(argAttrs);
  fn.setResultAttrs(0, b.getDictionaryAttr(
                           b.getNamedAttr(kRoleAttr, b.getStringAttr(role::kLogits))));
  return success();
}

} // namespace

LogicalResult mlir::tcc::buildEvalStep(ModuleOp module, StepPlan &plan) {
  if (failed(buildEvalFunction(module, plan, "eval_step", /*tta=*/true)))
    return failure();
  // With TTA, also the evaluation without it: `./train --tta off`.
  if (hasTtaViews(plan.eval) &&
      failed(buildEvalFunction(module, plan, "eval_step_plain", /*tta=*/false)))
    return failure();
  // Only token models are sampled from; the others' modules stay as they were.
  // Sharded parameters are chunks here, which a forward cannot read whole.
  if (module->hasAttr(kVocabAttr) && !plan.shardsParameters())
    return buildPredictFunction(module, plan);
  return success();
}
