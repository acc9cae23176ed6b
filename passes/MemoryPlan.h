//===- MemoryPlan.h - The sizes tcc-plan-memory assigned --------*- C++ -*-===//
//
// Read back from the attributes of a planned module, for everyone who needs
// the step's memory without walking the plan: the driver's memory-budget
// check and its report.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_PASSES_MEMORYPLAN_H
#define TCC_PASSES_MEMORYPLAN_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>

namespace mlir::tcc {

struct MemoryPlanSizes {
  int64_t stateBytes = 0;        ///< the state arena (tcc.state_bytes)
  int64_t trainScratchBytes = 0; ///< @train_step's scratch (tcc.scratch_bytes,
                                 ///< op workspaces included)
  int64_t evalScratchBytes = 0;  ///< @eval_step's scratch
  int64_t batchBytes = 0;        ///< one training batch: images and labels

  /// What a step holds at once: the state, the one scratch arena both steps
  /// share (the larger), and the batch.
  int64_t stepBytes() const;
};

/// The sizes of a module that went through tcc-plan-memory; failure if it
/// did not (no plan attributes).
FailureOr<MemoryPlanSizes> readMemoryPlan(ModuleOp module);

} // namespace mlir::tcc

#endif // TCC_PASSES_MEMORYPLAN_H
