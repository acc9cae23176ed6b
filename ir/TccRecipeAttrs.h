//===- TccRecipeAttrs.h - Parameters of the recipe's attributes -*- C++ -*-===//
//
// What #tcc.train, #tcc.data, #tcc.eval and their parts
// (ir/TccRecipeAttrs.td) hold besides integers; ir/TccAttrs.h declares the
// attributes, ir/TccRecipe.h converts them from and to runtime/Recipe.h's
// structs.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_IR_TCCRECIPEATTRS_H
#define TCC_IR_TCCRECIPEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

#include <optional>

namespace mlir::tcc {

/// A double as an attribute parameter: LLVM hashes no floating-point type,
/// so this one hashes its bits. Converts to and from double.
struct F64 {
  F64(double value = 0) : value(value) {}
  operator double() const { return value; }
  double value;
};
inline llvm::hash_code hash_value(F64 x) {
  return llvm::hash_value(llvm::bit_cast<uint64_t>(x.value));
}

// The parameters' parsers and printers (ir/TccRecipeAttrs.td).
FailureOr<F64> parseF64Param(AsmParser &parser);
FailureOr<std::optional<F64>> parseOptionalF64Param(AsmParser &parser);
FailureOr<bool> parseBoolParam(AsmParser &parser);
FailureOr<SmallVector<F64>> parseF64ArrayParam(AsmParser &parser);
void printF64Param(AsmPrinter &printer, double value);
void printF64ArrayParam(AsmPrinter &printer, ArrayRef<F64> values);

} // namespace mlir::tcc

#endif // TCC_IR_TCCRECIPEATTRS_H
