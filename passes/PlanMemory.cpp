//===- PlanMemory.cpp - Static memory plan of the step functions ----------===//

#include "passes/Passes.h"

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

int64_t alignUp(int64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

int64_t byteSize(Type type) {
  auto shaped = cast<ShapedType>(type);
  return shaped.getNumElements() *
         std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
}

/// A tensor waiting for, or holding, scratch memory.
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

/// Records `offset` as where result `r` of `op` lives (tcc.offsets).
void setOffset(Operation *op, unsigned r, int64_t offset) {
  SmallVector<int64_t> offsets(op->getAttrOfType<DenseI64ArrayAttr>("tcc.offsets").asArrayRef());
  offsets[r] = offset;
  op->setAttr("tcc.offsets", Builder(op->getContext()).getDenseI64ArrayAttr(offsets));
}

/// The op of `block` that is or holds `user`.
int64_t positionIn(Block &block, const DenseMap<Operation *, int64_t> &index,
                   Operation *user) {
  return index.lookup(block.findAncestorOpInBlock(*user));
}

/// Plans the values a tcc.micro_batches body defines, at offsets relative to
/// the body's own region of scratch, and returns its size. The region is
/// reused by every iteration. The body's arguments take no memory: the
/// slices point into the batch, the carried values are the loop's results.
int64_t planLoopBody(MicroBatchesOp loop) {
  Block &block = loop.getBody().front();
  DenseMap<Operation *, int64_t> index;
  for (Operation &op : block)
    index[&op] = static_cast<int64_t>(index.size());
  Builder b(loop.getContext());
  SmallVector<Interval> intervals;
  SmallVector<std::pair<Operation *, unsigned>> owners;
  for (Operation &op : block) {
    if (isa<YieldOp, arith::ConstantOp>(op))
      continue;
    int64_t t = index[&op];
    for (auto [r, result] : llvm::enumerate(op.getResults())) {
      int64_t last = t;
      for (Operation *user : result.getUsers())
        last = std::max(last, positionIn(block, index, user));
      intervals.push_back({t, last, byteSize(result.getType())});
      owners.push_back({&op, static_cast<unsigned>(r)});
    }
    op.setAttr("tcc.offsets",
               b.getDenseI64ArrayAttr(SmallVector<int64_t>(op.getNumResults(), -1)));
  }
  int64_t bytes = assignOffsets(intervals);
  for (auto [interval, owner] : llvm::zip(intervals, owners)) {
    auto [op, r] = owner;
    setOffset(op, r, interval.offset);
  }
  return bytes;
}

/// Moves the offsets of a loop body planned by planLoopBody to `base`.
void placeLoopBody(MicroBatchesOp loop, int64_t base) {
  Builder b(loop.getContext());
  for (Operation &op : loop.getBody().front())
    if (auto offsets = op.getAttrOfType<DenseI64ArrayAttr>("tcc.offsets")) {
      SmallVector<int64_t> moved(offsets.asArrayRef());
      for (int64_t &offset : moved)
        offset += base;
      op.setAttr("tcc.offsets", b.getDenseI64ArrayAttr(moved));
    }
}

/// Plans one step function whose `tcc.state` arguments are state slots.
void planFunction(func::FuncOp fn) {
  Block &block = fn.front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  DenseMap<Operation *, int64_t> index;
  for (Operation &op : block)
    index[&op] = static_cast<int64_t>(index.size());
  int64_t end = index[ret];

  // The state slot each argument is and each returned value replaces.
  DenseMap<StringRef, int64_t> slotOfName;
  SmallVector<Value> slotContent;
  for (BlockArgument arg : fn.getArguments())
    if (auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tcc.state")) {
      slotOfName[name.getValue()] = slotContent.size();
      slotContent.push_back(arg);
    }
  DenseMap<Value, int64_t> replaces;
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    if (auto name = fn.getResultAttrOfType<StringAttr>(i, "tcc.state"))
      replaces.try_emplace(v, slotOfName.lookup(name.getValue()));

  auto lastUse = [&](Value v) {
    int64_t last = -1;
    for (Operation *user : v.getUsers())
      last = std::max(last, positionIn(block, index, user));
    return last;
  };

  Builder b(fn.getContext());
  SmallVector<Interval> intervals;
  SmallVector<std::pair<Operation *, unsigned>> owners;
  for (Operation &op : block) {
    if (&op == ret || isa<arith::ConstantOp>(op))
      continue;
    int64_t t = index[&op];
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
        return user == &op || positionIn(block, index, user) < t;
      });
      if (reads && lastReader) {
        slots[r] = slot;
        slotContent[slot] = result;
      }
    }
    SmallVector<int64_t> offsets(op.getNumResults(), -1);
    for (auto [r, result] : llvm::enumerate(op.getResults())) {
      if (slots[r] >= 0)
        continue;
      // A state update that could not be in place is copied at the end.
      int64_t last = replaces.count(result) ? end : std::max(t, lastUse(result));
      intervals.push_back({t, last, byteSize(result.getType())});
      owners.push_back({&op, static_cast<unsigned>(r)});
    }
    op.setAttr("tcc.offsets", b.getDenseI64ArrayAttr(offsets));
    if (llvm::any_of(slots, [](int64_t s) { return s >= 0; }))
      op.setAttr("tcc.state_slots", b.getDenseI64ArrayAttr(slots));
    // A loop's body region is live while the loop runs (owner: the result
    // index past the last).
    if (auto loop = dyn_cast<MicroBatchesOp>(op)) {
      intervals.push_back({t, t, planLoopBody(loop)});
      owners.push_back({&op, op.getNumResults()});
    }
  }
  int64_t scratch = assignOffsets(intervals);
  for (auto [interval, owner] : llvm::zip(intervals, owners)) {
    auto [op, r] = owner;
    if (r == op->getNumResults()) {
      placeLoopBody(cast<MicroBatchesOp>(op), interval.offset);
      continue;
    }
    setOffset(op, r, interval.offset);
  }
  fn->setAttr("tcc.scratch_bytes", b.getI64IntegerAttr(scratch));
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
      if (train.getArgAttr(arg.getArgNumber(), "tcc.state")) {
        stateOffsets.push_back(stateBytes);
        stateBytes += alignUp(byteSize(arg.getType()));
      }
    module->setAttr("tcc.state_offsets", b.getDenseI64ArrayAttr(stateOffsets));
    module->setAttr("tcc.state_bytes", b.getI64IntegerAttr(stateBytes));
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal())
        planFunction(fn);
  }
};

} // namespace
