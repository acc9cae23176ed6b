//===- GatherParameters.cpp - Sharded parameters gathered per node --------===//
//
// See Passes.td and docs/passes.md. FSDP's prefetch, at compile time: the
// two gathers of every sharded parameter that tcc-build-train-step puts
// before the forward and after the loss become one gather per model node,
// each one node ahead of that node's first reader, so that a whole
// parameter lives only around its reads and the memory plan frees it
// between the forward and the backward; and the gradients' reduce-scatter
// becomes one per node, right after the node's gradients, so that each
// whole gradient dies as soon as it is reduced.
//
//===----------------------------------------------------------------------===//

#include "passes/HoistConversions.h"
#include "passes/PassReport.h"
#include "passes/Passes.h"

#include "ir/ModelNode.h"
#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_GATHERPARAMETERS
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The parameters one node reads: the gathered results' indices, and the
/// first op of the block that reads one of them.
struct NodeGroup {
  std::string node;
  Operation *firstReader = nullptr;
  SmallVector<unsigned> results;
};

/// The state name of a gathered chunk (a step argument), for messages.
std::string parameterName(Value chunk) {
  if (auto arg = dyn_cast<BlockArgument>(chunk))
    if (auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
      if (auto name = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kStateAttr))
        return name.str();
  return "?";
}

/// The 16-bit type every reader of `whole` casts it to (a mixed
/// precision's compute type), or null.
Type computeTypeOf(Value whole) {
  Type to;
  for (Operation *user : whole.getUsers()) {
    auto cast = dyn_cast<CastOp>(user);
    Type element = cast ? getElementTypeOrSelf(cast.getType()) : Type();
    if (!element || !isa<FloatType>(element) || element.getIntOrFloatBitWidth() != 16 ||
        (to && element != to))
      return {};
    to = element;
  }
  return to;
}

/// Under a mixed precision the step reads each gathered f32 parameter
/// through a cast to its compute type: cast the chunk instead and gather it
/// in 16 bits (PyTorch FSDP's MixedPrecision(param_dtype)). The same values
/// (a cast rounds each element alone), half the bytes, and no f32 whole.
/// Returns the tensors narrowed; `gather` becomes the new gather.
int64_t gatherInComputeType(AllGatherOp &gather) {
  OpBuilder b(gather);
  SmallVector<Value> chunks;
  SmallVector<Type> wholes, computeTypes;
  for (auto [chunk, whole] : llvm::zip(gather.getInputs(), gather.getResults())) {
    Type to = whole.use_empty() ? Type() : computeTypeOf(whole);
    computeTypes.push_back(to);
    chunks.push_back(to ? b.create<CastOp>(gather.getLoc(), chunk, TypeAttr::get(to)) : chunk);
    wholes.push_back(to ? cast<RankedTensorType>(whole.getType()).clone(to) : whole.getType());
  }
  int64_t narrowed = llvm::count_if(computeTypes, [](Type t) { return bool(t); });
  if (narrowed == 0)
    return 0;
  auto narrow = b.create<AllGatherOp>(gather.getLoc(), wholes, chunks, gather.getRanks());
  narrow->setAttr(kGatherForAttr, gather->getAttr(kGatherForAttr));
  for (auto [whole, to, into] : llvm::zip(gather.getResults(), computeTypes, narrow.getResults())) {
    if (!to) {
      whole.replaceAllUsesWith(into);
      continue;
    }
    for (Operation *user : llvm::make_early_inc_range(whole.getUsers())) {
      user->getResult(0).replaceAllUsesWith(into);
      user->erase();
    }
  }
  gather.erase();
  gather = narrow;
  return narrowed;
}

