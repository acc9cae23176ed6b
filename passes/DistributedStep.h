//===- DistributedStep.h - A train step's collectives across ranks -*- C++ -*-===//
//
// Used by tcc-build-train-step (BuildTrainStep.cpp) for a step of several
// ranks (train.distributed, docs/distributed.md).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_PASSES_DISTRIBUTEDSTEP_H
#define TCC_PASSES_DISTRIBUTEDSTEP_H

#include "ir/TccOps.h"
#include "passes/StepBuilder.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::tcc {

/// train.distributed.sync_batch_norm on the whole-batch norms of `block`.
void synchroniseBatchNorms(OpBuilder &b, Block &block, int64_t ranks);

/// The gradients (`grads`, by state index) summed over the ranks, or
/// reduce-scattered into chunks with shard "gradients"; the buffers'
/// `newState` averaged where each rank computed its own.
void reduceAcrossRanks(OpBuilder &b, Location loc, const StepPlan &plan,
                       MutableArrayRef<Value> newState, DenseMap<int, Value> &grads);

/// Shard "parameters": one all-gather of the parameter chunks in `state`
/// (StepPlan order) before the forward; `args` (@forward's) get the whole
/// tensors. Null where the parameters are not sharded.
AllGatherOp gatherParameters(OpBuilder &b, Location loc, const StepPlan &plan,
                             ArrayRef<Value> state, MutableArrayRef<Value> args);
/// The same gather again at the builder, for the backward (null if
/// `forward` is).
AllGatherOp gatherForBackward(OpBuilder &b, AllGatherOp forward);
/// Makes every op after `backward` read its results instead of `forward`'s.
void readBackwardGather(AllGatherOp forward, AllGatherOp backward);

/// Whether `step` gathers sharded parameters (shard "parameters", FSDP:
/// all-gathers marked tcc.gather_for). Its gradients' reduce-scatters are
/// then tcc-gather-parameters' to split per node; ZeRO-2's (shard
/// "gradients") are tcc-bucket-collectives' to split into buckets.
bool gathersParameters(Operation *step);

/// The type of one rank's chunk of `whole` (tcc.shard) over `ranks` ranks.
Type chunkType(Value whole, int64_t ranks);

} // namespace mlir::tcc

#endif // TCC_PASSES_DISTRIBUTEDSTEP_H
