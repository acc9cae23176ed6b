//===- BuildTrainStep.cpp - @forward + @loss + recipe -> @train_step ------===//

#include "passes/Passes.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "ir/TccTypes.h"
#include "passes/Autodiff.h"
#include "passes/DistributedStep.h"
#include "passes/StepBuilder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_BUILDTRAINSTEP
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The values of one @train_step under construction.
struct TrainStep {
  Value images, labels, stepsPerEpoch, totalSteps, seed;
  SmallVector<Value> state;    ///< arguments, in StepPlan::state order
  SmallVector<Value> newState; ///< what each becomes after the step
};

/// What one micro-batch contributes to the step.
struct MicroBatch {
  SmallVector<Value> buffers; ///< new buffer values, in StepPlan::state order
  SmallVector<std::pair<int, Value>> grads; ///< (state index, gradient)
  Value lossSum, correct; ///< per-sample loss sum, correct count
};

/// Forward, loss and AD of one micro-batch: `buffers` are the current values
/// of the buffers (bufferIndices order), `scale` multiplies a mean loss
/// before AD (1 / (accumulate * ranks)).
FailureOr<MicroBatch> buildMicroBatch(OpBuilder &b, Location loc, StepPlan &plan,
                                      TrainStep &step, Value images, Value labels,
                                      Value seed, ValueRange buffers, double scale) {
  int64_t micro = cast<ShapedType>(images.getType()).getDimSize(0);
  std::string reduction = "mean";
  plan.loss.walk([&](Operation *op) {
    if (auto r = op->getAttrOfType<StringAttr>("reduction"))
      reduction = r.str();
  });
  // @forward's arguments: the images, the seed, the parameters and buffers.
  SmallVector<Value> args(plan.forward.getNumArguments());
  args[plan.inputArg] = images;
  if (plan.seedArg >= 0)
    args[plan.seedArg] = seed;
  SmallVector<int> bufferIndex = plan.bufferIndices();
  for (auto [i, entry] : llvm::enumerate(plan.state))
    if (entry.kind == kind::kParam)
      args[entry.source] = step.state[i];
  AllGatherOp forwardGather = gatherParameters(b, loc, plan, step.state, args);
  for (auto [k, i] : llvm::enumerate(bufferIndex))
    args[plan.state[i].source] = buffers[k];
  FailureOr<SmallVector<Value>> outputs =
      inlineForward(b, plan.forward, args, /*evalMode=*/false);
  if (failed(outputs))
    return failure();
  if (const ::tcc::rt::Distributed &d = plan.train.distributed; d.syncBatchNorm && d.ranks > 1)
    synchroniseBatchNorms(b, *b.getInsertionBlock(), d.ranks);
  MicroBatch result;
  Value logits = (*outputs)[0];
  // The remaining results update the buffers, in argument order.
  result.buffers.assign(outputs->begin() + 1, outputs->end());

  Value loss = inlineFunction(b, plan.loss, {logits, labels}).front();
  // Per-sample losses summed, for the metrics; sequence targets: per-token
  // losses, a second criterion summing them (the metrics divide by tokens).
  TokenCrossEntropyOp tokenLoss;
  plan.loss.walk([&](TokenCrossEntropyOp op) { tokenLoss = op; });
  if (tokenLoss && reduction == "sum")
    result.lossSum = loss;
  else if (tokenLoss)
    result.lossSum = b.create<TokenCrossEntropyOp>(loc, logits, labels,
                                                   tokenLoss.getIgnoreIndexAttr(),
                                                   tokenLoss.getLabelSmoothingAttr(),
                                                   b.getStringAttr("sum"));
  else
    result.lossSum = reduction == "mean"
                         ? b.create<ScaleOp>(loc, loss, b.getF64FloatAttr(micro)).getResult()
                         : loss;
  // With a mean loss, accumulation averages over the effective batch.
  if (scale != 1.0 && reduction == "mean")
    loss = b.create<ScaleOp>(loc, loss, b.getF64FloatAttr(scale));
  // fp16 loss scaling: the gradients come back multiplied by the scale
  // (GradScaler.scale(loss)); buildUpdates divides it out.
  if (int lossScale = plan.find("amp.loss_scale"); lossScale >= 0)
    loss = b.create<ScaleByOp>(loc, loss, step.state[lossScale]);

  SmallVector<Value> wrt;
  SmallVector<int> indices;
  for (auto [i, entry] : llvm::enumerate(plan.state))
    if (entry.trainable && !entry.frozen) {
      wrt.push_back(args[entry.source]);
      indices.push_back(i);
    }
  // Sharded parameters: gathered again for the backward, so the forward's
  // whole tensors die after the forward (FSDP).
  AllGatherOp backwardGather = gatherForBackward(b, forwardGather);
  FailureOr<SmallVector<Value>> g = buildGradients(b, loss, wrt);
  if (failed(g))
    return failure();
  readBackwardGather(forwardGather, backwardGather);
  for (auto [index, grad] : llvm::zip(indices, *g))
    if (grad)
      result.grads.push_back({index, grad});
  Value all = scalarConstant(b, loc, b.getI64Type(), static_cast<double>(micro));
  if (tokenLoss)
    result.correct =
        b.create<CountCorrectTokensOp>(loc, logits, labels, tokenLoss.getIgnoreIndexAttr());
  else
    result.correct = b.create<CountCorrectOp>(loc, logits, labels, all);
  return result;
}

