//===- MemoryPlan.cpp - The scratch and state plan of the step -----------===//
//
// The planner tcc-plan-memory records and tcc-recompute asks (PlanMode):
// every value a step computes gets scratch bytes from the op that writes it
// to its last reader; ScratchPacking.cpp packs those intervals; the state arena is
// the tcc.state arguments, one after another.
//
//===----------------------------------------------------------------------===//

#include "passes/MemoryPlan.h"
#include "passes/ScratchPacking.h"

#include "llvm/Support/FormatVariadic.h"

#include "ir/PhysicalLayout.h"
#include "ir/TccAttrNames.h"
#include "ir/TccInterfaces.h"
#include "ir/TccOps.h"
#include "ir/TccPlan.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The value whose bytes `op`'s result is in another shape, if `op` is a
/// view (ViewLikeOpInterface: tcc.flatten, tcc.reshape); null otherwise.
Value viewedValue(Operation *op) {
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource();
  return {};
}

/// Adds `base` to every scratch offset planned inside `loop`'s body.
void placeLoopBody(MicroBatchesOp loop, int64_t base) {
  MLIRContext *context = loop.getContext();
  loop.getBody().walk([&](Operation *op) {
    if (PlacementAttr placement = getPlacement(op)) {
      SmallVector<int64_t> moved(placement.getScratch());
      for (int64_t &offset : moved)
        if (offset >= 0)
          offset += base;
      setPlacement(op, PlacementAttr::get(context, moved, placement.getState()));
    }
    if (WorkspaceAttr workspace = getWorkspace(op); workspace && workspace.getOffset())
      setWorkspace(op, WorkspaceAttr::get(context, workspace.getBytes(),
                                          *workspace.getOffset() + base));
  });
}

FailureOr<int64_t> planLoopBody(MicroBatchesOp loop, PlanMode mode);

/// The scratch plan of one block: a step function's, or a tcc.micro_batches
/// body's (at offsets relative to the body's own region).
class BlockPlanner {
public:
  BlockPlanner(Block &block, PlanMode mode) : block(block), record(mode == PlanMode::Record) {
    for (Operation &op : block)
      index[&op] = static_cast<int64_t>(index.size());
  }

  /// The position of the op of the block that is or holds `op`.
  int64_t position(Operation *op) const {
    return index.lookup(block.findAncestorOpInBlock(*op));
  }

  /// The position of the last op that reads `v` or holds (in a region) an
  /// op that does; -1 if nothing does. A collective on a side stream
  /// (tcc.side_stream) reads its inputs until the step's stream joins it:
  /// the ops in between run beside it and must not write over them.
  int64_t lastUse(Value v) const {
    int64_t last = -1;
    for (Operation *user : v.getUsers()) {
      last = std::max(last, position(user));
      Operation *reader = block.findAncestorOpInBlock(*user);
      if (reader && reader->hasAttr(kSideStreamAttr))
        if (Operation *join = sideStreamJoin(reader))
          last = std::max(last, position(join));
    }
    return last;
  }

  /// Plans `op`: scratch for each result that has no state slot
  /// (`slots[r] < 0`, or `slots` empty), live until `lastOf(result)`; the
  /// body region of a loop; the op's workspace.
  LogicalResult planOp(Operation &op, ArrayRef<int64_t> slots,
                       function_ref<int64_t(Value)> lastOf) {
    if (record) {
      // The scratch offsets are filled in by assign().
      bool inState = llvm::any_of(slots, [](int64_t s) { return s >= 0; });
      placements[&op] = {SmallVector<int64_t>(op.getNumResults(), -1),
                         inState ? SmallVector<int64_t>(slots) : SmallVector<int64_t>()};
    }
    for (OpResult result : op.getResults())
      if (slots.empty() || slots[result.getResultNumber()] < 0)
        addResult(result, lastOf(result));
    // A loop's body region is live while the loop runs.
    if (auto loop = dyn_cast<MicroBatchesOp>(op)) {
      FailureOr<int64_t> bytes = planLoopBody(loop, record ? PlanMode::Record : PlanMode::Measure);
      if (failed(bytes))
        return failure();
      add(Use::LoopBody, &op, 0, {position(&op), position(&op), *bytes});
    }
    return addWorkspace(op);
  }

