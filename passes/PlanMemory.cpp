//===- PlanMemory.cpp - Static memory plan of the step functions ----------===//

#include "passes/Passes.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_PLANMEMORY
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

constexpr int64_t kAlignment = 64;

/// Far above any real workspace, low enough that offsets cannot overflow.
constexpr int64_t kMaxWorkspaceBytes = int64_t(1) << 48;

int64_t alignUp(int64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

int64_t byteSize(Type type) {
  auto shaped = cast<ShapedType>(type);
  return shaped.getNumElements() *
         std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
}

/// Scratch bytes live from the op at `start` to the op at `end` of a block,
/// both included.
struct Interval {
  int64_t start, end, size, offset = -1;
};

/// First fit: the lowest offset that no interval live at the same time
/// overlaps. Intervals come sorted by start.
int64_t assignOffsets(MutableArrayRef<Interval> intervals) {
  int64_t total = 0;
  SmallVector<Interval *> live;
  for (Interval &current : intervals) {
    llvm::erase_if(live, [&](Interval *i) { return i->end < current.start; });
    llvm::sort(live, [](Interval *a, Interval *b) { return a->offset < b->offset; });
    int64_t offset = 0;
    for (Interval *other : live) {
      if (offset + current.size <= other->offset)
        break;
      offset = std::max(offset, alignUp(other->offset + other->size));
    }
    current.offset = offset;
    total = std::max(total, offset + current.size);
    live.push_back(&current);
  }
  return alignUp(total);
}

/// The value whose bytes `op`'s result is in another shape, if `op` is a
/// view (ViewLikeOpInterface: tcc.flatten, tcc.reshape); null otherwise.
Value viewedValue(Operation *op) {
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource();
  return {};
}

/// Adds `base` to every scratch offset planned inside `loop`'s body.
void placeLoopBody(MicroBatchesOp loop, int64_t base) {
  Builder b(loop.getContext());
  loop.getBody().walk([&](Operation *op) {
    if (auto offsets = op->getAttrOfType<DenseI64ArrayAttr>(kOffsetsAttr)) {
      SmallVector<int64_t> moved(offsets.asArrayRef());
      for (int64_t &offset : moved)
        if (offset >= 0)
          offset += base;
      op->setAttr(kOffsetsAttr, b.getDenseI64ArrayAttr(moved));
    }
    if (auto workspace = op->getAttrOfType<IntegerAttr>(kWorkspaceOffsetAttr))
      op->setAttr(kWorkspaceOffsetAttr, b.getI64IntegerAttr(workspace.getInt() + base));
  });
}

FailureOr<int64_t> planLoopBody(MicroBatchesOp loop);

/// The scratch plan of one block: a step function's, or a tcc.micro_batches
/// body's (at offsets relative to the body's own region).
class BlockPlanner {
public:
  explicit BlockPlanner(Block &block) : block(block) {
    for (Operation &op : block)
      index[&op] = static_cast<int64_t>(index.size());
  }

  /// The position of the op of the block that is or holds `op`.
  int64_t position(Operation *op) const {
    return index.lookup(block.findAncestorOpInBlock(*op));
  }

  /// The position of the last op that reads `v` or holds (in a region) an
  /// op that does; -1 if nothing does.
  int64_t lastUse(Value v) const {
    int64_t last = -1;
    for (Operation *user : v.getUsers())
      last = std::max(last, position(user));
    return last;
  }

  /// Plans `op`: scratch for each result that has no state slot
  /// (`slots[r] < 0`, or `slots` empty), live until `lastOf(result)`; the
  /// body region of a loop; the op's workspace.
  LogicalResult planOp(Operation &op, ArrayRef<int64_t> slots,
                       function_ref<int64_t(Value)> lastOf) {
    Builder b(op.getContext());
    op.setAttr(kOffsetsAttr,
               b.getDenseI64ArrayAttr(SmallVector<int64_t>(op.getNumResults(), -1)));
    for (OpResult result : op.getResults())
      if (slots.empty() || slots[result.getResultNumber()] < 0)
        addResult(result, lastOf(result));
    // A loop's body region is live while the loop runs.
    if (auto loop = dyn_cast<MicroBatchesOp>(op)) {
      FailureOr<int64_t> bytes = planLoopBody(loop);
      if (failed(bytes))
        return failure();
      add(Use::LoopBody, &op, 0, {position(&op), position(&op), *bytes});
    }
    return addWorkspace(op);
  }

  /// Runs first fit, records the offsets on the ops, and returns the size of
  /// the block's scratch.
  int64_t assign() {
    int64_t bytes = assignOffsets(intervals);
    Builder b(block.getParent()->getContext());
    for (const Owner &owner : owners) {
      int64_t offset = intervals[owner.interval].offset;
      switch (owner.use) {
      case Use::Result: {
        auto attr = owner.op->getAttrOfType<DenseI64ArrayAttr>(kOffsetsAttr);
        SmallVector<int64_t> offsets(attr.asArrayRef());
        offsets[owner.result] = offset;
        owner.op->setAttr(kOffsetsAttr, b.getDenseI64ArrayAttr(offsets));
        break;
      }
      case Use::Workspace:
        owner.op->setAttr(kWorkspaceOffsetAttr, b.getI64IntegerAttr(offset));
        break;
      case Use::LoopBody:
        placeLoopBody(cast<MicroBatchesOp>(owner.op), offset);
        break;
      }
    }
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

  void add(Use use, Operation *op, unsigned result, Interval interval) {
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
          byteSize(input.getType()) == byteSize(result.getType())) {
        Interval &shared = intervals[it->second];
        shared.end = std::max(shared.end, last);
        intervalOf[result] = it->second;
        owners.push_back({op, Use::Result, result.getResultNumber(), it->second});
        return;
      }
    }
    intervalOf[result] = intervals.size();
    int64_t t = position(op);
    add(Use::Result, op, result.getResultNumber(),
        {t, std::max(t, last), byteSize(result.getType())});
  }

  /// The scratch `op` asks for itself (tcc.workspace_bytes), live while it
  /// runs only.
  LogicalResult addWorkspace(Operation &op) {
    op.removeAttr(kWorkspaceOffsetAttr);
    Attribute attr = op.getAttr(kWorkspaceBytesAttr);
    if (!attr)
      return success();
    auto bytes = dyn_cast<IntegerAttr>(attr);
    if (!bytes || !bytes.getType().isSignlessInteger(64) || bytes.getInt() < 0 ||
        bytes.getInt() > kMaxWorkspaceBytes)
      return op.emitOpError("'")
             << kWorkspaceBytesAttr << "' must be an i64 in [0, 2^48], got " << attr;
    if (bytes.getInt() > 0)
      add(Use::Workspace, &op, 0, {position(&op), position(&op), bytes.getInt()});
    return success();
  }

  Block &block;
  DenseMap<Operation *, int64_t> index;
  SmallVector<Interval> intervals;
  SmallVector<Owner> owners;
  /// The interval that holds each value with scratch in this block.
  DenseMap<Value, size_t> intervalOf;
};

