//===- PlannedViews.h - Views the memory plan made free -----------*- C++ -*-===//
#ifndef TCC_IR_PLANNEDVIEWS_H
#define TCC_IR_PLANNEDVIEWS_H

#include "ir/TccPlan.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tcc {

/// True if `op` is a view whose result the memory plan put in its input's
/// bytes (equal offsets always mean that: passes/PlanMemory.cpp): then it
/// is only a new name for them, and no kernel runs. A view of a value the
/// plan could not share (a micro-batch's slice of the batch) is a copy.
inline bool sharesItsInputsBytes(Operation &op) {
  auto view = dyn_cast<ViewLikeOpInterface>(op);
  if (!view)
    return false;
  auto source = dyn_cast<OpResult>(view.getViewSource());
  PlacementAttr placement = getPlacement(&op);
  if (!source || !placement || placement.getScratchOffset(0) < 0)
    return false;
  PlacementAttr sourcePlacement = getPlacement(source.getOwner());
  return sourcePlacement &&
         sourcePlacement.getScratchOffset(source.getResultNumber()) ==
             placement.getScratchOffset(0);
}

} // namespace mlir::tcc

#endif // TCC_IR_PLANNEDVIEWS_H
