//===- Recompute.cpp - Compute forward values again instead of keeping them -===//
//
// See Passes.td and docs/passes.md. The backward reads forward values long
// after the forward wrote them; between the two they hold memory. This pass
// drops some and computes them again where the backward reads them:
//
// - Free, always: a batch norm's normalised result that only the prologue
//   of the same norm's backward reads (an activation's backward there) is
//   computed again inside that kernel, per element, from the norm's input,
//   which the kernel reads anyway (tcc.batch_norm_apply). No kernel and no
//   memory traffic are added, and one activation-sized tensor per norm
//   leaves memory.
// - Under train.memory_budget: while the planned step is over the budget,
//   values read again late are recomputed before their late readers,
//   cheapest ops first (batch-norm applies and elementwise ops, then
//   pooling, then convolutions and matmuls), the largest first within a
//   class; a recompute is kept only if the planned scratch shrinks. Below
//   what that reaches, the pass fails and states the smallest step it
//   planned.
//
// Recomputed values are bit-identical: every op is a pure function of its
// operands (dropout of its saved seed, batch_norm_apply of the statistics
// its batch_norm saved, rounded as that op rounds).
//
//===----------------------------------------------------------------------===//

#include "passes/MemoryPlan.h"
#include "passes/PassReport.h"
#include "passes/Passes.h"
#include "passes/SixteenBit.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "ir/TccRecipe.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <vector>

namespace mlir::tcc {
#define GEN_PASS_DEF_RECOMPUTE
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

constexpr StringLiteral kPass = "recompute";

/// What the report calls a recomputed value: the model node its op comes
/// from (the frontend names the location) and the op.
std::string describe(Operation *op) {
  std::string node;
  op->getLoc()->walk([&](Location loc) {
    if (auto name = dyn_cast<NameLoc>(loc); name && node.empty())
      node = name.getName().str();
    return WalkResult::advance();
  });
  std::string kind = op->getName().stripDialect().str();
  if (auto group = dyn_cast<FusionGroupOp>(op))
    kind = group.getKind().str();
  return node.empty() ? kind : node + " (" + kind + ")";
}

/// The value a group yields for its body's `inner` value, or null.
Value yieldedAs(FusionGroupOp group, Value inner) {
  auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(yield.getValues()))
    if (v == inner)
      return group.getResult(i);
  return {};
}

/// The training batch norm whose normalised result `v` is, seen from
/// outside any group: the op's result 0, or a norm_epilogue group's result
/// that yields it. Null otherwise. `mean` and `invstd` are set to its saved
/// statistics as readable where `v` is.
BatchNormOp normalisedBy(Value v, Value &mean, Value &invstd) {
  auto result = dyn_cast<OpResult>(v);
  if (!result)
    return {};
  if (auto bn = dyn_cast<BatchNormOp>(result.getOwner())) {
    if (result.getResultNumber() != 0)
      return {};
    mean = bn.getSavedMean();
    invstd = bn.getSavedInvstd();
    return bn;
  }
  auto group = dyn_cast<FusionGroupOp>(result.getOwner());
  if (!group || group.getKind() != FusionGroupOp::kNormEpilogue)
    return {};
  auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
  Value inner = yield.getValues()[result.getResultNumber()];
  auto bn = inner.getDefiningOp<BatchNormOp>();
  if (!bn || inner != bn.getResult())
    return {};
  mean = yieldedAs(group, bn.getSavedMean());
  invstd = yieldedAs(group, bn.getSavedInvstd());
  return mean && invstd ? bn : BatchNormOp();
}

/// `v` as seen inside the group that yields it (itself otherwise).
Value innerOf(Value v) {
  auto result = dyn_cast<OpResult>(v);
  auto group = result ? dyn_cast<FusionGroupOp>(result.getOwner()) : FusionGroupOp();
  if (!group)
    return v;
  return cast<YieldOp>(group.getBody().front().getTerminator())
      .getValues()[result.getResultNumber()];
}

/// The 16-bit value (as readable outside any group) that `v` is the f32
/// cast of, or null. On the cpu target, tcc-widen-16bit makes a separate
/// f32 copy of a 16-bit value for each op that reads it: two such copies
/// hold the same numbers.
Value widenedFrom(Value v) {
  auto cast = innerOf(v).getDefiningOp<CastOp>();
  if (!cast || !cast.getType().getElementType().isF32() || !isSixteenBit(cast.getInput()))
    return {};
  Value source = cast.getInput();
  if (auto group = dyn_cast<FusionGroupOp>(source.getParentRegion()->getParentOp()))
    return yieldedAs(group, source);
  return source;
}