/// Plans the values a tcc.micro_batches body defines, at offsets relative to
/// the body's own region of scratch, and returns its size. The region is
/// reused by every iteration. The body's arguments take no memory: the
/// slices point into the batch, the carried values are the loop's results.
FailureOr<int64_t> planLoopBody(MicroBatchesOp loop) {
  BlockPlanner plan(loop.getBody().front());
  for (Operation &op : loop.getBody().front()) {
    if (isa<YieldOp, arith::ConstantOp>(op))
      continue;
    if (failed(plan.planOp(op, {}, [&](Value v) { return plan.lastUse(v); })))
      return failure();
  }
  return plan.assign();
}

/// Plans one step function whose `tcc.state` arguments are state slots.
LogicalResult planFunction(func::FuncOp fn) {
  Block &block = fn.front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  BlockPlanner plan(block);
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

  // A state update that could not be in place is copied at the end.
  auto lastOf = [&](Value v) { return replaces.count(v) ? end : plan.lastUse(v); };

  Builder b(fn.getContext());
  for (Operation &op : block) {
    if (&op == ret || isa<arith::ConstantOp>(op))
      continue;
    int64_t t = plan.position(&op);
    SmallVector<int64_t> slots(op.getNumResults(), -1);
    for (auto [r, result] : llvm::enumerate(op.getResults())) {
      auto it = replaces.find(result);
      if (it == replaces.end() ||
          !op.hasTrait<mlir::tcc::OpTrait::InPlaceStateUpdate>())
        continue;
      int64_t slot = it->second;
      Value current = slotContent[slot];
      bool reads = llvm::is_contained(op.getOperands(), current);
      bool lastReader = llvm::all_of(current.getUsers(), [&](Operation *user) {
        return user == &op || plan.position(user) < t;
      });
      if (reads && lastReader) {
        slots[r] = slot;
        slotContent[slot] = result;
      }
    }
    if (failed(plan.planOp(op, slots, lastOf)))
      return failure();
    if (llvm::any_of(slots, [](int64_t s) { return s >= 0; }))
      op.setAttr(kStateSlotsAttr, b.getDenseI64ArrayAttr(slots));
  }
  fn->setAttr(kScratchBytesAttr, b.getI64IntegerAttr(plan.assign()));
  return success();
}

struct PlanMemoryPass : mlir::tcc::impl::PlanMemoryBase<PlanMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto train = module.lookupSymbol<func::FuncOp>("train_step");
    if (!train) {
      module.emitError("tcc-plan-memory needs @train_step; run "
                       "tcc-build-train-step first");
      return signalPassFailure();
    }
    // One state layout for both steps: the arguments tagged tcc.state.
    Builder b(module.getContext());
    SmallVector<int64_t> stateOffsets;
    int64_t stateBytes = 0;
    for (BlockArgument arg : train.getArguments())
      if (train.getArgAttr(arg.getArgNumber(), kStateAttr)) {
        stateOffsets.push_back(stateBytes);
        stateBytes += alignUp(byteSize(arg.getType()));
      }
    module->setAttr(kStateOffsetsAttr, b.getDenseI64ArrayAttr(stateOffsets));
    module->setAttr(kStateBytesAttr, b.getI64IntegerAttr(stateBytes));
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && failed(planFunction(fn)))
        return signalPassFailure();
  }
};

} // namespace
