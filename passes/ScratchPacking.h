//===- ScratchPacking.h - Offsets for the scratch values of a step -*- C++ -*-===//
//
// The memory plan's packing (MemoryPlan.cpp): each value a step computes is
// live over an interval of the block's ops and needs bytes that no value
// live at the same time uses.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_SCRATCHPACKING_H
#define TCC_PASSES_SCRATCHPACKING_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace mlir::tcc {

/// Scratch bytes live from the op at `start` to the op at `end` of a block,
/// both included; packScratch sets `offset`.
struct ScratchInterval {
  int64_t start, end, size, offset = -1;
};

/// Places every interval (offsets multiples of kPlanAlignment) and returns
/// the bytes used: the better of first fit by start and largest first.
int64_t packScratch(llvm::MutableArrayRef<ScratchInterval> intervals);

namespace packing {
/// First fit in the given order against every interval placed before:
/// any order, quadratic.
int64_t placeInOrder(llvm::MutableArrayRef<ScratchInterval> intervals,
                     llvm::ArrayRef<size_t> order);
/// placeInOrder's result for an order by start, in O(n sqrt n).
int64_t placeByStart(llvm::MutableArrayRef<ScratchInterval> intervals,
                     llvm::ArrayRef<size_t> byStart);
} // namespace packing

} // namespace mlir::tcc

#endif // TCC_PASSES_SCRATCHPACKING_H
