//===- StepPlan.cpp - The state layout and the forward inliner ------------===//

#include "passes/StepBuilder.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace mlir::tcc;

namespace {

DictionaryAttr initOf(MLIRContext *ctx, StringRef kind,
                      ArrayRef<NamedAttribute> extra = {}) {
  Builder b(ctx);
  NamedAttrList attrs(extra);
  attrs.append("kind", b.getStringAttr(kind));
  return attrs.getDictionary(ctx);
}

DictionaryAttr copyOf(MLIRContext *ctx, StringRef source) {
  Builder b(ctx);
  return initOf(ctx, "copy", {b.getNamedAttr("source", b.getStringAttr(source))});
}

} // namespace

int StepPlan::find(StringRef name) const {
  for (; indexed < state.size(); ++indexed)
    byName.try_emplace(state[indexed].name, static_cast<int>(indexed));
  auto it = byName.find(name);
  return it == byName.end() ? -1 : it->second;
}

SmallVector<int> StepPlan::bufferIndices() const {
  SmallVector<int> out;
  for (auto [i, entry] : llvm::enumerate(state))
    if (entry.kind == kind::kBuffer)
      out.push_back(static_cast<int>(i));
  return out;
}

void StepPlan::appendStateArgs(SmallVectorImpl<Type> &types,
                               SmallVectorImpl<Attribute> &attrs,
                               MLIRContext *ctx, bool whole) const {
  Builder b(ctx);
  for (const StateEntry &entry : state) {
    NamedAttrList list;
    // The evaluation of sharded parameters reads the whole state the
    // trainer gathers before it (tcc.gathered, docs/distributed.md).
    if (whole && !entry.shardOf.empty() &&
        (entry.kind == kind::kParam || entry.kind == kind::kEma)) {
      auto chunk = cast<RankedTensorType>(entry.type);
      types.push_back(RankedTensorType::get(entry.shardOf, chunk.getElementType()));
      list.append(kGatheredAttr, b.getUnitAttr());
    } else {
      types.push_back(entry.type);
    }
    list.append(kStateAttr, b.getStringAttr(entry.name));
    list.append(kKindAttr, b.getStringAttr(entry.kind));
    list.append(kInitAttr, entry.init);
    if (entry.kind == kind::kParam)
      list.append(kTrainableAttr, b.getBoolAttr(entry.trainable));
    if (!entry.foldedInto.empty())
      list.append(kFoldedIntoAttr, b.getStringAttr(entry.foldedInto));
    if (!entry.shardOf.empty() && !list.get(kGatheredAttr))
      list.append(kShardOfAttr, b.getDenseI64ArrayAttr(entry.shardOf));
    attrs.push_back(list.getDictionary(ctx));
  }
}

