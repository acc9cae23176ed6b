//===- Fusion.cpp - Ops that run as one kernel into tcc.fusion_group ------===//
//
// See Passes.td and docs/passes.md. Groups are formed greedily, per block,
// from what each op declares (FusionOpInterface), in this order: the
// target's library epilogues (its pattern table, target/FusionPattern.h);
// an op whose kernel applies the elementwise consumers of a result (a
// norm's epilogue; a layer norm's kernel also computes its input's
// producers) and one whose kernel computes the elementwise producers of an
// operand (a norm backward's prologue); the Broadcast updates of
// state in place, as one multi-tensor group; then chains of Elementwise
// ops.
// A group sits where its last op was; every value that leaves it is used
// after that point only, so moving its earlier ops down keeps the order of
// every read and write.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/PassReport.h"
#include "target/FusionPattern.h"

#include "ir/PhysicalLayout.h"
#include "ir/PlannedViews.h"
#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "ir/TccPlan.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_FUSION
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// An op that can join a loop over `elements` elements: Elementwise, every
/// operand and result a tensor of that size, f32, except that a cast
/// between f32 and a 16-bit float has its 16-bit side. That is how 16-bit
/// storage fuses on the cpu target, where every other op computes on f32
/// copies (tcc-widen-16bit): the loop converts where the casts are, so
/// every value is rounded where it would be stored.
bool joinsLoop(Operation *op, int64_t elements) {
  if (fusionKindOf(op) != FusionKind::Elementwise || op->getNumRegions() != 0)
    return false;
  auto elementOf = [&](Type type) -> Type {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getNumElements() == elements ? tensor.getElementType() : Type();
  };
  if (isa<CastOp>(op)) {
    if (changesLayout(op->getOperand(0), op->getResult(0)))
      return false;
    Type from = elementOf(op->getOperand(0).getType()),
         to = elementOf(op->getResult(0).getType());
    auto storable = [](Type t) { return t && (t.isF32() || t.isF16() || t.isBF16()); };
    return storable(from) && storable(to) && (from.isF32() || to.isF32());
  }
  auto f32 = [&](Type type) {
    Type element = elementOf(type);
    return element && element.isF32();
  };
  return llvm::all_of(op->getOperandTypes(), f32) && llvm::all_of(op->getResultTypes(), f32);
}

/// Updates (and casts) per multi-tensor group. A kernel's arguments are bounded (CUDA:
/// 4 KiB of parameters, which is why PyTorch's multi_tensor_apply launches
/// at most about a hundred tensors at a time), and the CPU target passes
/// every buffer of a group as a parameter of one function, which the C++
/// compiler builds in time quadratic in their number.
constexpr size_t kMaxUpdatesPerGroup = 64;

int64_t elementsOf(Value v) { return cast<RankedTensorType>(v.getType()).getNumElements(); }

class BlockFuser {
public:
  /// Counts the groups it forms, by kind, and the ops they hold, into
  /// `groupsByKind` and `opsFused`.
  BlockFuser(Block &block, ArrayRef<const FusionPattern *> epiloguePatterns,
             bool multiTensorCasts, llvm::StringMap<int64_t> &groupsByKind, int64_t &opsFused)
      : block(block), epiloguePatterns(epiloguePatterns), multiTensorCasts(multiTensorCasts),
        groupsByKind(groupsByKind), opsFused(opsFused) {}

  /// Forms the groups of the block.
  void run();

private:
  /// The op of this block that is or holds `op`, or null.
  Operation *inBlock(Operation *op) const { return block.findAncestorOpInBlock(*op); }

  /// True when the ops can run where the last of them is: every value they
  /// produce is read, outside them, only after it.
  bool canSinkToLast(const llvm::SetVector<Operation *> &members) const;

  /// Adds to `members` the elementwise consumers (of `elements` elements)
  /// of their results, as long as the group stays sinkable.
  void growConsumers(llvm::SetVector<Operation *> &members, int64_t elements);

  /// Adds to `members` the elementwise producers of `value` whose results
  /// are read by the group only, and not by an op of `fromMemory`.
  void growProducers(llvm::SetVector<Operation *> &members, Value value, int64_t elements,
                     const llvm::SmallPtrSetImpl<Operation *> *fromMemory = nullptr);

  /// Adds to `members` the elementwise producers of `value`, the input a
  /// norm's kernel computes as it reads it (a layer norm's residual add).
  /// A producer others read too joins where the group can still sit at its
  /// last op; the group then yields its value for them.
  void growInputProducers(llvm::SetVector<Operation *> &members, Value value,
                          int64_t elements);

