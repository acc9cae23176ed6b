//===- SourceSkeleton.h - The generated source file, for every target -*- C++ -*-===//
//
// Private to codegen/. Every target's source has one shape: the includes,
// class Model (a tcc::rt::CompiledModel of the target's runtime), the model
// description, StepArgs, the walked steps' functions and tables, and the
// functions that gather a batch and run a step. A target fills the hooks
// with what is its own (runtime headers, the model's base class and who
// runs its steps, StepArgs' extra fields, how it gathers a batch).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_COMMON_SOURCESKELETON_H
#define TCC_CODEGEN_COMMON_SOURCESKELETON_H

#include "codegen/common/StepWalker.h"
#include "runtime/CompiledModel.h"

#include <string>
#include <vector>

namespace mlir::tcc {

/// Who runs a step: the generated model's trainStep() and evalStep(),
/// which end a profiled step themselves (the cpu target), or the runtime's
/// model, which records the generated runTrainStep() and runEvalStep() as a
/// CUDA graph and replays it (the cuda target).
enum class StepRunner { Generated, Runtime };

/// What a target's source file has of its own.
struct SourceHooks {
  std::string target;                        ///< "cpu": the banner's, ModelInfo's, `cpu::gather_*`
  ::tcc::rt::MemoryKind memory = ::tcc::rt::MemoryKind::Host; ///< ModelInfo's: the arenas'
  std::vector<std::string> headers;          ///< beyond the skeleton's, <system> or "runtime/.."
  std::string aliases;                       ///< after the using-directives
  std::string declarations;                  ///< before class Model (a baked table)
  std::string modelBase;                     ///< class Model's base
  StepRunner runner = StepRunner::Generated; ///< who runs the steps
  std::string publicMembers;                 ///< after info()
  std::string stepArgsFields;                ///< StepArgs' fields between micro and clock
  std::string stepArgsValues;                ///< their values, each followed by ", "
  std::string gatherArgs;                    ///< the batch gathers' arguments before the buffers
  /// Whether the target emits a token model's predictStep() (@predict_step):
  /// its runtime has `<target>::gather_predict_batch`; a generated runner only.
  bool predict = false;
};

/// Walks the planned steps of `module` with `target` and writes the whole
/// source file: the skeleton with `hooks`, and after StepArgs what the walk
/// made `target` declare (TargetEmitter::fileScope).
LogicalResult emitStepSource(ModuleOp module, const SourceHooks &hooks, TargetEmitter &target,
                             llvm::raw_ostream &os);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_COMMON_SOURCESKELETON_H