/// Whether `a` and `b` hold the same numbers: one value, or f32 copies of
/// one 16-bit value.
bool sameNumbers(Value a, Value b) {
  if (a == b)
    return true;
  Value source = widenedFrom(a);
  return source && source == widenedFrom(b);
}

/// Under 16-bit storage, the norm whose normalised result `v` is the 16-bit
/// cast of, as a norm_epilogue group yields it; null otherwise. `mean`
/// and `invstd` as normalisedBy sets them.
BatchNormOp storedNormalisedBy(Value v, Value &mean, Value &invstd) {
  auto result = dyn_cast<OpResult>(v);
  auto group = result ? dyn_cast<FusionGroupOp>(result.getOwner()) : FusionGroupOp();
  if (!group || group.getKind() != FusionGroupOp::kNormEpilogue || !isSixteenBit(v))
    return {};
  auto cast = innerOf(v).getDefiningOp<CastOp>();
  auto bn = cast ? cast.getInput().getDefiningOp<BatchNormOp>() : BatchNormOp();
  if (!bn || cast.getInput() != bn.getResult() || bn->getParentOp() != group)
    return {};
  mean = yieldedAs(group, bn.getSavedMean());
  invstd = yieldedAs(group, bn.getSavedInvstd());
  return mean && invstd ? bn : BatchNormOp();
}

/// The normalised result of `bn`, computed again before `b`'s insertion
/// point from `input` (its input, or the same numbers) and the statistics
/// it saved (`mean`, `invstd` as readable there).
Value applyAgain(OpBuilder &b, BatchNormOp bn, Value input, Value mean, Value invstd) {
  return b.create<BatchNormApplyOp>(bn.getLoc(), input, bn.getWeight(), bn.getBias(), mean,
                                    invstd, bn.getGhostBatchAttr(), bn.getGhostStridedAttr());
}

/// Drops the group results nothing reads: their values stay in the body,
/// in registers.
void dropUnreadResults(FusionGroupOp group) {
  if (llvm::all_of(group.getResults(), [](Value r) { return !r.use_empty(); }))
    return;
  auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
  SmallVector<Value> kept, keptResults;
  for (auto [inner, result] : llvm::zip(yield.getValues(), group.getResults()))
    if (!result.use_empty()) {
      kept.push_back(inner);
      keptResults.push_back(result);
    }
  OpBuilder b(group);
  auto smaller = b.create<FusionGroupOp>(group.getLoc(), ValueRange(kept).getTypes(),
                                         group.getKindAttr());
  smaller->setDiscardableAttrs(group->getDiscardableAttrDictionary());
  smaller.getBody().takeBody(group.getBody());
  b.setInsertionPoint(yield);
  b.create<YieldOp>(yield.getLoc(), kept);
  yield.erase();
  for (auto [old, now] : llvm::zip(keptResults, smaller.getResults()))
    old.replaceAllUsesWith(now);
  group.erase();
}

/// The plan of `module` with the unread results of `groups` (fusion groups
/// of the step `train`) dropped, measured on a copy: `module` is left as it is.
FailureOr<MemoryPlanSizes> measureWithoutUnreadResults(ModuleOp module, func::FuncOp train,
                                                       ArrayRef<FusionGroupOp> groups) {
  SmallVector<int64_t> positions; // of the groups among train's, in walk order
  int64_t n = 0;
  train.walk([&](FusionGroupOp g) {
    if (llvm::is_contained(groups, g))
      positions.push_back(n);
    ++n;
  });
  OwningOpRef<ModuleOp> copy = module.clone();
  SmallVector<FusionGroupOp> copies;
  n = 0;
  copy->lookupSymbol<func::FuncOp>(train.getSymName()).walk([&](FusionGroupOp g) {
    if (llvm::is_contained(positions, n))
      copies.push_back(g);
    ++n;
  });
  for (FusionGroupOp g : copies)
    dropUnreadResults(g);
  return measureMemoryPlan(*copy);
}