  /// Adds to `members` the elementwise producers (growProducers) of what
  /// its members other than `anchor` and its input read: a widening cast
  /// of a residual's 16-bit value, say, that only the group reads, which
  /// then loads 2 bytes per element instead of a cast kernel writing 4 and
  /// the group reading them.
  void growReadProducers(llvm::SetVector<Operation *> &members, Operation *anchor,
                         int64_t elements);

  /// Adds to `members` the widening cast (16-bit storage to f32) that
  /// computes `input`, the norm input `norm` reads, so that the norm's
  /// kernel loads the 16-bit tensor and widens it itself. A cast others
  /// read too is copied for the norm.
  void growInputCast(llvm::SetVector<Operation *> &members, Operation *norm, OpOperand &input);

  /// Adds to `members` the cast that alone reads `dx`, a norm backward's
  /// gradient, and narrows it to 16-bit storage, so that the kernel stores
  /// dx narrowed and the f32 dx never reaches memory.
  void growOutputCast(llvm::SetVector<Operation *> &members, Value dx);

  void createGroup(const llvm::SetVector<Operation *> &members, StringRef kind);

  /// The target's library epilogues (its pattern table).
  void formLibraryEpilogues(ArrayRef<Operation *> ops);
  /// Ops whose kernels apply their elementwise neighbours: a norm's
  /// epilogue, a norm backward's prologue.
  void formNormGroups(ArrayRef<Operation *> ops);
  /// The updates of state in place, as multi-tensor groups.
  void formMultiTensorUpdates(ArrayRef<Operation *> ops);
  void formElementwiseChains(ArrayRef<Operation *> ops);
  /// Runs of casts no other group took.
  void formMultiTensorCasts();

  void form(const llvm::SetVector<Operation *> &members, StringRef kind);

  Block &block;
  ArrayRef<const FusionPattern *> epiloguePatterns; ///< the target's, in the order tried
  bool multiTensorCasts; ///< the target launches runs of casts as one kernel
  llvm::StringMap<int64_t> &groupsByKind;
  int64_t &opsFused;
  DenseSet<Operation *> grouped;
};

bool BlockFuser::canSinkToLast(const llvm::SetVector<Operation *> &members) const {
  Operation *last = members.front();
  for (Operation *m : members)
    if (last->isBeforeInBlock(m))
      last = m;
  for (Operation *m : members)
    for (Value result : m->getResults())
      for (Operation *user : result.getUsers()) {
        Operation *reader = inBlock(user);
        if (!members.contains(reader) && !last->isBeforeInBlock(reader))
          return false;
      }
  return true;
}

void BlockFuser::growConsumers(llvm::SetVector<Operation *> &members, int64_t elements) {
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < members.size() && !grew; ++i)
      for (Operation *user : members[i]->getUsers()) {
        if (user->getBlock() != &block || members.contains(user) ||
            grouped.contains(user) || !joinsLoop(user, elements))
          continue;
        members.insert(user);
        if (canSinkToLast(members)) {
          grew = true;
          break;
        }
        members.pop_back();
      }
  }
}

void BlockFuser::growProducers(llvm::SetVector<Operation *> &members, Value value,
                               int64_t elements,
                               const llvm::SmallPtrSetImpl<Operation *> *fromMemory) {
  Operation *producer = value.getDefiningOp();
  if (!producer || producer->getBlock() != &block || members.contains(producer) ||
      grouped.contains(producer) || !joinsLoop(producer, elements))
    return;
  bool onlyGroupReads = llvm::all_of(producer->getUsers(), [&](Operation *user) {
    return members.contains(user) && !(fromMemory && fromMemory->contains(user));
  });
  if (!onlyGroupReads)
    return;
  members.insert(producer);
  for (Value operand : producer->getOperands())
    growProducers(members, operand, elements, fromMemory);
}

void BlockFuser::growInputProducers(llvm::SetVector<Operation *> &members, Value value,
                                    int64_t elements) {
  Operation *producer = value.getDefiningOp();
  if (!producer || producer->getBlock() != &block || members.contains(producer) ||
      grouped.contains(producer) || !joinsLoop(producer, elements))
    return;
  members.insert(producer);
  if (!canSinkToLast(members)) {
    members.pop_back();
    return;
  }
  for (Value operand : producer->getOperands())
    growInputProducers(members, operand, elements);
}

