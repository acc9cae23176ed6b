//===- TccPlan.h - The memory plan's attributes, typed -----------*- C++ -*-===//
//
// tcc-plan-memory writes its plan (passes/MemoryPlan.cpp), a target its ops'
// workspaces, and the code generators read both, through these accessors
// of the attributes of ir/TccPlanAttrs.td.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_IR_TCCPLAN_H
#define TCC_IR_TCCPLAN_H

#include "ir/TccAttrs.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cstdint>

namespace mlir::tcc {

/// Every offset and arena size of the plan is a multiple of this.
inline constexpr int64_t kPlanAlignment = 64;
/// The most a workspace may ask for: far above any real one, low enough
/// that offsets cannot overflow.
inline constexpr int64_t kMaxWorkspaceBytes = int64_t(1) << 48;

/// `n` rounded up to kPlanAlignment.
inline int64_t alignToPlan(int64_t n) {
  return (n + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
}

/// The bytes a tensor of `type` takes (at least one per element).
int64_t tensorBytes(Type type);

/// With sharded parameters (train.distributed.shard "parameters"), the
/// whole state the trainer gathers before each evaluation and the eval
/// step reads (its tcc.gathered arguments): the state arena's
/// `stateBytes`, then each sharded (tcc.shard_of) parameter and EMA copy
/// of `train` whole, aligned, in order, as runtime/trainer/ShardedState.cpp's
/// wholeStateInfo(info, evaluated) lays it out. Sets `offsets` (by state slot; -1 where not
/// sharded) and returns its bytes.
int64_t layOutWholeState(FunctionOpInterface train, int64_t stateBytes,
                         SmallVectorImpl<int64_t> &offsets);

/// The module's state arena (tcc.state_arena), or null before planning.
StateArenaAttr getStateArena(Operation *module);
void setStateArena(Operation *module, StateArenaAttr arena);

/// A function's scratch arena (tcc.scratch_arena), or null before planning.
ScratchArenaAttr getScratchArena(Operation *fn);
void setScratchArena(Operation *fn, ScratchArenaAttr arena);

/// Where an op's results live (tcc.placement), or null if it has no plan.
PlacementAttr getPlacement(Operation *op);
void setPlacement(Operation *op, PlacementAttr placement);

/// The scratch an op needs while it runs (tcc.workspace), or null.
WorkspaceAttr getWorkspace(Operation *op);
void setWorkspace(Operation *op, WorkspaceAttr workspace);

/// Where the work of `op`, a collective marked tcc.side_stream, joins the
/// step's stream: the first op after it in its block that reads one of its
/// results or holds (in a region) an op that does; null if none does.
Operation *sideStreamJoin(Operation *op);

} // namespace mlir::tcc

#endif // TCC_IR_TCCPLAN_H