/// Runs forward, loss and AD over `accumulate` micro-batches: straight-line
/// code for one, a tcc.micro_batches loop over one copy of the model for
/// more. Returns the summed gradient of every trainable parameter (by state
/// index), and sets the new buffers, the loss sum and the correct count.
LogicalResult buildMicroBatches(OpBuilder &b, Location loc, StepPlan &plan,
                                TrainStep &step, DenseMap<int, Value> &grads,
                                Value &lossSum, Value &correct) {
  int64_t accumulate = plan.train.accumulate;
  // Each micro-batch's mean loss is 1 / (accumulate * ranks) of the global
  // step's: a rank's micro-batch k is slice `rank` of the one-process run's
  // micro-batch k (batch::globalSlot).
  const double scale =
      1.0 / static_cast<double>(accumulate * plan.train.distributed.ranks);
  Value seed;
  if (plan.seedArg >= 0)
    seed = b.create<MixSeedOp>(loc, step.seed, step.state[0]);
  SmallVector<int> bufferIndex = plan.bufferIndices();
  SmallVector<Value> buffers;
  for (int i : bufferIndex)
    buffers.push_back(step.state[i]);

  auto apply = [&](ArrayRef<Value> newBuffers, ArrayRef<std::pair<int, Value>> sums,
                   Value loss, Value count) {
    for (auto [k, i] : llvm::enumerate(bufferIndex))
      step.newState[i] = newBuffers[k];
    for (auto [index, grad] : sums)
      grads[index] = grad;
    lossSum = loss;
    correct = count;
  };
  if (accumulate == 1) {
    FailureOr<MicroBatch> one =
        buildMicroBatch(b, loc, plan, step, step.images, step.labels, seed, buffers, scale);
    if (failed(one))
      return failure();
    apply(one->buffers, one->grads, one->lossSum, one->correct);
    return success();
  }

  // The body: one micro-batch, built in a block of its own.
  auto slice = [&](Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[0] /= accumulate;
    return RankedTensorType::get(shape, type.getElementType());
  };
  auto body = std::make_unique<Block>();
  Value images = body->addArgument(slice(step.images), loc);
  Value labels = body->addArgument(slice(step.labels), loc);
  SmallVector<Value> carried;
  for (Value v : buffers)
    carried.push_back(body->addArgument(v.getType(), loc));
  FailureOr<MicroBatch> one;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body.get());
    one = buildMicroBatch(b, loc, plan, step, images, labels, seed, carried, scale);
    if (failed(one))
      return failure();
    SmallVector<Value> yielded(one->buffers);
    for (auto &[index, grad] : one->grads)
      yielded.push_back(grad);
    yielded.append({one->lossSum, one->correct});
    b.create<YieldOp>(loc, yielded);
  }
  // Each op that reads the seed (a dropout, an attention's dropout) draws
  // one stream.
  int64_t dropouts =
      plan.seedArg >= 0
          ? static_cast<int64_t>(
                llvm::range_size(plan.forward.getArgument(plan.seedArg).getUsers()))
          : 0;
  auto loop = b.create<MicroBatchesOp>(
      loc, body->getTerminator()->getOperandTypes(),
      ValueRange{step.images, step.labels}, buffers, accumulate, dropouts);
  loop.getBody().push_back(body.release());

  ResultRange results = loop.getResults();
  SmallVector<std::pair<int, Value>> sums;
  size_t next = buffers.size();
  for (auto &[index, grad] : one->grads)
    sums.push_back({index, results[next++]});
  SmallVector<Value> newBuffers(results.take_front(buffers.size()));
  apply(newBuffers, sums, results[next], results[next + 1]);
  return success();
}