  /// Runs first fit, records the offsets on the ops, and returns the size of
  /// the block's scratch.
  int64_t assign() {
    int64_t bytes = packScratch(intervals);
    if (!record)
      return bytes;
    MLIRContext *context = block.getParent()->getContext();
    for (const Owner &owner : owners) {
      int64_t offset = intervals[owner.interval].offset;
      switch (owner.use) {
      case Use::Result:
        placements[owner.op].scratch[owner.result] = offset;
        break;
      case Use::Workspace:
        setWorkspace(owner.op,
                     WorkspaceAttr::get(context, getWorkspace(owner.op).getBytes(), offset));
        break;
      case Use::LoopBody:
        placeLoopBody(cast<MicroBatchesOp>(owner.op), offset);
        break;
      }
    }
    for (Operation &op : block)
      if (auto it = placements.find(&op); it != placements.end())
        setPlacement(&op, PlacementAttr::get(context, it->second.scratch, it->second.state));
    return bytes;
  }

private:
  /// What an interval holds for its op.
  enum class Use { Result, Workspace, LoopBody };
  struct Owner {
    Operation *op;
    Use use;
    unsigned result;
    size_t interval;
  };

  void add(Use use, Operation *op, unsigned result, ScratchInterval interval) {
    owners.push_back({op, use, result, intervals.size()});
    intervals.push_back(interval);
  }

  /// Scratch for `result` until the op at `last`. A view of a value that has
  /// scratch in this block takes that value's bytes, kept live until the
  /// view's last use too. Nothing writes into a scratch value after its op,
  /// so the view sees the same bytes for as long as it lives. Views of
  /// arguments and of state slots (which in-place updates overwrite) get
  /// bytes of their own.
  void addResult(OpResult result, int64_t last) {
    Operation *op = result.getOwner();
    if (Value input = viewedValue(op)) {
      auto it = intervalOf.find(input);
      if (it != intervalOf.end() &&
          tensorBytes(input.getType()) == tensorBytes(result.getType())) {
        // The index, not the iterator: inserting below may grow the map.
        size_t index = it->second;
        intervals[index].end = std::max(intervals[index].end, last);
        intervalOf[result] = index;
        owners.push_back({op, Use::Result, result.getResultNumber(), index});
        return;
      }
    }
    if (std::optional<size_t> index = dyingOperandFor(result)) {
      intervals[*index].end = std::max(intervals[*index].end, last);
      intervalOf[result] = *index;
      claimed.insert(*index);
      owners.push_back({op, Use::Result, result.getResultNumber(), *index});
      return;
    }
    intervalOf[result] = intervals.size();
    int64_t t = position(op);
    add(Use::Result, op, result.getResultNumber(),
        {t, std::max(t, last), tensorBytes(result.getType())});
  }

