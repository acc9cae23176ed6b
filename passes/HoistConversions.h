//===- HoistConversions.h - A gradient's conversions moved up ---*- C++ -*-===//
//
// Shared by the passes that place a gradient's collective right after the
// op that computes it (tcc-bucket-collectives, tcc-gather-parameters).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_PASSES_HOISTCONVERSIONS_H
#define TCC_PASSES_HOISTCONVERSIONS_H

#include "mlir/IR/Block.h"

namespace mlir::tcc {

/// The op of `block` that computes `v` (its definition or the op that holds
/// it), or null for an argument of the block.
inline Operation *producerIn(Block &block, Value v) {
  Operation *def = v.getDefiningOp();
  return def ? block.findAncestorOpInBlock(*def) : nullptr;
}

/// Moves the conversions that end in gradient `v` up to right after what
/// they convert: pure ops of one operand, each read only by the next and
/// the last only by the collective (the gradient of a parameter's cast or
/// channel padding, which autodiff builds where the forward began: at the
/// end of the backward). Returns how many moved.
int64_t hoistConversions(Block &block, Value v);

} // namespace mlir::tcc

#endif // TCC_PASSES_HOISTCONVERSIONS_H