/// The free recompute: normalised results read only by backward prologues
/// of their own norm move into those prologues. Returns how many.
int64_t recomputeInPrologues(func::FuncOp step, SmallVectorImpl<Attribute> &names) {
  SmallVector<FusionGroupOp> prologues;
  step.walk([&](FusionGroupOp g) {
    if (g.getKind() == FusionGroupOp::kNormBackwardPrologue)
      prologues.push_back(g);
  });
  int64_t count = 0;
  Builder attrs(step.getContext());
  // Shrunk at the end: a group rebuilt earlier would leave stale values in
  // what a later prologue reads.
  llvm::SetVector<FusionGroupOp> shrink;
  for (FusionGroupOp prologue : prologues) {
    // A layer norm's backward recomputes nothing (it reads no normalised
    // value of a batch norm).
    auto backward = dyn_cast<BatchNormBackwardOp>(prologue.getNormBackward());
    if (!backward)
      continue;
    // The values from outside that the prologue's elementwise ops read.
    llvm::SetVector<Value> read;
    for (Operation &op : prologue.getFusedOps())
      if (&op != backward.getOperation())
        for (Value operand : op.getOperands())
          if (operand.getParentRegion() != &prologue.getBody())
            read.insert(operand);
    for (Value v : read) {
      // The normalised value, or (16-bit storage) its 16-bit cast.
      Value mean, invstd;
      BatchNormOp bn = normalisedBy(v, mean, invstd);
      bool stored = !bn;
      if (stored)
        bn = storedNormalisedBy(v, mean, invstd);
      if (!bn || !sameNumbers(bn.getInput(), backward.getInput()) ||
          bn.getWeight() != backward.getWeight() || mean != backward.getSavedMean() ||
          invstd != backward.getSavedInvstd() || bn.getGhostBatch() != backward.getGhostBatch() ||
          bn.getGhostStrided() != backward.getGhostStrided())
        continue;
      // Worth it only if this prologue is the value's last reader: all of
      // them are in this group.
      if (!llvm::all_of(v.getUsers(), [&](Operation *user) {
            return prologue->isAncestor(user);
          }))
        continue;
      Operation *first = nullptr;
      for (Operation *user : v.getUsers())
        if (!first || user->isBeforeInBlock(first))
          first = user;
      // The cast that widens the norm's 16-bit input in the group
      // (tcc-fusion) reads only a value from outside it: it can go first.
      if (auto widening = backward.getInput().getDefiningOp<CastOp>();
          widening && widening->getBlock() == first->getBlock() &&
          first->isBeforeInBlock(widening) &&
          widening.getInput().getParentRegion() != &prologue.getBody())
        widening->moveBefore(first);
      OpBuilder b(first);
      // From the input the norm backward reads (the same numbers as the
      // norm's), rounded to 16 bits again where the forward stored it.
      Value again = applyAgain(b, bn, backward.getInput(), mean, invstd);
      if (stored)
        again = b.create<CastOp>(
            bn.getLoc(), again, TypeAttr::get(cast<ShapedType>(v.getType()).getElementType()));
      v.replaceAllUsesWith(again);
      names.push_back(attrs.getStringAttr(describe(bn)));
      ++count;
      if (auto group = v.getDefiningOp<FusionGroupOp>())
        shrink.insert(group);
    }
  }
  for (FusionGroupOp group : shrink)
    dropUnreadResults(group);
  return count;
}


//===----------------------------------------------------------------------===//
// Recompute under a memory budget
//===----------------------------------------------------------------------===//

/// How dear recomputing an op's value is: the order candidates are tried in.
/// None for ops whose value cannot or should not be computed twice.
std::optional<int> costClass(Operation *op) {
  if (auto group = dyn_cast<FusionGroupOp>(op)) {
    if (group.getKind() == FusionGroupOp::kElementwise ||
        group.getKind() == FusionGroupOp::kNormEpilogue)
      return 0;
    return std::nullopt;
  }
  if (isa<BatchNormOp, BatchNormApplyOp, DropoutOp>(op) ||
      (fusionKindOf(op) == FusionKind::Elementwise && op->getNumRegions() == 0 &&
       !op->hasTrait<mlir::tcc::OpTrait::InPlaceStateUpdate>()))
    return 0;
  if (isa<MaxPool2dOp, AvgPool2dOp>(op))
    return 1;
  if (isa<Conv2dOp, LinearOp>(op))
    return 2;
  return std::nullopt;
}

/// A value that could be computed again for its late readers, with what it
/// costs to (its cost class) and what it may save (its bytes).
struct Candidate {
  Value value;
  int cost;
  int64_t bytes;
};