/// fp16 loss scaling after the gradients, as GradScaler.unscale_: divides
/// the scale out of every gradient and returns whether one is inf or nan
/// (an f32 0 or 1 the updates read on the device). Null without it.
Value unscaleGradients(OpBuilder &b, Location loc, StepPlan &plan, TrainStep &step,
                       DenseMap<int, Value> &grads) {
  int lossScale = plan.find("amp.loss_scale");
  if (lossScale < 0 || grads.empty())
    return Value();
  Value inverse = b.create<ReciprocalOp>(loc, step.state[lossScale]);
  SmallVector<Value> all;
  for (auto &[index, grad] : grads) {
    grad = b.create<ScaleByOp>(loc, grad, inverse);
    all.push_back(grad);
  }
  return b.create<FoundNonFiniteOp>(loc, all);
}

/// GradScaler.update and the optimizer's count of the steps it applied.
void updateLossScale(OpBuilder &b, Location loc, StepPlan &plan, TrainStep &step,
                     Value foundInf) {
  int scale = plan.find("amp.loss_scale"), tracker = plan.find("amp.growth_tracker"),
      applied = plan.find("amp.optimizer_steps");
  const ::tcc::rt::LossScale &settings = *plan.train.lossScale;
  auto update = b.create<UpdateLossScaleOp>(
      loc, step.state[scale], step.state[tracker], foundInf,
      b.getF64FloatAttr(settings.growthFactor), b.getF64FloatAttr(settings.backoffFactor),
      b.getI64IntegerAttr(settings.growthInterval));
  step.newState[scale] = update.getNewScale();
  step.newState[tracker] = update.getNewGrowthTracker();
  step.newState[applied] = b.create<IncrementOp>(loc, step.state[applied], foundInf);
}