  /// The scratch of an operand that `result` may take over: an elementwise
  /// op (or an elementwise fusion group) writes element i after it reads
  /// element i of its operands, so a result can go in place of an operand
  /// of the same size that nothing reads afterwards. (On the cpu target,
  /// where tcc-widen-16bit brackets 16-bit values with casts, this is
  /// what keeps a fused cast-down-cast-up pair from holding its f32 input
  /// and output at once.)
  std::optional<size_t> dyingOperandFor(OpResult result) {
    Operation *op = result.getOwner();
    auto group = dyn_cast<FusionGroupOp>(op);
    if (group ? group.getKind() != FusionGroupOp::kElementwise
              : fusionKindOf(op) != FusionKind::Elementwise)
      return std::nullopt;
    if (op != claimant) {
      claimant = op;
      claimed.clear();
    }
    int64_t here = position(op);
    int64_t bytes = tensorBytes(result.getType());
    std::optional<size_t> found;
    auto consider = [&](Value operand) {
      auto it = intervalOf.find(operand);
      if (found || it == intervalOf.end() || claimed.contains(it->second) ||
          changesLayout(operand, result))
        return;
      const ScratchInterval &interval = intervals[it->second];
      if (interval.end == here && interval.start < here && interval.size == bytes &&
          tensorBytes(operand.getType()) == bytes)
        found = it->second;
    };
    if (!group) {
      for (Value operand : op->getOperands())
        consider(operand);
      return found;
    }
    group.getBody().walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (!group->isAncestor(operand.getParentRegion()->getParentOp()))
          consider(operand);
    });
    return found;
  }

  /// The scratch `op` asks for itself (tcc.workspace; its verifier keeps
  /// the bytes in [0, 2^48]), live while it runs only.
  LogicalResult addWorkspace(Operation &op) {
    WorkspaceAttr workspace = getWorkspace(&op);
    if (!workspace)
      return success();
    if (record)
      setWorkspace(&op, WorkspaceAttr::get(op.getContext(), workspace.getBytes()));
    if (workspace.getBytes() > 0)
      add(Use::Workspace, &op, 0, {position(&op), workspaceEnd(op), workspace.getBytes()});
    return success();
  }

  /// Where `op`'s workspace dies: with the op, or for a collective on a
  /// side stream (a ZeRO-2 bucket's padded message) at its join.
  int64_t workspaceEnd(Operation &op) const {
    if (op.hasAttr(kSideStreamAttr))
      if (Operation *join = sideStreamJoin(&op))
        return position(join);
    return position(&op);
  }

  /// Where each planned op's results go, written once they are all known.
  struct Place {
    SmallVector<int64_t> scratch, state;
  };

  Block &block;
  bool record; ///< write the plan on the ops (PlanMode::Record)
  DenseMap<Operation *, Place> placements;
  DenseMap<Operation *, int64_t> index;
  SmallVector<ScratchInterval> intervals;
  SmallVector<Owner> owners;
  /// The interval that holds each value with scratch in this block.
  DenseMap<Value, size_t> intervalOf;
  /// The intervals results of `claimant` took over from dying operands:
  /// two results of one op never share one.
  Operation *claimant = nullptr;
  DenseSet<size_t> claimed;
};

/// Plans the values a tcc.micro_batches body defines, at offsets relative to
/// the body's own region of scratch, and returns its size. The region is
/// reused by every iteration. The body's arguments take no memory: the
/// slices point into the batch, the carried values are the loop's results.
FailureOr<int64_t> planLoopBody(MicroBatchesOp loop, PlanMode mode) {
  BlockPlanner plan(loop.getBody().front(), mode);
  for (Operation &op : loop.getBody().front()) {
    if (isa<YieldOp, arith::ConstantOp>(op))
      continue;
    if (failed(plan.planOp(op, {}, [&](Value v) { return plan.lastUse(v); })))
      return failure();
  }
  return plan.assign();
}

/// The value the group yields as `result`.
Value yielded(FusionGroupOp group, OpResult result) {
  auto yield = cast<YieldOp>(group.getBody().front().getTerminator());
  return yield.getValues()[result.getResultNumber()];
}

/// The op that computes `result` and may write it over the state slot it
/// reads (InPlaceStateUpdate): the result's own op, or, for a fusion
/// group's result, the op inside the group that yields it. Null if none.
Operation *inPlaceWriter(OpResult result) {
  Operation *op = result.getOwner();
  if (auto group = dyn_cast<FusionGroupOp>(op))
    op = yielded(group, result).getDefiningOp();
  if (!op || !op->hasTrait<mlir::tcc::OpTrait::InPlaceStateUpdate>())
    return nullptr;
  return op;
}

/// The value of `block` that holds `v`: v itself, or, for a value a fusion
/// group's body yields, the group's result; null for a value a group keeps
/// inside.
Value heldIn(Block &block, Value v) {
  if (v.getParentBlock() == &block)
    return v;
  auto group = dyn_cast<FusionGroupOp>(v.getParentBlock()->getParentOp());
  if (!group || group->getBlock() != &block)
    return Value();
  for (OpOperand &use : v.getUses())
    if (isa<YieldOp>(use.getOwner()))
      return group->getResult(use.getOperandNumber());
  return Value();
}