/// The ops of `group`'s body that `inner` depends on, in order.
SmallVector<Operation *> sliceOf(FusionGroupOp group, Value inner) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work{inner};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || def->getParentRegion() != &group.getBody() || !slice.insert(def))
      continue;
    // A batch norm is recomputed from its input and saved statistics.
    if (auto bn = dyn_cast<BatchNormOp>(def)) {
      work.push_back(bn.getInput());
      continue;
    }
    llvm::append_range(work, def->getOperands());
  }
  SmallVector<Operation *> ordered = slice.takeVector();
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// What buildAgain built: the value, and its ops in order (one op, one
/// group, or either after the casts that widen its 16-bit operands again).
struct Rebuilt {
  Value value;
  SmallVector<Operation *> ops;
};

/// Whether `v` is read at or after `point` (an op of v's block).
bool readFrom(Value v, Operation *point) {
  Block *block = point->getBlock();
  return llvm::any_of(v.getUsers(), [&](Operation *user) {
    Operation *reader = block->findAncestorOpInBlock(*user);
    return reader && !reader->isBeforeInBlock(point);
  });
}

/// Builds, at `b`'s insertion point, the ops that compute `v` again.
/// Fails (a null value) when `v` cannot be (a group's statistics it does
/// not yield). Under 16-bit storage an operand the recomputation reads may
/// be the f32 copy of a 16-bit value that nothing reads from there on:
/// rather than keep that copy alive, the 16-bit value is widened again just
/// before (the same numbers: tcc-widen-16bit's copies are casts of it).
Rebuilt buildAgain(OpBuilder &b, Value v) {
  auto result = cast<OpResult>(v);
  Operation *def = result.getOwner();
  Operation *point = &*b.getInsertionPoint();
  Rebuilt built;
  IRMapping map;
  auto widenAgain = [&](Value operand) {
    if (map.contains(operand) || readFrom(operand, point))
      return;
    Value source = widenedFrom(operand);
    if (!source)
      return;
    auto widened = b.create<CastOp>(operand.getLoc(), source,
                                    TypeAttr::get(b.getF32Type()));
    built.ops.push_back(widened);
    map.map(operand, widened.getResult());
  };

  if (auto bn = dyn_cast<BatchNormOp>(def)) {
    if (result.getResultNumber() != 0)
      return {};
    widenAgain(bn.getInput());
    built.value = applyAgain(b, bn, map.lookupOrDefault(bn.getInput()), bn.getSavedMean(),
                             bn.getSavedInvstd());
    built.ops.push_back(built.value.getDefiningOp());
    return built;
  }
  auto group = dyn_cast<FusionGroupOp>(def);
  if (!group) {
    for (Value operand : def->getOperands())
      widenAgain(operand);
    Operation *clone = b.clone(*def, map);
    built.ops.push_back(clone);
    built.value = clone->getResult(result.getResultNumber());
    return built;
  }

  auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
  Value inner = yield.getValues()[result.getResultNumber()];
  // Only a norm's result is recomputed, never its statistics.
  if (auto bn = inner.getDefiningOp<BatchNormOp>(); bn && inner != bn.getResult())
    return {};
  SmallVector<Operation *> slice = sliceOf(group, inner);
  // A batch norm is applied again from its statistics; any other norm (a
  // layer norm's group) is not recomputed.
  if (llvm::any_of(slice, [](Operation *op) {
        return !isa<BatchNormOp>(op) && fusionKindOf(op) != FusionKind::Elementwise;
      }))
    return {};
  for (Operation *op : slice) {
    // A norm is recomputed from its input (and its saved statistics).
    SmallVector<Value> read;
    if (auto bn = dyn_cast<BatchNormOp>(op))
      read.push_back(bn.getInput());
    else
      llvm::append_range(read, op->getOperands());
    for (Value operand : read)
      if (operand.getParentRegion() != &group.getBody())
        widenAgain(operand);
  }
  auto cloneInto = [&](OpBuilder &at) -> LogicalResult {
    for (Operation *op : slice) {
      if (auto bn = dyn_cast<BatchNormOp>(op)) {
        Value mean = yieldedAs(group, bn.getSavedMean());
        Value invstd = yieldedAs(group, bn.getSavedInvstd());
        if (!mean || !invstd)
          return failure();
        map.map(bn.getResult(),
                applyAgain(at, bn, map.lookupOrDefault(bn.getInput()), mean, invstd));
        continue;
      }
      at.clone(*op, map);
    }
    return success();
  };
  auto fail = [&]() {
    for (Operation *op : llvm::reverse(built.ops))
      op->erase();
    return Rebuilt();
  };
  if (slice.size() == 1) {
    if (failed(cloneInto(b)))
      return fail();
    built.value = map.lookup(inner);
    built.ops.push_back(built.value.getDefiningOp());
    return built;
  }
  // A norm's slice may start with the cast that widens its 16-bit input
  // (tcc-fusion puts it in the norm's group).
  bool norm = llvm::any_of(slice, [](Operation *op) { return isa<BatchNormOp>(op); });
  auto again = b.create<FusionGroupOp>(
      group.getLoc(), TypeRange{v.getType()},
      b.getStringAttr(norm ? FusionGroupOp::kNormEpilogue : FusionGroupOp::kElementwise));
  Block *body = new Block();
  again.getBody().push_back(body);
  OpBuilder inside = OpBuilder::atBlockEnd(body);
  if (failed(cloneInto(inside))) {
    again.erase();
    return fail();
  }
  inside.create<YieldOp>(group.getLoc(), ValueRange{map.lookup(inner)});
  built.ops.push_back(again);
  built.value = again.getResult(0);
  return built;
}