FailureOr<StepPlan> mlir::tcc::planSteps(ModuleOp module) {
  StepPlan plan;
  MLIRContext *ctx = module.getContext();
  plan.forward = module.lookupSymbol<func::FuncOp>("forward");
  plan.loss = module.lookupSymbol<func::FuncOp>("loss");
  auto train = module->getAttrOfType<TrainAttr>(kTrainAttr);
  auto eval = module->getAttrOfType<EvalAttr>(kEvalAttr);
  if (!plan.forward || !plan.loss || !train || !eval)
    return module.emitError()
               << "needs func @forward, func @loss and the " << kTrainAttr << " (#tcc.train) and "
               << kEvalAttr << " (#tcc.eval) attributes that the frontend writes",
           failure();
  plan.train = toRecipe(train);
  plan.eval = toRecipe(eval);
  if (module.lookupSymbol("train_step") || module.lookupSymbol("eval_step"))
    return module.emitError("already has @train_step or @eval_step"), failure();

  Builder b(ctx);
  plan.state.push_back({"step", kind::kCounter.str(),
                        RankedTensorType::get({}, b.getI64Type()),
                        initOf(ctx, "constant",
                               {b.getNamedAttr("value", b.getF64FloatAttr(0))})});
  for (unsigned i = 0, e = plan.forward.getNumArguments(); i < e; ++i) {
    auto role = plan.forward.getArgAttrOfType<StringAttr>(i, kRoleAttr);
    if (role && role.getValue() == role::kInput)
      plan.inputArg = i;
    if (role && role.getValue() == role::kSeed)
      plan.seedArg = i;
    StateEntry entry;
    if (auto name = plan.forward.getArgAttrOfType<StringAttr>(i, kParamAttr)) {
      entry.name = name.str();
      entry.kind = kind::kParam;
      auto trainable = plan.forward.getArgAttrOfType<BoolAttr>(i, kTrainableAttr);
      entry.trainable = trainable && trainable.getValue();
      if (auto s = plan.forward.getArgAttrOfType<FloatAttr>(i, kLrScaleAttr))
        entry.lrScale = s.getValueAsDouble();
      if (auto s = plan.forward.getArgAttrOfType<FloatAttr>(i, kWeightDecayScaleAttr))
        entry.weightDecayScale = s.getValueAsDouble();
      if (auto into = plan.forward.getArgAttrOfType<StringAttr>(i, kFoldedIntoAttr))
        entry.foldedInto = into.str();
      if (auto epochs = plan.forward.getArgAttrOfType<IntegerAttr>(i, kTrainEpochsAttr))
        entry.trainEpochs = epochs.getInt();
    } else if (auto buffer = plan.forward.getArgAttrOfType<StringAttr>(i, kBufferAttr)) {
      entry.name = buffer.str();
      entry.kind = kind::kBuffer;
    } else {
      continue;
    }
    entry.type = plan.forward.getArgument(i).getType();
    entry.init = plan.forward.getArgAttrOfType<DictionaryAttr>(i, kInitAttr);
    if (!entry.init)
      entry.init = initOf(ctx, "constant",
                          {b.getNamedAttr("value", b.getF64FloatAttr(0))});
    entry.source = i;
    plan.state.push_back(entry);
  }

  // Sharded parameters (FSDP): each rank keeps its chunk of every
  // trainable parameter; the step gathers them whole where it reads them.
  const ::tcc::rt::Distributed &distributed = plan.train.distributed;
  const bool shardParams =
      distributed.sharded() && distributed.shard == ::tcc::rt::Distributed::Parameters;
  auto chunkOf = [&](StateEntry &entry) {
    auto whole = cast<RankedTensorType>(entry.type);
    entry.shardOf.assign(whole.getShape().begin(), whole.getShape().end());
    int64_t chunk = (whole.getNumElements() + distributed.ranks - 1) / distributed.ranks;
    entry.type = RankedTensorType::get({chunk}, whole.getElementType());
  };
  if (shardParams)
    for (StateEntry &entry : plan.state)
      if (entry.kind == kind::kParam && entry.trainable)
        chunkOf(entry);

  // Optimizer slots, Lookahead's slow weights, then EMA copies.
  const ::tcc::rt::Optimizer &optimizer = plan.train.optimizer;
  SmallVector<StringRef> slots;
  if (optimizer.type != ::tcc::rt::Optimizer::SGD)
    slots = {"exp_avg", "exp_avg_sq"};
  else if (optimizer.momentum > 0)
    slots = {"momentum_buffer"};
  size_t modelEntries = plan.state.size();
  auto zeros = initOf(ctx, "constant", {b.getNamedAttr("value", b.getF64FloatAttr(0))});
  // Sharded (ZeRO), each rank keeps its chunk of every slot.
  for (size_t i = 1; i < modelEntries; ++i) {
    StateEntry p = plan.state[i]; // a copy: push_back below reallocates
    if (!p.trainable)
      continue;
    for (StringRef slot : slots) {
      plan.state.push_back({"optimizer." + p.name + "." + slot.str(), kind::kOptimizer.str(),
                            p.type, zeros, false, 1, 1, static_cast<int>(i)});
      if (distributed.sharded() && !shardParams)
        chunkOf(plan.state.back());
      else
        plan.state.back().shardOf = p.shardOf;
    }
  }
  // Lookahead averages the trainable parameters, and with `buffers` the
  // float buffers (batch-norm running statistics) too, as airbench's
  // LookaheadState does over the whole state_dict.
  if (optimizer.lookahead)
    for (size_t i = 1; i < modelEntries; ++i)
      if (plan.state[i].trainable ||
          (plan.state[i].kind == kind::kBuffer && optimizer.lookahead->buffers &&
           isa<FloatType>(cast<RankedTensorType>(plan.state[i].type).getElementType())))
      {
        plan.state.push_back({"lookahead." + plan.state[i].name, kind::kLookahead.str(),
                              plan.state[i].type, copyOf(ctx, plan.state[i].name),
                              false, 1, 1, static_cast<int>(i)});
        plan.state.back().shardOf = plan.state[i].shardOf; // chunks of chunks
      }
  if (plan.train.ema)
    for (size_t i = 1; i < modelEntries; ++i) {
      plan.state.push_back({"ema." + plan.state[i].name, kind::kEma.str(), plan.state[i].type,
                            copyOf(ctx, plan.state[i].name), false, 1, 1,
                            static_cast<int>(i)});
      plan.state.back().shardOf = plan.state[i].shardOf;
    }
  if (plan.train.lossScale) {
    auto constant = [&](double value) {
      return initOf(ctx, "constant", {b.getNamedAttr("value", b.getF64FloatAttr(value))});
    };
    Type f32 = RankedTensorType::get({}, b.getF32Type());
    Type i64 = RankedTensorType::get({}, b.getI64Type());
    plan.state.push_back({"amp.loss_scale", kind::kAmp.str(), f32,
                          constant(plan.train.lossScale->initScale)});
    plan.state.push_back({"amp.growth_tracker", kind::kAmp.str(), i64, constant(0)});
    plan.state.push_back({"amp.optimizer_steps", kind::kAmp.str(), i64, constant(0)});
  }
  return plan;
}

