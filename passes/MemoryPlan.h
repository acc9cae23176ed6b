//===- MemoryPlan.h - The step's memory plan, as an analysis ----*- C++ -*-===//
//
// The planner tcc-plan-memory records (PlanMode::Record) and tcc-recompute
// asks "what is the peak if ..." of a step it is changing
// (PlanMode::Measure), and the sizes read back from a planned module for
// the driver's report.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_PASSES_MEMORYPLAN_H
#define TCC_PASSES_MEMORYPLAN_H

#include "ir/TccPlan.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

#include <cstdint>

namespace mlir::tcc {

struct MemoryPlanSizes {
  int64_t stateBytes = 0;        ///< the state arena (tcc.state_arena)
  int64_t trainScratchBytes = 0; ///< @train_step's scratch (tcc.scratch_arena,
                                 ///< op workspaces included), or
                                 ///< @train_step_frozen's if larger
  int64_t evalScratchBytes = 0;  ///< @eval_step's scratch (or @eval_step_plain's or
                                 ///< @predict_step's, if larger)
  int64_t batchBytes = 0;        ///< one training batch: images and labels

  /// What a step holds at once: the state, the one scratch arena both steps
  /// share (the larger), and the batch.
  int64_t stepBytes() const;
};

/// The sizes of a module that went through tcc-plan-memory (no eval
/// scratch without @eval_step); failure if it did not (no state arena).
FailureOr<MemoryPlanSizes> readMemoryPlan(ModuleOp module);

/// "12.3 MiB": a size as the compiler's messages write it.
std::string mebibytes(int64_t bytes);

/// Whether planScratch writes its plan on the IR.
enum class PlanMode {
  Record,  ///< tcc.placement and the workspaces' offsets on the ops and
           ///< tcc.scratch_arena on the function (tcc-plan-memory)
  Measure, ///< nothing: the size only
};

/// Plans the scratch of a step function whose `tcc.state` arguments are
/// state slots: each value from its op to its last reader (a value that
/// replaces a state slot it could not overwrite in place, to the end),
/// packed first fit; returns the bytes.
FailureOr<int64_t> planScratch(func::FuncOp fn, PlanMode mode);

/// The state arena: the `tcc.state` arguments of @train_step, each aligned,
/// in order. Appends their offsets; returns its bytes.
int64_t layOutState(func::FuncOp train, SmallVectorImpl<int64_t> &offsets);

/// The sizes tcc-plan-memory would give `module` as it is now (nothing is
/// written); failure without @train_step.
FailureOr<MemoryPlanSizes> measureMemoryPlan(ModuleOp module);

} // namespace mlir::tcc

#endif // TCC_PASSES_MEMORYPLAN_H
