//===- ShardedState.h - A sharded state as one process holds it -*- C++ -*-===//
//
// With train.distributed.shard each rank keeps chunk r ([ceil(n / ranks)],
// zero past n) of every optimizer slot, and with "parameters" of every
// trainable parameter and its EMA and Lookahead copies (StateTensor::shardOf).
// Before each evaluation of sharded parameters every rank gathers the
// parameters and EMA copies whole (the evaluation reads them). Checkpoints
// hold the whole tensors, the file a one-process run writes, so a run
// resumes with any number of ranks and any shard mode (docs/distributed.md):
// every rank gathers the chunks before rank 0 writes, and each rank takes
// its chunks from the whole tensors it reads.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_SHARDEDSTATE_H
#define TCC_RUNTIME_TRAINER_SHARDEDSTATE_H

#include "runtime/CompiledModel.h"
#include "runtime/comm/Communicator.h"

#include <cstdint>
#include <vector>

namespace tcc::rt {

/// `info` with each sharded tensor whole, placed after the arena's bytes:
/// a buffer of its stateBytes holds this rank's arena, then the wholes.
/// Equal to `info` where nothing is sharded. `evaluated`: only the
/// parameters and EMA copies whole, the rest as chunks in the arena's
/// bytes (what the evaluation reads: codegen's layOutWholeState, the eval
/// step's tcc.gathered arguments, lays it out alike).
ModelInfo wholeStateInfo(const ModelInfo &info, bool evaluated = false);

/// Whether any state tensor of `info` is sharded.
bool hasShardedState(const ModelInfo &info);

/// This rank's arena `state` into `whole` (whole.stateBytes): the arena's
/// bytes, then each tensor `whole` lays out whole put together from every
/// rank's chunk.
/// A collective: every rank calls it at the same point.
void gatherWholeState(const ModelInfo &info, const ModelInfo &whole, const void *state,
                      std::vector<uint8_t> &out, Communicator &comm);

/// The tensors `whole` lays out whole from `info`'s chunks, in state order,
/// which is ascending offset in `whole` (wholeStateInfo places them so):
/// what CompiledModel::gatherWholeState gathers in place.
std::vector<GatheredTensor> gatheredTensors(const ModelInfo &info, const ModelInfo &whole);

/// The bytes a buffer for `whole` needs when `tensors` are gathered in place
/// from `ranks` ranks: whole.stateBytes, or more where the last one's
/// padding (its ranks' chunks past the whole tensor) ends beyond them.
size_t wholeStateRoom(const ModelInfo &whole, const std::vector<GatheredTensor> &tensors,
                      int64_t ranks);

/// The whole tensors of `wholeState` (laid out as `whole`) into this rank's
/// arena `state`: its chunk of each sharded one, the rest as they are.
void scatterWholeState(const ModelInfo &info, const ModelInfo &whole, const void *wholeState,
                       void *state, int rank);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_SHARDEDSTATE_H
