//===- ModelDescription.h - ModelInfo, the same for every target -*- C++ -*-===//
//
// Private to codegen/.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_MODELDESCRIPTION_H
#define TCC_CODEGEN_MODELDESCRIPTION_H

#include "runtime/CompiledModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tcc {

/// Prints the table of state tensors and `Model::Model()`, which fills the
/// model's `info_` (runtime/CompiledModel.h's ModelInfo) for `target`, whose
/// arenas are in `memory`, with a scratch arena of `scratchBytes`; `frozen`
/// (@train_step_frozen, or null) says when the trainer switches to it;
/// `predict` (@predict_step, or null) gives ModelInfo::predictBatch.
void emitModelDescription(ModuleOp module, func::FuncOp train, func::FuncOp eval,
                          func::FuncOp frozen, func::FuncOp predict,
                          StringRef target, ::tcc::rt::MemoryKind memory,
                          int64_t scratchBytes, llvm::raw_ostream &os);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_MODELDESCRIPTION_H
