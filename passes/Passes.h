//===- Passes.h - tcc passes ------------------------------------*- C++ -*-===//
#ifndef TCC_PASSES_PASSES_H
#define TCC_PASSES_PASSES_H

#include "ir/TccDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tcc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::tcc

#endif // TCC_PASSES_PASSES_H
