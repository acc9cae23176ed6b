//===- TccAttrs.h - Every attribute of the tcc dialect ----------*- C++ -*-===//
//
// The recipe's (ir/TccRecipeAttrs.td) and the memory plan's
// (ir/TccPlanAttrs.td) attributes. ir/TccRecipe.h and ir/TccPlan.h are how
// passes read and write them.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_IR_TCCATTRS_H
#define TCC_IR_TCCATTRS_H

#include "ir/TccRecipeAttrs.h"

namespace mlir::tcc {
/// Parses `[1, -1, 64]` (ir/TccPlanAttrs.td's integer lists).
FailureOr<SmallVector<int64_t>> parseI64ArrayParam(AsmParser &parser);
} // namespace mlir::tcc

#include "ir/TccEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/TccAttrs.h.inc"

#endif // TCC_IR_TCCATTRS_H
