//===- Codegen.h - From the planned step functions to source ----*- C++ -*-===//
//
// The code generators walk @train_step and @eval_step in block order (the
// schedule) with the memory plan of tcc-plan-memory, and print one source
// file defining a tcc::rt::CompiledModel (runtime/CompiledModel.h). The walk
// (StepWalker.h) and the model description (ModelDescription.h) are shared;
// a target (a TargetEmitter) says what each op becomes. The driver finds
// targets in the registry (target/TargetBackend.h, codegen/Targets.h).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_CODEGEN_H
#define TCC_CODEGEN_CODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json_fwd.hpp>

namespace mlir::tcc {

/// Prints the C++ source of the cpu target for a module that went through
/// tcc-build-train-step and tcc-plan-memory.
LogicalResult emitCpuSource(ModuleOp module, llvm::raw_ostream &os);

/// Prints every op of every function of `module` (any tcc IR, planned or
/// not, without regions) as the statements the cpu target makes of it, each
/// after a `// OP-NAME` line; values are named a0.. (arguments), r0..
/// (results), c0.. (constants). For emitter tests (tcc-translate).
LogicalResult emitCpuOps(ModuleOp module, llvm::raw_ostream &os);

/// The CUDA source (.cu) of the cuda target (docs/cuda.md), and what it
/// makes of each op, as emitCpuSource and emitCpuOps.
LogicalResult emitCudaSource(ModuleOp module, llvm::raw_ostream &os);
LogicalResult emitCudaOps(ModuleOp module, llvm::raw_ostream &os);

/// Adds the cpu target (codegen/cpu) and the cuda target (codegen/cuda) to
/// the registry (target/TargetBackend.h).
void registerCpuTarget();
void registerCudaTarget();

/// The attribute as JSON (dictionaries, arrays, strings, numbers,
/// booleans), and as its text, for ModelInfo::recipeJson.
nlohmann::json attributeToJsonValue(Attribute attr);
std::string attributeToJson(Attribute attr);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CODEGEN_H