/// Values that a later in-place update overwrites in the state slot it
/// returns, each with that slot: a batch norm's new running mean that
/// Lookahead then moves, the SGD step's new weights that Lookahead moves.
/// Such a value may take the slot too where its own update reads the slot
/// (planFunction checks), so the whole chain of updates runs in the state's
/// bytes and nothing is copied at the end. Only when nothing reads the value
/// after the update that overwrites it: every reader runs before it (inside
/// the same group: before it in the group's order), or is it.
DenseMap<Value, int64_t> overwrittenInSlot(Block &block, func::ReturnOp ret,
                                           const DenseMap<Value, int64_t> &replaces) {
  DenseMap<Value, int64_t> out;
  auto before = [&](Operation *user, Operation *writer) {
    if (user == writer || (isa<YieldOp>(user) && user->getBlock() == writer->getBlock()))
      return true;
    if (user->getBlock() == writer->getBlock())
      return user->isBeforeInBlock(writer);
    Operation *a = block.findAncestorOpInBlock(*user), *b = block.findAncestorOpInBlock(*writer);
    return a && b && a != b && a->isBeforeInBlock(b);
  };
  for (Value returned : ret.getOperands()) {
    auto found = replaces.find(returned);
    if (found == replaces.end())
      continue;
    int64_t slot = found->second;
    auto result = dyn_cast<OpResult>(returned);
    Operation *writer = result ? inPlaceWriter(result) : nullptr;
    while (writer) {
      Operation *next = nullptr;
      for (Value operand : writer->getOperands()) {
        auto held = dyn_cast_if_present<OpResult>(heldIn(block, operand));
        if (!held || held.getType() != returned.getType() || replaces.count(held) ||
            out.count(held) || !inPlaceWriter(held))
          continue;
        bool readFirst = llvm::all_of(operand.getUses(), [&](OpOperand &use) {
                           return before(use.getOwner(), writer);
                         }) &&
                         (held == operand || held.use_empty());
        if (!readFirst)
          continue;
        out.try_emplace(held, slot);
        next = inPlaceWriter(held);
        break;
      }
      writer = next;
    }
  }
  return out;
}

LogicalResult planFunction(func::FuncOp fn, PlanMode mode, int64_t &bytes) {
  Block &block = fn.front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  BlockPlanner plan(block, mode);
  int64_t end = plan.position(ret);

  // The state slot each argument is and each returned value replaces.
  DenseMap<StringRef, int64_t> slotOfName;
  SmallVector<Value> slotContent;
  for (BlockArgument arg : fn.getArguments())
    if (auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kStateAttr)) {
      slotOfName[name.getValue()] = slotContent.size();
      slotContent.push_back(arg);
    }
  DenseMap<Value, int64_t> replaces;
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    if (auto name = fn.getResultAttrOfType<StringAttr>(i, kStateAttr))
      replaces.try_emplace(v, slotOfName.lookup(name.getValue()));

  DenseMap<Value, int64_t> overwritten = overwrittenInSlot(block, ret, replaces);

  // A state update that could not be in place is copied at the end.
  auto lastOf = [&](Value v) { return replaces.count(v) ? end : plan.lastUse(v); };

  for (Operation &op : block) {
    if (&op == ret || isa<arith::ConstantOp>(op))
      continue;
    int64_t t = plan.position(&op);
    SmallVector<int64_t> slots(op.getNumResults(), -1);
    for (auto [r, result] : llvm::enumerate(op.getResults())) {
      auto it = replaces.find(result);
      if (it == replaces.end() && (it = overwritten.find(result)) == overwritten.end())
        continue;
      Operation *writer = inPlaceWriter(result);
      if (!writer)
        continue;
      int64_t slot = it->second;
      Value current = slotContent[slot], read = current;
      // An earlier result of the same group (overwrittenInSlot checked its
      // readers inside the group): the writer reads the value yielded for it.
      if (auto group = dyn_cast<FusionGroupOp>(&op); group && current.getDefiningOp() == &op)
        read = yielded(group, cast<OpResult>(current));
      bool reads = llvm::is_contained(writer->getOperands(), read);
      bool lastReader = llvm::all_of(current.getUsers(), [&](Operation *user) {
        return user == writer || plan.position(user) < t;
      });
      if (reads && lastReader) {
        slots[r] = slot;
        slotContent[slot] = result;
      }
    }
    if (failed(plan.planOp(op, slots, lastOf)))
      return failure();
  }
  bytes = plan.assign();
  if (mode == PlanMode::Record)
    setScratchArena(fn, ScratchArenaAttr::get(fn.getContext(), bytes));
  return success();
}

} // namespace