/// Undoes recomputeLate: the late readers read `v` again and what
/// buildAgain built goes.
void undoRecompute(Rebuilt again, Value v) {
  again.value.replaceAllUsesWith(v);
  for (Operation *op : llvm::reverse(again.ops))
    op->erase();
}

/// Splits the readers of `v` at the widest gap between two of them and
/// feeds those after the gap from a recomputation placed before the first
/// of them. A 16-bit value counts its definition as a reader too: it is
/// the copy that the backward reads (the forward's readers read an f32 copy
/// made beside it), so all its readers may be late. Returns what was built,
/// with a null value if `v` has no such gap or cannot be recomputed.
Rebuilt recomputeLate(Value v) {
  Block *block = v.getParentBlock();
  SmallVector<Operation *> readers;
  for (Operation *user : v.getUsers()) {
    Operation *reader = block->findAncestorOpInBlock(*user);
    // A value the step returns or a loop yields is kept.
    if (!reader || reader->hasTrait<mlir::OpTrait::IsTerminator>())
      return {};
    if (!llvm::is_contained(readers, reader))
      readers.push_back(reader);
  }
  if (Operation *def = v.getDefiningOp(); def && isSixteenBit(v) && !readers.empty())
    readers.push_back(def);
  if (readers.size() < 2)
    return {};
  llvm::sort(readers, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  DenseMap<Operation *, int64_t> position;
  int64_t t = 0;
  for (Operation &op : *block)
    position[&op] = t++;
  size_t split = 0;
  int64_t widest = 0;
  for (size_t i = 1; i < readers.size(); ++i) {
    int64_t gap = position[readers[i]] - position[readers[i - 1]];
    if (gap > widest) {
      widest = gap;
      split = i;
    }
  }
  if (widest < 2)
    return {};
  Operation *lateReader = readers[split];
  OpBuilder b(lateReader);
  Rebuilt again = buildAgain(b, v);
  if (!again.value)
    return {};
  v.replaceUsesWithIf(again.value, [&](OpOperand &use) {
    Operation *reader = block->findAncestorOpInBlock(*use.getOwner());
    return !llvm::is_contained(again.ops, reader) && !reader->isBeforeInBlock(lateReader);
  });
  return again;
}

/// The values of `step` that could be recomputed, cheapest and largest
/// first.
SmallVector<Candidate> candidates(func::FuncOp step) {
  SmallVector<Candidate> found;
  step.walk([&](Operation *op) {
    Block *block = op->getBlock();
    bool stepBlock = block == &step.front() || isa<MicroBatchesOp>(op->getParentOp());
    if (!stepBlock)
      return;
    std::optional<int> cost = costClass(op);
    if (!cost)
      return;
    for (Value result : op->getResults())
      if (isa<RankedTensorType>(result.getType()) && !result.use_empty())
        found.push_back({result, *cost, tensorBytes(result.getType())});
  });
  llvm::stable_sort(found, [](const Candidate &a, const Candidate &b) {
    return a.cost != b.cost ? a.cost < b.cost : a.bytes > b.bytes;
  });
  return found;
}

struct RecomputePass : mlir::tcc::impl::RecomputeBase<RecomputePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto train = module.lookupSymbol<func::FuncOp>("train_step");
    if (!train) {
      module.emitError("tcc-recompute needs @train_step; run tcc-build-train-step first");
      return signalPassFailure();
    }
    Builder b(&getContext());
    FailureOr<MemoryPlanSizes> before = measureMemoryPlan(module);
    if (failed(before))
      return signalPassFailure();

    // @train_step_frozen (tcc-frozen-step) shares the scratch arena: it is
    // recomputed as @train_step is; the report counts @train_step's values.
    SmallVector<func::FuncOp> steps{train};
    if (auto frozen = module.lookupSymbol<func::FuncOp>(kFrozenStepName))
      steps.push_back(frozen);
    SmallVector<Attribute> free, budgeted, frozenFree;
    for (func::FuncOp step : steps)
      recomputeInPrologues(step, step == train ? free : frozenFree);

    std::optional<int64_t> budget;
    if (TrainAttr recipe = moduleTrain(module))
      budget = recipe.getMemoryBudget();
    FailureOr<MemoryPlanSizes> now = measureMemoryPlan(module);
    if (failed(now))
      return signalPassFailure();
    int64_t kernelsAdded = 0;
    // Each step's own scratch; the plan's is the largest of them.
    SmallVector<int64_t> own;
    for (func::FuncOp step : steps) {
      FailureOr<int64_t> bytes = planScratch(step, PlanMode::Measure);
      if (failed(bytes))
        return signalPassFailure();
      own.push_back(*bytes);
    }
    SmallVector<llvm::SetVector<FusionGroupOp>> unread(steps.size());
    SmallVector<size_t> next(steps.size(), 0); // the next candidate of each step
    std::vector<SmallVector<Candidate>> tries;
    for (func::FuncOp step : steps)
      tries.push_back(candidates(step));
    // The largest step first, one kept recompute at a time, until the plan
    // fits or no step can shrink.
    while (budget && now->stepBytes() > *budget) {
      size_t s = std::max_element(own.begin(), own.end()) - own.begin();
      func::FuncOp step = steps[s];
      bool kept = false;
      while (!kept && next[s] < tries[s].size()) {
        const Candidate &candidate = tries[s][next[s]++];
        Rebuilt again = recomputeLate(candidate.value);
        if (!again.value)
          continue;
        FailureOr<MemoryPlanSizes> trial = measureMemoryPlan(module);
        if (failed(trial))
          return signalPassFailure();
        FailureOr<int64_t> ownTrial = steps.size() == 1
                                          ? FailureOr<int64_t>(trial->trainScratchBytes)
                                          : planScratch(step, PlanMode::Measure);
        if (failed(ownTrial))
          return signalPassFailure();
        if (*ownTrial >= own[s]) {
          undoRecompute(again, candidate.value);
          continue;
        }
        kept = true;
        now = trial;
        own[s] = *ownTrial;
        if (step == train) {
          budgeted.push_back(b.getStringAttr(describe(again.value.getDefiningOp())));
          kernelsAdded += static_cast<int64_t>(again.ops.size());
        }
        // A group's result that nothing reads any more is not stored.
        if (candidate.value.use_empty())
          if (auto group = candidate.value.getDefiningOp<FusionGroupOp>())
            unread[s].insert(group);
      }
      if (!kept)
        break; // the largest step cannot shrink: neither can the plan
    }
    // Unread results need not be stored, and dropping them usually
    // shrinks the plan; but first fit is not monotone (airbench94 in pure
    // fp16: 884 -> 991 MiB), so they are dropped on a copy first and kept
    // where that plan would grow.
    for (auto [step, groups] : llvm::zip(steps, unread)) {
      if (groups.empty())
        continue;
      FailureOr<MemoryPlanSizes> dropped =
          measureWithoutUnreadResults(module, step, groups.getArrayRef());
      if (failed(dropped))
        return signalPassFailure();
      if (dropped->stepBytes() <= now->stepBytes()) {
        for (FusionGroupOp group : groups)
          dropUnreadResults(group);
        now = dropped;
      }
    }
    // Still over the budget: tcc-plan-memory refuses the plan.

    auto count = [&](int64_t n) { return b.getI64IntegerAttr(n); };
    recordPassResult(module, kPass, "values",
                     count(static_cast<int64_t>(free.size() + budgeted.size())));
    recordPassResult(module, kPass, "free", b.getArrayAttr(free));
    recordPassResult(module, kPass, "for_budget", b.getArrayAttr(budgeted));
    recordPassResult(module, kPass, "kernels_added", count(kernelsAdded));
    recordPassResult(module, kPass, "bytes_saved",
                     count(before->stepBytes() - now->stepBytes()));
    recordPassResult(module, kPass, "peak_bytes_before", count(before->stepBytes()));
    recordPassResult(module, kPass, "peak_bytes_after", count(now->stepBytes()));
  }
};

} // namespace