/// Splits `gather` into one gather per node, each one node ahead of its
/// readers. Returns the gathers made (none where it has one node).
FailureOr<int64_t> splitGather(AllGatherOp gather) {
  Block &block = *gather->getBlock();
  const bool forward = gather->getAttrOfType<StringAttr>(kGatherForAttr).getValue() == "forward";
  SmallVector<NodeGroup> groups;
  for (OpResult result : gather->getResults()) {
    SmallVector<Operation *> readers;
    for (Operation *user : result.getUsers())
      if (Operation *reader = block.findAncestorOpInBlock(*user))
        readers.push_back(reader);
    if (readers.empty())
      continue; // read by nothing: not gathered at all
    llvm::sort(readers, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    Operation *first = readers.front();
    // In the forward a parameter belongs to one node (its layer); the
    // backward reads it from that node's gradient ops.
    for (Operation *reader : readers)
      if (std::string node = modelNodeOf(reader->getLoc());
          forward && node != modelNodeOf(first->getLoc()))
        return gather->emitError("tcc-gather-parameters: parameter '")
               << parameterName(gather.getInputs()[result.getResultNumber()])
               << "' is read by the nodes '" << modelNodeOf(first->getLoc()) << "' and '"
               << node
               << "': train.distributed.shard \"parameters\" gathers each node's parameters "
                  "for that node alone; use shard \"gradients\"",
               failure();
    std::string key = modelNodeOf(first->getLoc());
    auto same = llvm::find_if(groups, [&](const NodeGroup &g) {
      return key.empty() ? g.firstReader == first : g.node == key;
    });
    if (same == groups.end()) {
      groups.push_back({key, first, {}});
      same = std::prev(groups.end());
    }
    if (first->isBeforeInBlock(same->firstReader))
      same->firstReader = first;
    same->results.push_back(result.getResultNumber());
  }
  if (groups.size() == 1 && groups.front().results.size() == gather->getNumResults())
    return 0; // one node: already placed
  llvm::sort(groups, [](const NodeGroup &a, const NodeGroup &b) {
    return a.firstReader->isBeforeInBlock(b.firstReader);
  });
  OpBuilder b(gather);
  for (auto [k, group] : llvm::enumerate(groups)) {
    // One node ahead: before the previous node's first reader; the first
    // where the whole gather was.
    if (k == 0)
      b.setInsertionPoint(gather);
    else
      b.setInsertionPoint(groups[k - 1].firstReader);
    SmallVector<Value> chunks;
    SmallVector<Type> wholes;
    for (unsigned r : group.results) {
      chunks.push_back(gather.getInputs()[r]);
      wholes.push_back(gather.getResult(r).getType());
    }
    auto one = b.create<AllGatherOp>(gather.getLoc(), wholes, chunks, gather.getRanks());
    one->setAttr(kGatherForAttr, gather->getAttr(kGatherForAttr));
    // A chunk's cast to the compute type goes with its gather.
    for (Value chunk : chunks)
      if (auto cast = chunk.getDefiningOp<CastOp>();
          cast && llvm::all_of(cast->getUsers(),
                               [&](Operation *user) { return user == gather || user == one; }))
        cast->moveBefore(one);
    for (auto [r, whole] : llvm::zip(group.results, one.getResults()))
      gather.getResult(r).replaceAllUsesWith(whole);
  }
  gather.erase();
  return static_cast<int64_t>(groups.size());
}

/// Splits the gradients' reduce-scatter (`tcc.gradients`, shard
/// "parameters") into one per node, each right after the last op that
/// computes one of the node's gradients, so each whole gradient dies as
/// soon as its node's backward is done. Returns the reduce-scatters made
/// (none where every gradient comes from one op: a micro-batch loop's).
int64_t splitReduceScatter(ReduceScatterOp scatter) {
  Block &block = *scatter->getBlock();
  struct Group {
    std::string node;
    Operation *lastProducer;
    SmallVector<unsigned> operands;
  };
  SmallVector<Group> groups;
  // A mixed precision gradient's widening cast is built at the end of the
  // backward: up to where its gradient is computed first.
  for (Value gradient : scatter->getOperands())
    hoistConversions(block, gradient);
  for (OpOperand &operand : scatter->getOpOperands()) {
    Operation *def = operand.get().getDefiningOp();
    Operation *producer = def ? block.findAncestorOpInBlock(*def) : nullptr;
    if (!producer)
      return 0; // an argument: nothing to place it after
    std::string node = modelNodeOf(producer->getLoc());
    auto same = llvm::find_if(groups, [&](const Group &g) {
      return node.empty() ? g.lastProducer == producer : g.node == node;
    });
    if (same == groups.end()) {
      groups.push_back({node, producer, {}});
      same = std::prev(groups.end());
    }
    if (same->lastProducer->isBeforeInBlock(producer))
      same->lastProducer = producer;
    same->operands.push_back(operand.getOperandNumber());
  }
  if (groups.size() < 2)
    return 0;
  OpBuilder b(scatter);
  for (Group &group : groups) {
    b.setInsertionPointAfter(group.lastProducer);
    SmallVector<Value> wholes;
    SmallVector<Type> chunks;
    for (unsigned i : group.operands) {
      wholes.push_back(scatter->getOperand(i));
      chunks.push_back(scatter->getResult(i).getType());
    }
    auto one = b.create<ReduceScatterOp>(scatter.getLoc(), chunks, wholes, scatter.getRanks());
    one->setAttr(kGradientsAttr, b.getUnitAttr());
    for (auto [i, chunk] : llvm::zip(group.operands, one.getResults()))
      scatter.getResult(i).replaceAllUsesWith(chunk);
  }
  scatter.erase();
  return static_cast<int64_t>(groups.size());
}

struct GatherParametersPass
    : mlir::tcc::impl::GatherParametersBase<GatherParametersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AllGatherOp> gathers;
    module.walk([&](AllGatherOp op) {
      if (op->hasAttr(kGatherForAttr))
        gathers.push_back(op);
    });
    if (gathers.empty())
      return;
    int64_t narrowed = 0;
    for (AllGatherOp &gather : gathers)
      narrowed += gatherInComputeType(gather);
    for (AllGatherOp gather : gathers)
      if (failed(splitGather(gather)))
        return signalPassFailure();
    SmallVector<ReduceScatterOp> scatters;
    module.walk([&](ReduceScatterOp op) {
      if (op->hasAttr(kGradientsAttr))
        scatters.push_back(op);
    });
    for (ReduceScatterOp scatter : scatters)
      splitReduceScatter(scatter);
    int64_t reduceScatters = 0;
    module.walk([&](ReduceScatterOp) { ++reduceScatters; });
    int64_t total = 0, forward = 0;
    module.walk([&](AllGatherOp op) {
      if (auto purpose = op->getAttrOfType<StringAttr>(kGatherForAttr)) {
        ++total;
        forward += purpose.getValue() == "forward";
      }
    });
    Builder b(module.getContext());
    recordPassResult(module, "gather-parameters", "gathers", b.getI64IntegerAttr(total));
    recordPassResult(module, "gather-parameters", "forward", b.getI64IntegerAttr(forward));
    recordPassResult(module, "gather-parameters", "backward",
                     b.getI64IntegerAttr(total - forward));
    recordPassResult(module, "gather-parameters", "reduce_scatters",
                     b.getI64IntegerAttr(reduceScatters));
    recordPassResult(module, "gather-parameters", "gathered_16bit",
                     b.getI64IntegerAttr(narrowed));
  }
};

} // namespace
