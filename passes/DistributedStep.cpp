//===- DistributedStep.cpp - A train step's collectives across ranks -----===//
//
// What tcc-build-train-step adds to a step of several ranks
// (docs/distributed.md): synchronised batch norms, the gradients' and the
// running statistics' reductions, and the chunks of a sharded update.
//
//===----------------------------------------------------------------------===//

#include "passes/DistributedStep.h"

#include "ir/TccAttrNames.h"
#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

/// train.distributed.sync_batch_norm: each batch norm over the whole batch
/// of `block` (a micro-batch's forward, just inlined) takes its statistics
/// over every rank's samples: the sum of x and then the squared deviations
/// from the mean of all ranks, each summed over the ranks before the norm
/// reads it (runtime/kernels/SyncNorm.h). Ghost batch norms stay as they
/// are: their groups lie within a rank, the one-process run's already.
void mlir::tcc::synchroniseBatchNorms(OpBuilder &b, Block &block, int64_t ranks) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<BatchNormOp> norms;
  for (Operation &op : block)
    if (auto bn = dyn_cast<BatchNormOp>(op); bn && bn.getGhostBatch() == 0 && !bn.getSum())
      norms.push_back(bn);
  for (BatchNormOp bn : norms) {
    b.setInsertionPoint(bn);
    Location loc = bn.getLoc();
    auto acrossRanks = [&](Value centered) {
      Value mine = b.create<BatchNormSumsOp>(loc, bn.getInput(), centered, ranks);
      return b.create<AllReduceOp>(loc, ValueRange{mine}, b.getStringAttr("sum")).getResult(0);
    };
    Value sum = acrossRanks(Value());
    Value squared = acrossRanks(sum);
    bn.getSumMutable().assign(sum);
    bn.getSquaredDeviationsMutable().assign(squared);
    bn.setRanks(ranks);
  }
}

/// The type of one rank's chunk of `whole` (tcc.shard) over `ranks` ranks.
Type mlir::tcc::chunkType(Value whole, int64_t ranks) {
  auto type = cast<RankedTensorType>(whole.getType());
  return RankedTensorType::get({(type.getNumElements() + ranks - 1) / ranks},
                               type.getElementType());
}

namespace {

/// Whether buffer value `v` is a running statistic of a synchronised batch
/// norm (directly, or yielded by the micro-batch loop): every rank computes
/// it from the same sums, so it needs no averaging.
bool updatedBySynchronisedNorm(Value v) {
  if (auto loop = v.getDefiningOp<MicroBatchesOp>())
    v = loop.getBody().front().getTerminator()->getOperand(
        cast<OpResult>(v).getResultNumber());
  auto bn = v.getDefiningOp<BatchNormOp>();
  return bn && bn.getSum();
}

} // namespace