/// Clipping, schedule, optimizer, Lookahead, EMA and the counters.
void buildUpdates(OpBuilder &b, Location loc, StepPlan &plan,
                  TrainStep &step, DenseMap<int, Value> &grads) {
  using ::tcc::rt::Optimizer;
  const Optimizer &optimizer = plan.train.optimizer;
  Value counter = step.state[0];
  // Under loss scaling a step with an inf or nan gradient is skipped, and
  // the optimizer counts the steps it applied (PyTorch's state["step"]);
  // the schedule, Lookahead and EMA go by the step counter.
  Value foundInf = unscaleGradients(b, loc, plan, step, grads);
  Value optimizerSteps = foundInf ? step.state[plan.find("amp.optimizer_steps")] : counter;

  if (std::optional<double> maxNorm = plan.train.gradClipNorm; maxNorm && !grads.empty()) {
    SmallVector<Value> all;
    for (auto &[index, grad] : grads)
      all.push_back(grad);
    Value norm = b.create<GlobalNormOp>(loc, all);
    Value coefficient =
        b.create<ClipCoefficientOp>(loc, norm, b.getF64FloatAttr(*maxNorm));
    for (auto &[index, grad] : grads)
      grad = b.create<ScaleByOp>(loc, grad, coefficient);
  }

  Value lr = b.create<LrScheduleOp>(loc, counter, step.stepsPerEpoch, step.totalSteps,
                                    b.getF64FloatAttr(optimizer.lr),
                                    getScheduleAttr(b.getContext(), plan.train.schedule));

  double weightDecay = optimizer.weightDecay;
  // Sharded (ZeRO-1/2): each rank updates its chunk of every parameter with
  // its chunk of the optimizer state, and the ranks gather the new ones;
  // sharded parameters (FSDP) are gathered where the next step reads them.
  const ::tcc::rt::Distributed &distributed = plan.train.distributed;
  SmallVector<int> gathered;
  SmallVector<Value> newChunks;
  for (auto [i, entry] : llvm::enumerate(plan.state)) {
    Value grad = grads.lookup(i);
    if (!entry.trainable || !grad)
      continue;
    Value param = step.state[i];
    // Sharded parameters are chunks already, and stay chunks.
    const bool chunks = plan.shardsParameters();
    if (distributed.sharded() && !chunks) {
      param = b.create<ShardOp>(loc, chunkType(param, distributed.ranks), param,
                                distributed.ranks);
      if (distributed.shard == ::tcc::rt::Distributed::Optimizer)
        grad = b.create<ShardOp>(loc, chunkType(grad, distributed.ranks), grad,
                                 distributed.ranks);
    }
    auto lrScale = b.getF64FloatAttr(entry.lrScale);
    auto wd = b.getF64FloatAttr(weightDecay * entry.weightDecayScale);
    auto slot = [&](StringRef name) {
      return plan.find("optimizer." + entry.name + "." + name.str());
    };
    // A parameter that trains for its first epochs only skips its updates
    // afterwards, as torch.optim skips one without a gradient.
    Value skip = foundInf;
    if (entry.trainEpochs > 0)
      skip = b.create<FrozenAfterOp>(loc, counter, step.stepsPerEpoch, foundInf,
                                     b.getI64IntegerAttr(entry.trainEpochs));
    if (optimizer.type == Optimizer::SGD) {
      int buffer = slot("momentum_buffer");
      auto update = b.create<SgdUpdateOp>(
          loc, param, grad, lr, optimizerSteps,
          buffer >= 0 ? step.state[buffer] : Value(), skip, lrScale,
          b.getF64FloatAttr(optimizer.momentum), b.getF64FloatAttr(optimizer.dampening),
          b.getBoolAttr(optimizer.nesterov), wd,
          b.getBoolAttr(optimizer.momentumOf == Optimizer::Update));
      step.newState[i] = update.getNewParam();
      if (buffer >= 0)
        step.newState[buffer] = update.getNewMomentumBuffer();
    } else {
      // torch.optim.Adam's weight decay is L2 on the gradient (coupled):
      // grad + wd * param, then Adam's step with no decay of its own.
      if (optimizer.type == Optimizer::Adam && wd.getValueAsDouble() != 0) {
        grad = b.create<AddOp>(loc, grad, b.create<ScaleOp>(loc, param, wd));
        wd = b.getF64FloatAttr(0);
      }
      int m = slot("exp_avg"), v = slot("exp_avg_sq");
      SmallVector<Value> operands{param, grad, lr, optimizerSteps, step.state[m],
                                  step.state[v]};
      if (skip)
        operands.push_back(skip);
      SmallVector<NamedAttribute> attrs{
          b.getNamedAttr("lr_scale", lrScale),
          b.getNamedAttr("beta1", b.getF64FloatAttr(optimizer.beta1)),
          b.getNamedAttr("beta2", b.getF64FloatAttr(optimizer.beta2)),
          b.getNamedAttr("eps", b.getF64FloatAttr(optimizer.eps)),
          b.getNamedAttr("weight_decay", wd)};
      Operation *update =
          optimizer.type == Optimizer::Lamb
              ? b.create<LambUpdateOp>(loc, operands, attrs).getOperation()
              : b.create<AdamwUpdateOp>(loc, operands, attrs).getOperation();
      step.newState[i] = update->getResult(0);
      step.newState[m] = update->getResult(1);
      step.newState[v] = update->getResult(2);
    }
    if (distributed.sharded() && !chunks) {
      gathered.push_back(static_cast<int>(i));
      newChunks.push_back(step.newState[i]);
    }
  }
  if (!gathered.empty()) {
    SmallVector<Type> wholes;
    for (int i : gathered)
      wholes.push_back(step.state[i].getType());
    auto gather = b.create<AllGatherOp>(loc, wholes, newChunks, distributed.ranks);
    for (auto [i, whole] : llvm::zip(gathered, gather.getResults()))
      step.newState[i] = whole;
  }

  if (const std::optional<::tcc::rt::Lookahead> &lookahead = optimizer.lookahead)
    for (auto [i, entry] : llvm::enumerate(plan.state)) {
      if (entry.kind != kind::kLookahead)
        continue;
      auto update = b.create<LookaheadUpdateOp>(
          loc, step.newState[entry.source], step.state[i], counter, step.totalSteps,
          b.getF64FloatAttr(lookahead->alpha),
          b.getStringAttr(lookahead->alphaSchedule == ::tcc::rt::Lookahead::Cubic ? "cubic"
                                                                                 : "constant"),
          b.getI64IntegerAttr(lookahead->every), b.getBoolAttr(lookahead->copyBack));
      step.newState[entry.source] = update.getNewFast();
      step.newState[i] = update.getNewSlow();
    }

  if (const std::optional<::tcc::rt::Ema> &ema = plan.train.ema)
    for (auto [i, entry] : llvm::enumerate(plan.state))
      if (entry.kind == kind::kEma)
        step.newState[i] = b.create<EmaUpdateOp>(
            loc, step.state[i], step.newState[entry.source], counter,
            ema->perEpoch ? step.stepsPerEpoch : Value(), b.getF64FloatAttr(ema->decay),
            b.getI64IntegerAttr(ema->every));

  if (foundInf)
    updateLossScale(b, loc, plan, step, foundInf);
  step.newState[0] = b.create<IncrementOp>(loc, counter, Value());
}

} // namespace