void BlockFuser::growReadProducers(llvm::SetVector<Operation *> &members, Operation *anchor,
                                   int64_t elements) {
  // Nothing the anchor's input is computed from: a norm reads its input
  // from memory, through the widening cast its kernel does as it loads.
  llvm::SmallPtrSet<Operation *, 2> fromMemory;
  if (anchor) {
    fromMemory.insert(anchor);
    for (Operation *m : members)
      if (llvm::is_contained(m->getUsers(), anchor))
        fromMemory.insert(m);
  }
  for (size_t i = 0; i < members.size(); ++i)
    if (!fromMemory.contains(members[i]))
      for (Value operand : members[i]->getOperands())
        growProducers(members, operand, elements, &fromMemory);
}

void BlockFuser::growInputCast(llvm::SetVector<Operation *> &members, Operation *norm,
                               OpOperand &input) {
  auto widening = input.get().getDefiningOp<CastOp>();
  if (!widening || widening->getBlock() != &block || grouped.contains(widening) ||
      members.contains(widening) ||
      changesLayout(widening.getInput(), widening.getResult()))
    return;
  Type from = getElementTypeOrSelf(widening.getInput().getType());
  if (!getElementTypeOrSelf(widening.getType()).isF32() || !(from.isF16() || from.isBF16()))
    return;
  bool onlyGroupReads = llvm::all_of(widening->getUsers(),
                                     [&](Operation *user) { return members.contains(user); });
  if (!onlyGroupReads) {
    OpBuilder b(norm);
    widening = cast<CastOp>(b.clone(*widening));
    input.set(widening);
  }
  members.insert(widening);
}

void BlockFuser::growOutputCast(llvm::SetVector<Operation *> &members, Value dx) {
  if (!dx.hasOneUse())
    return;
  auto narrowing = dyn_cast<CastOp>(*dx.getUsers().begin());
  if (!narrowing || narrowing->getBlock() != &block || grouped.contains(narrowing) ||
      changesLayout(narrowing.getInput(), narrowing.getResult()))
    return;
  Type to = getElementTypeOrSelf(narrowing.getType());
  if (!getElementTypeOrSelf(dx.getType()).isF32() || !(to.isF16() || to.isBF16()))
    return;
  members.insert(narrowing);
  if (!canSinkToLast(members))
    members.pop_back();
}

void BlockFuser::createGroup(const llvm::SetVector<Operation *> &members, StringRef kind) {
  SmallVector<Operation *> ordered(members.begin(), members.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *last = ordered.back();

  // The values read after the group leave it; so do the anchor's (the
  // norm's) statistics and gradients, which its kernel always writes. The
  // normalised value an epilogue consumes stays in registers, and so does
  // a backward's dx that the group narrows.
  SmallVector<Value> leaving;
  for (Operation *m : ordered)
    for (OpResult result : m->getResults()) {
      bool readAfter = llvm::any_of(result.getUsers(), [&](Operation *user) {
        return !members.contains(inBlock(user));
      });
      bool consumedInGroup =
          result.getResultNumber() == 0 &&
          (kind == FusionGroupOp::kNormEpilogue || kind == FusionGroupOp::kMatmulEpilogue ||
           kind == FusionGroupOp::kConvEpilogue ||
           (kind == FusionGroupOp::kNormBackwardPrologue && !result.use_empty() && !readAfter));
      bool anchorWrites = fusionKindOf(m) != FusionKind::Elementwise && !consumedInGroup;
      if (readAfter || anchorWrites)
        leaving.push_back(result);
    }

  OpBuilder b(last);
  auto group = b.create<FusionGroupOp>(last->getLoc(), ValueRange(leaving).getTypes(),
                                       b.getStringAttr(kind));
  Block *body = new Block();
  group.getBody().push_back(body);
  for (Operation *m : ordered) {
    m->moveBefore(body, body->end());
    grouped.insert(m);
  }
  // The library workspace the anchor asked for is the group's to plan.
  for (Operation *m : ordered)
    if (WorkspaceAttr workspace = getWorkspace(m)) {
      setWorkspace(group, workspace);
      m->removeAttr(kWorkspaceAttr);
    }
  b.setInsertionPointToEnd(body);
  b.create<YieldOp>(last->getLoc(), leaving);
  for (auto [value, result] : llvm::zip(leaving, group.getResults()))
    value.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !group->isAncestor(use.getOwner());
    });
  grouped.insert(group);
}