FailureOr<int64_t> tcc::planScratch(func::FuncOp fn, PlanMode mode) {
  int64_t bytes = 0;
  if (failed(planFunction(fn, mode, bytes)))
    return failure();
  return bytes;
}

int64_t tcc::layOutState(func::FuncOp train, SmallVectorImpl<int64_t> &offsets) {
  int64_t bytes = 0;
  for (BlockArgument arg : train.getArguments())
    if (train.getArgAttr(arg.getArgNumber(), kStateAttr)) {
      offsets.push_back(bytes);
      bytes += alignToPlan(tensorBytes(arg.getType()));
    }
  return bytes;
}

/// One training batch: the step's input and labels arguments.
static int64_t batchBytes(func::FuncOp train) {
  int64_t bytes = 0;
  for (unsigned i = 0; i < train.getNumArguments(); ++i) {
    auto role = train.getArgAttrOfType<StringAttr>(i, kRoleAttr);
    if (role && (role.getValue() == role::kInput || role.getValue() == role::kLabels))
      bytes += tensorBytes(train.getArgument(i).getType());
  }
  return bytes;
}

int64_t tcc::MemoryPlanSizes::stepBytes() const {
  return stateBytes + std::max(trainScratchBytes, evalScratchBytes) + batchBytes;
}

FailureOr<tcc::MemoryPlanSizes> tcc::readMemoryPlan(ModuleOp module) {
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  auto eval = module.lookupSymbol<func::FuncOp>("eval_step");
  StateArenaAttr state = getStateArena(module);
  if (!train || !state)
    return failure();
  auto scratch = [](func::FuncOp fn) -> int64_t {
    ScratchArenaAttr arena = fn ? getScratchArena(fn) : nullptr;
    return arena ? arena.getBytes() : 0;
  };
  MemoryPlanSizes sizes;
  sizes.stateBytes = state.getBytes();
  sizes.trainScratchBytes = scratch(train);
  if (auto frozen = module.lookupSymbol<func::FuncOp>(kFrozenStepName))
    sizes.trainScratchBytes = std::max(sizes.trainScratchBytes, scratch(frozen));
  sizes.evalScratchBytes = scratch(eval);
  for (StringRef name : {StringRef("eval_step_plain"), StringRef(kPredictStepName)})
    if (auto other = module.lookupSymbol<func::FuncOp>(name))
      sizes.evalScratchBytes = std::max(sizes.evalScratchBytes, scratch(other));
  sizes.batchBytes = batchBytes(train);
  return sizes;
}

FailureOr<tcc::MemoryPlanSizes> tcc::measureMemoryPlan(ModuleOp module) {
  auto train = module.lookupSymbol<func::FuncOp>("train_step");
  if (!train)
    return failure();
  MemoryPlanSizes sizes;
  SmallVector<int64_t> offsets;
  sizes.stateBytes = layOutState(train, offsets);
  sizes.batchBytes = batchBytes(train);
  FailureOr<int64_t> trainScratch = planScratch(train, PlanMode::Measure);
  if (failed(trainScratch))
    return failure();
  sizes.trainScratchBytes = *trainScratch;
  if (auto frozen = module.lookupSymbol<func::FuncOp>(kFrozenStepName)) {
    FailureOr<int64_t> frozenScratch = planScratch(frozen, PlanMode::Measure);
    if (failed(frozenScratch))
      return failure();
    sizes.trainScratchBytes = std::max(sizes.trainScratchBytes, *frozenScratch);
  }
  for (StringRef name : {StringRef("eval_step"), StringRef("eval_step_plain"),
                         StringRef(kPredictStepName)})
    if (auto eval = module.lookupSymbol<func::FuncOp>(name)) {
      FailureOr<int64_t> evalScratch = planScratch(eval, PlanMode::Measure);
      if (failed(evalScratch))
        return failure();
      sizes.evalScratchBytes = std::max(sizes.evalScratchBytes, *evalScratch);
    }
  return sizes;
}

std::string tcc::mebibytes(int64_t bytes) {
  return llvm::formatv("{0:F1} MiB", bytes / 1048576.0).str();
}