Value mlir::tcc::scalarConstant(OpBuilder &builder, Location loc,
                                Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element =
      isa<FloatType>(elementType)
          ? Attribute(builder.getFloatAttr(elementType, value))
          : Attribute(builder.getIntegerAttr(elementType, static_cast<int64_t>(value)));
  return builder.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, element));
}

SmallVector<Value> mlir::tcc::inlineFunction(OpBuilder &builder, func::FuncOp fn,
                                             ArrayRef<Value> args) {
  IRMapping mapping;
  mapping.map(fn.getArguments(), args);
  SmallVector<Value> results;
  for (Operation &op : fn.front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands())
        results.push_back(mapping.lookup(v));
      break;
    }
    builder.clone(op, mapping);
  }
  return results;
}

FailureOr<SmallVector<Value>> mlir::tcc::inlineForward(OpBuilder &builder,
                                                       func::FuncOp forward,
                                                       ArrayRef<Value> args,
                                                       bool evalMode) {
  IRMapping mapping;
  mapping.map(forward.getArguments(), args);
  // The batch of this copy: its first argument's (the input's) dim 0.
  auto first = args.empty() ? RankedTensorType() : dyn_cast<RankedTensorType>(args[0].getType());
  const int64_t batch = first && first.getRank() > 0 ? first.getDimSize(0) : 0;
  for (Operation &op : forward.front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Value> results;
      for (Value v : ret.getOperands())
        results.push_back(mapping.lookup(v));
      return results;
    }
    if (evalMode) {
      if (auto bn = dyn_cast<BatchNormOp>(op)) {
        auto lookup = [&](Value v) { return v ? mapping.lookup(v) : Value(); };
        Value y = builder.create<BatchNormInferenceOp>(
            bn.getLoc(), lookup(bn.getInput()), lookup(bn.getWeight()),
            lookup(bn.getBias()), lookup(bn.getRunningMean()),
            lookup(bn.getRunningVar()), bn.getEpsAttr());
        mapping.map(bn.getResult(), y);
        mapping.map(bn.getNewRunningMean(), lookup(bn.getRunningMean()));
        mapping.map(bn.getNewRunningVar(), lookup(bn.getRunningVar()));
        continue;
      }
      if (auto dropout = dyn_cast<DropoutOp>(op)) {
        mapping.map(dropout.getResult(), mapping.lookup(dropout.getInput()));
        continue;
      }
      if (auto attention = dyn_cast<ScaledDotProductAttentionOp>(op);
          attention && attention.getSeed()) {
        auto noDropout = builder.create<ScaledDotProductAttentionOp>(
            attention.getLoc(), mapping.lookup(attention.getQuery()),
            mapping.lookup(attention.getKey()), mapping.lookup(attention.getValue()), Value(),
            attention.getHeadsAttr(), attention.getCausalAttr(), attention.getScaleAttr(),
            builder.getF64FloatAttr(0), attention.getStreamAttr());
        mapping.map(attention.getResults(), noDropout.getResults());
        continue;
      }
    }
    Operation *clone = builder.clone(op, mapping);
    // The batch dim of a reshape target follows its input's.
    if (auto reshape = dyn_cast<ReshapeOp>(clone)) {
      SmallVector<int64_t> shape(reshape.getShape());
      shape[0] = cast<ShapedType>(reshape.getInput().getType()).getDimSize(0);
      reshape.setShape(shape);
    }
    // A parameter node's expansion over the batch (dim 0) covers this batch.
    if (auto expand = dyn_cast<ExpandOp>(clone); expand && expand.getAxis() == 0 && batch > 0)
      expand.setSize(batch);
    auto inference = dyn_cast<InferTypeOpInterface>(clone);
    if (!inference)
      continue;
    SmallVector<Type> types;
    if (failed(inference.inferReturnTypes(
            clone->getContext(), clone->getLoc(), clone->getOperands(),
            clone->getRawDictionaryAttrs(), clone->getPropertiesStorage(),
            clone->getRegions(), types)))
      return failure();
    for (auto [result, type] : llvm::zip(clone->getResults(), types))
      result.setType(type);
  }
  return forward.emitOpError("has no terminator"), failure();
}