void BlockFuser::form(const llvm::SetVector<Operation *> &members, StringRef kind) {
  createGroup(members, kind);
  ++groupsByKind[kind];
  opsFused += static_cast<int64_t>(members.size());
}

void BlockFuser::formLibraryEpilogues(ArrayRef<Operation *> ops) {
  auto free = [&](Operation *op) { return op->getBlock() == &block && !grouped.contains(op); };
  // One pattern at a time over the block, in the target's order.
  for (const FusionPattern *pattern : epiloguePatterns)
    for (Operation *op : ops) {
      if (grouped.contains(op) || fusionKindOf(op) != pattern->anchorKind)
        continue;
      llvm::SetVector<Operation *> members;
      if (pattern->match(op, free, members) && canSinkToLast(members))
        form(members, pattern->groupKind);
    }
}

void BlockFuser::formNormGroups(ArrayRef<Operation *> ops) {
  // An op and the elementwise ops on the (f32) result its kernel hands
  // them before storing it.
  for (Operation *op : ops) {
    auto anchor = dyn_cast<FusionOpInterface>(op);
    Value result = anchor ? anchor.getEpilogueResult() : Value();
    if (!result || !getElementTypeOrSelf(result.getType()).isF32())
      continue;
    llvm::SetVector<Operation *> members;
    members.insert(op);
    growConsumers(members, elementsOf(result));
    if (OpOperand *load = anchor.getWideningLoadOperand())
      growInputCast(members, op, *load);
    // After the consumers: the input's other readers are not the group's.
    if (OpOperand *input = anchor.getPrologueOperand())
      growInputProducers(members, input->get(), elementsOf(result));
    growReadProducers(members, op, elementsOf(result));
    if (members.size() > 1)
      form(members, FusionGroupOp::kNormEpilogue);
  }

  // An op and the elementwise ops that compute the operand its kernel
  // computes as it reads it.
  for (Operation *op : ops) {
    auto anchor = dyn_cast<FusionOpInterface>(op);
    OpOperand *upstream = anchor ? anchor.getPrologueOperand() : nullptr;
    // An op with an epilogue result took its input's producers above.
    if (!upstream || anchor.getEpilogueResult() || grouped.contains(op))
      continue;
    llvm::SetVector<Operation *> members;
    members.insert(op);
    growProducers(members, upstream->get(), elementsOf(upstream->get()));
    if (OpOperand *load = anchor.getWideningLoadOperand())
      growInputCast(members, op, *load);
    if (Value store = anchor.getNarrowingStoreResult())
      growOutputCast(members, store);
    if (members.size() > 1)
      form(members, FusionGroupOp::kNormBackwardPrologue);
  }
}

void BlockFuser::formMultiTensorUpdates(ArrayRef<Operation *> ops) {
  // All of them, less those whose results are read before the last one
  // (they could not wait for it).
  llvm::SetVector<Operation *> updates;
  for (Operation *op : ops)
    if (isMultiTensorUpdate(op) && !grouped.contains(op))
      updates.insert(op);
  while (updates.size() > 1 && !canSinkToLast(updates)) {
    Operation *last = updates.back();
    updates.remove_if([&](Operation *m) {
      return m != last && llvm::any_of(m->getUsers(), [&](Operation *user) {
               Operation *reader = inBlock(user);
               return !updates.contains(reader) && reader->isBeforeInBlock(last);
             });
    });
  }
  // At most kMaxUpdatesPerGroup updates per group, in consecutive runs.
  for (size_t begin = 0; begin + 1 < updates.size(); begin += kMaxUpdatesPerGroup) {
    llvm::SetVector<Operation *> chunk;
    for (size_t i = begin; i < std::min(updates.size(), begin + kMaxUpdatesPerGroup); ++i)
      chunk.insert(updates[i]);
    if (chunk.size() > 1 && canSinkToLast(chunk))
      form(chunk, FusionGroupOp::kMultiTensorUpdate);
  }
}

void BlockFuser::formElementwiseChains(ArrayRef<Operation *> ops) {
  for (Operation *op : ops) {
    if (grouped.contains(op) || op->getNumResults() != 1 ||
        !joinsLoop(op, elementsOf(op->getResult(0))))
      continue;
    llvm::SetVector<Operation *> members;
    members.insert(op);
    growConsumers(members, elementsOf(op->getResult(0)));
    growReadProducers(members, nullptr, elementsOf(op->getResult(0)));
    if (members.size() > 1)
      form(members, FusionGroupOp::kElementwise);
  }
}