/// A distributed step (train.distributed.ranks > 1): the ranks' gradients
/// summed, in one all-reduce marked `tcc.gradients`, before anything reads
/// them (each rank's loss was scaled by 1 / ranks, so the sum is the
/// global batch's gradient; tcc-bucket-collectives splits it into buckets
/// that start during the backward), and the batch norms' new running
/// statistics averaged (a synchronised norm's are the same on every rank
/// already), so every rank keeps the same state. Both in state order, the
/// same on every rank.
void mlir::tcc::reduceAcrossRanks(OpBuilder &b, Location loc, const StepPlan &plan,
                                  MutableArrayRef<Value> newState,
                                  DenseMap<int, Value> &grads) {
  if (plan.train.distributed.ranks == 1)
    return;
  auto reduce = [&](ArrayRef<int> indices, auto valueOf, auto setValue,
                    StringRef reduction) -> AllReduceOp {
    SmallVector<Value> inputs;
    for (int i : indices)
      inputs.push_back(valueOf(i));
    if (inputs.empty())
      return nullptr;
    auto op = b.create<AllReduceOp>(loc, inputs, b.getStringAttr(reduction));
    for (auto [i, result] : llvm::zip(indices, op.getResults()))
      setValue(i, result);
    return op;
  };
  SmallVector<int> withGradient;
  for (auto [index, grad] : grads)
    withGradient.push_back(index);
  llvm::sort(withGradient);
  const ::tcc::rt::Distributed &d = plan.train.distributed;
  if ((d.shard == ::tcc::rt::Distributed::Gradients ||
       d.shard == ::tcc::rt::Distributed::Parameters) &&
      !withGradient.empty()) {
    // ZeRO-2 and FSDP: each rank receives only its chunk of each summed
    // gradient.
    SmallVector<Value> inputs;
    SmallVector<Type> chunks;
    for (int i : withGradient) {
      inputs.push_back(grads[i]);
      chunks.push_back(chunkType(grads[i], d.ranks));
    }
    auto op = b.create<ReduceScatterOp>(loc, chunks, inputs, d.ranks);
    // FSDP's: tcc-gather-parameters splits it per node; ZeRO-2's:
    // tcc-bucket-collectives, into buckets.
    op->setAttr(kGradientsAttr, b.getUnitAttr());
    for (auto [i, result] : llvm::zip(withGradient, op.getResults()))
      grads[i] = result;
  } else {
    if (AllReduceOp gradients = reduce(withGradient, [&](int i) { return grads[i]; },
                                       [&](int i, Value v) { grads[i] = v; }, "sum"))
      gradients->setAttr(kGradientsAttr, b.getUnitAttr());
  }
  SmallVector<int> perRank;
  for (int i : plan.bufferIndices())
    if (!updatedBySynchronisedNorm(newState[i]))
      perRank.push_back(i);
  reduce(perRank, [&](int i) { return newState[i]; },
         [&](int i, Value v) { newState[i] = v; }, "mean");
}


bool mlir::tcc::gathersParameters(Operation *step) {
  return step
      ->walk([](AllGatherOp op) {
        return op->hasAttr(kGatherForAttr) ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Shard "parameters" (FSDP): the trainable parameters are chunks; one
/// tcc.all_gather, marked `tcc.gather_for = "forward"`, puts them together
/// before the forward reads them, and `args` (@forward's, by argument)
/// read the whole tensors. tcc-gather-parameters splits it per model node
/// and places each one node ahead. Null where nothing is sharded.
AllGatherOp mlir::tcc::gatherParameters(OpBuilder &b, Location loc, const StepPlan &plan,
                                        ArrayRef<Value> state, MutableArrayRef<Value> args) {
  if (!plan.shardsParameters())
    return nullptr;
  SmallVector<Value> chunks;
  SmallVector<Type> wholes;
  SmallVector<int> sources;
  for (auto [i, entry] : llvm::enumerate(plan.state))
    if (entry.kind == kind::kParam && !entry.shardOf.empty()) {
      chunks.push_back(state[i]);
      wholes.push_back(RankedTensorType::get(
          entry.shardOf, cast<ShapedType>(entry.type).getElementType()));
      sources.push_back(entry.source);
    }
  if (chunks.empty())
    return nullptr;
  auto gather = b.create<AllGatherOp>(loc, wholes, chunks, plan.train.distributed.ranks);
  gather->setAttr(kGatherForAttr, b.getStringAttr("forward"));
  for (auto [source, whole] : llvm::zip(sources, gather.getResults()))
    args[source] = whole;
  return gather;
}

/// The second gather of the same chunks, at the builder (after the loss,
/// before autodiff builds the backward), marked "backward"; `rewire` then
/// makes the backward read it, so the forward's whole tensors die after
/// the forward.
AllGatherOp mlir::tcc::gatherForBackward(OpBuilder &b, AllGatherOp forward) {
  if (!forward)
    return nullptr;
  auto gather = b.create<AllGatherOp>(forward.getLoc(), forward.getResultTypes(),
                                      forward.getInputs(), forward.getRanks());
  gather->setAttr(kGatherForAttr, b.getStringAttr("backward"));
  return gather;
}

void mlir::tcc::readBackwardGather(AllGatherOp forward, AllGatherOp backward) {
  if (!forward)
    return;
  for (auto [f, w] : llvm::zip(forward.getResults(), backward.getResults()))
    f.replaceUsesWithIf(w, [&](OpOperand &use) {
      Operation *user = backward->getBlock()->findAncestorOpInBlock(*use.getOwner());
      return user && backward->isBeforeInBlock(user);
    });
}
