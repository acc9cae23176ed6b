//===- Codegen.h - From the planned step functions to source ----*- C++ -*-===//
//
// The code generators walk @train_step and @eval_step in block order (the
// schedule) with the memory plan of tcc-plan-memory, and print one source
// file defining a tcc::rt::CompiledModel (runtime/CompiledModel.h). The walk
// (StepWalker.h) and the model description (ModelDescription.h) are shared;
// a target (a TargetEmitter) says what each op becomes. The driver finds
// targets in the registry below.
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

/// Prints every op of every function of `module` (any tcc IR, planned or
/// not, without regions) as the statements the cpu target makes of it, each
/// after a `// OP-NAME` line; values are named a0.. (arguments), r0..
/// (results), c0.. (constants). For emitter tests (tcc-translate).
LogicalResult emitCpuOps(ModuleOp module, llvm::raw_ostream &os);

/// The CUDA source (.cu) of the cuda target (docs/cuda.md), and what it
/// makes of each op, as emitCpuSource and emitCpuOps.
LogicalResult emitCudaSource(ModuleOp module, llvm::raw_ostream &os);
LogicalResult emitCudaOps(ModuleOp module, llvm::raw_ostream &os);

/// A code generator `tcc compile --target=NAME` can pick.
struct Target {
  StringRef name;    ///< as --target spells it
  StringRef summary; ///< one line for --help
  /// Prints the source of a planned module; null where this version of tcc
  /// cannot generate code for the target yet.
  LogicalResult (*emitSource)(ModuleOp module, llvm::raw_ostream &os);
  /// Prints what the target makes of each op (tcc-translate --emit-NAME);
  /// null with emitSource.
  LogicalResult (*emitOps)(ModuleOp module, llvm::raw_ostream &os);
  bool takesMarch;    ///< --march (the C++ compiler's) applies
  bool takesTuningDb; ///< --tuning-db (algorithm choices) applies
  bool takesGpu;      ///< --gpu (the GPU the step is planned for) applies
};

/// Every target, in the order --help lists them.
ArrayRef<Target> registeredTargets();
/// The target named `name`, or null.
const Target *lookupTarget(StringRef name);
/// The first target that can generate code: what an error suggests where
/// another cannot. (`tcc compile`'s default is the driver's: cuda where
/// CUDA is found, tools/tcc/CompileOptions.cpp.)
const Target &defaultTarget();

/// The attribute as JSON text (dictionaries, arrays, strings, numbers,
/// booleans), for ModelInfo::recipeJson.
std::string attributeToJson(Attribute attr);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CODEGEN_H
