//===- Codegen.h - From the planned step functions to source ----*- C++ -*-===//
//
// The code generators walk @train_step and @eval_step in block order (the
// schedule) with the memory plan of tcc-plan-memory, and print one source
// file defining a tcc::rt::CompiledModel (runtime/CompiledModel.h). The walk
// and the model description are shared; targets differ in how an op is
// printed.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_CODEGEN_H
#define TCC_CODEGEN_CODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tcc {

/// Prints the C++ source of the cpu target for a module that went through
/// tcc-build-train-step and tcc-plan-memory.
LogicalResult emitCpuSource(ModuleOp module, llvm::raw_ostream &os);

/// The attribute as JSON text (dictionaries, arrays, strings, numbers,
/// booleans), for ModelInfo::recipeJson.
std::string attributeToJson(Attribute attr);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CODEGEN_H