LogicalResult mlir::tcc::buildTrainStep(ModuleOp module, StepPlan &plan, StringRef name) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  Location loc = plan.forward.getLoc();
  int64_t accumulate = plan.train.accumulate;
  auto input = cast<RankedTensorType>(plan.forward.getArgument(plan.inputArg).getType());
  SmallVector<int64_t> imageShape(input.getShape());
  // The frontend bounds accumulate; hand-written IR (tcc-opt) is not, and a
  // wrapped product would abort in the ops' type inference below.
  std::optional<int64_t> samples =
      accumulate >= 1 ? llvm::checkedMul(imageShape[0], accumulate) : std::nullopt;
  if (samples)
    imageShape[0] = *samples;
  if (!samples || !isSupportedShape(imageShape))
    return emitError(loc) << kTrainAttr << " accumulate " << accumulate
                          << " must be >= 1, and that many micro-batches of "
                          << formatShape(input.getShape())
                          << " must fit one tensor (dims <= 2^31, elements "
                             "<= 2^48)";
  Type i64 = RankedTensorType::get({}, b.getI64Type());

  // One class per sample, or per position ([N, T]: sequence targets).
  SmallVector<int64_t> labelsShape(
      cast<ShapedType>(plan.loss.getArgument(1).getType()).getShape());
  labelsShape[0] = imageShape[0];
  SmallVector<Type> argTypes{
      RankedTensorType::get(imageShape, input.getElementType()),
      RankedTensorType::get(labelsShape, b.getI64Type()), i64, i64, i64};
  SmallVector<Attribute> argAttrs;
  for (StringRef role : {role::kInput, role::kLabels, role::kStepsPerEpoch, role::kTotalSteps,
                         role::kSeed})
    argAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(kRoleAttr, b.getStringAttr(role))));
  plan.appendStateArgs(argTypes, argAttrs, ctx);

  b.setInsertionPointToEnd(module.getBody());
  auto fn = b.create<func::FuncOp>(loc, name,
                                   b.getFunctionType(argTypes, {}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  TrainStep step{entry->getArgument(0), entry->getArgument(1),
                 entry->getArgument(2), entry->getArgument(3),
                 entry->getArgument(4)};
  for (Value v : entry->getArguments().drop_front(5))
    step.state.push_back(v);
  step.newState = step.state;

  DenseMap<int, Value> grads;
  Value lossSum, correct;
  if (failed(buildMicroBatches(b, loc, plan, step, grads, lossSum, correct)))
    return failure();
  reduceAcrossRanks(b, loc, plan, step.newState, grads);
  buildUpdates(b, loc, plan, step, grads);

  SmallVector<Value> results{lossSum, correct};
  SmallVector<Attribute> resultAttrs;
  for (StringRef role : {role::kLossSum, role::kCorrect})
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(kRoleAttr, b.getStringAttr(role))));
  for (auto [i, entry] : llvm::enumerate(plan.state)) {
    results.push_back(step.newState[i]);
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(kStateAttr, b.getStringAttr(entry.name))));
  }
  b.create<func::ReturnOp>(loc, results);
  fn.setFunctionType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  fn.setAllArgAttrs(argAttrs);
  fn.setAllResultAttrs(resultAttrs);
  return success();
}

namespace {

struct BuildTrainStepPass : mlir::tcc::impl::BuildTrainStepBase<BuildTrainStepPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<StepPlan> plan = planSteps(module);
    if (failed(plan) || failed(buildTrainStep(module, *plan, "train_step")) ||
        failed(buildEvalStep(module, *plan)))
      return signalPassFailure();
    plan->forward.erase();
    plan->loss.erase();
  }
};

} // namespace