void BlockFuser::formMultiTensorCasts() {
  // Runs of casts left alone (a bf16-mixed step's parameter copies, its
  // gradients widened for the update): one launch per run. Constants
  // between them launch nothing; a cast that reads one of the run's starts
  // the next run.
  llvm::SetVector<Operation *> run;
  auto flush = [&] {
    if (run.size() > 1 && canSinkToLast(run))
      form(run, FusionGroupOp::kMultiTensorCast);
    run.clear();
  };
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator())) {
    if (isa<arith::ConstantOp>(op))
      continue;
    auto cast = dyn_cast<CastOp>(op);
    if (!cast || !joinsLoop(&op, elementsOf(cast.getResult()))) {
      flush();
      continue;
    }
    Operation *input = cast.getInput().getDefiningOp();
    if ((input && run.contains(input)) || run.size() == kMaxUpdatesPerGroup)
      flush();
    run.insert(&op);
  }
  flush();
}

void BlockFuser::run() {
  SmallVector<Operation *> ops =
      llvm::to_vector(llvm::make_pointer_range(block.without_terminator()));
  formLibraryEpilogues(ops);
  formNormGroups(ops);
  formMultiTensorUpdates(ops);
  formElementwiseChains(ops);
  if (multiTensorCasts)
    formMultiTensorCasts();
}

struct FusionPass : mlir::tcc::impl::FusionBase<FusionPass> {
  using FusionBase::FusionBase;

  /// The patterns epilogue-patterns names; an unknown name is an error.
  LogicalResult initialize(MLIRContext *context) override {
    patterns.clear();
    for (const std::string &name : epiloguePatterns) {
      std::string error;
      const FusionPattern *pattern = lookupFusionPattern(name, error);
      if (!pattern)
        return emitError(UnknownLoc::get(context)) << "tcc-fusion: epilogue-patterns: " << error;
      patterns.push_back(pattern);
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto train = module.lookupSymbol<func::FuncOp>("train_step");
    if (!train) {
      module.emitError("tcc-fusion needs @train_step; run tcc-build-train-step first");
      return signalPassFailure();
    }
    Builder b(&getContext());
    recordPassResult(module, "fusion", "kernels_before",
                     b.getI64IntegerAttr(kernelsPerStep(train)));
    llvm::StringMap<int64_t> groupsByKind;
    int64_t opsFused = 0;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      // Loop bodies first: their ops are not in the function's block.
      SmallVector<Block *> blocks;
      fn.walk([&](MicroBatchesOp loop) { blocks.push_back(&loop.getBody().front()); });
      blocks.push_back(&fn.front());
      for (Block *block : blocks)
        BlockFuser(*block, patterns, multiTensorCasts, groupsByKind, opsFused).run();
    }
    int64_t groups = 0;
    SmallVector<NamedAttribute> byKind;
    for (const auto &entry : groupsByKind) {
      groups += entry.getValue();
      byKind.push_back(b.getNamedAttr(entry.getKey(), b.getI64IntegerAttr(entry.getValue())));
    }
    recordPassResult(module, "fusion", "groups", b.getI64IntegerAttr(groups));
    recordPassResult(module, "fusion", "groups_by_kind", b.getDictionaryAttr(byKind));
    recordPassResult(module, "fusion", "ops_fused", b.getI64IntegerAttr(opsFused));
    recordPassResult(module, "fusion", "kernels_after",
                     b.getI64IntegerAttr(kernelsPerStep(train)));
  }

  SmallVector<const FusionPattern *> patterns;
};

} // namespace

int64_t mlir::tcc::kernelsOf(Operation &op) {
  // Before the memory plan every view counts as free; after it, those
  // it made a new name for their input's bytes (ir/PlannedViews.h).
  const bool planned = static_cast<bool>(getPlacement(&op));
  if (isa<arith::ConstantOp>(op) || op.hasTrait<mlir::OpTrait::IsTerminator>() ||
      (isa<FlattenOp, ReshapeOp>(op) && (!planned || sharesItsInputsBytes(op))))
    return 0;
  auto loop = dyn_cast<MicroBatchesOp>(op);
  if (!loop)
    return 1;
  int64_t body = 0;
  for (Operation &inner : loop.getBody().front())
    body += kernelsOf(inner);
  return static_cast<int64_t>(loop.getCount()) * body;
}

int64_t mlir::tcc::kernelsPerStep(func::FuncOp step) {
  int64_t kernels = 0;
  for (Operation &op : step.front())
    kernels += kernelsOf(op);
  return kernels;
}
