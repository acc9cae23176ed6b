//===- InitAll.h - Register the tcc dialect and passes ----------*- C++ -*-===//
//
// One place that both tools (tcc, tcc-opt) use to learn every dialect and
// pass a tcc pipeline may contain.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_PASSES_INITALL_H
#define TCC_PASSES_INITALL_H

#include "mlir/Pass/PassOptions.h"
#include "target/TargetBackend.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace tcc {

/// The settings of the compile pipeline as `tcc-opt
/// -tcc-compile-pipeline='target=cuda gpu=h100 disable=NAME,...'` takes them
/// (`tcc compile` fills a TargetOptions from its command line).
struct CompilePipelineOptions : PassPipelineOptions<CompilePipelineOptions> {
  ListOption<std::string> disable{
      *this, "disable",
      llvm::cl::desc("optimization passes to leave out, named as in "
                     "optimizationPassNames() (the flag without 'tcc-')")};
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("the target the steps are planned for"),
                             llvm::cl::init("cpu")};
  Option<std::string> gpu{*this, "gpu",
                          llvm::cl::desc("the GPU the cuda target plans for")};
  Option<std::string> tuningDb{*this, "tuning-db",
                               llvm::cl::desc("a tcc tune file (the cuda target)")};
  Option<bool> ignoreTuningMismatch{
      *this, "ignore-tuning-mismatch",
      llvm::cl::desc("ignore a tuning file of another GPU or cuDNN, with a warning")};
  Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("the bytes of one bucket of gradients of a distributed step "
                     "(tcc-bucket-collectives; 0: its default, 25 MiB)"),
      llvm::cl::init(0)};
  Option<bool> allowFallback{
      *this, "allow-fallback",
      llvm::cl::desc("let the trainer use cuDNN's heuristic choice where a baked "
                     "engine cannot run")};
};

/// The optimization passes the pipeline runs by default, the registered
/// targets' included, in pipeline order (docs/passes.md): the names
/// --disable-pass takes.
std::vector<StringRef> optimizationPassNames();
/// The registered targets' optimization passes that are off unless
/// --enable-pass names them: the names it takes.
std::vector<StringRef> offByDefaultPassNames();

/// The tcc dialect and the upstream dialects tcc IR contains (func, arith).
void registerAllTccDialects(DialectRegistry &registry);

/// Every tcc pass and pipeline, plus the upstream passes they are run with
/// (canonicalize, cse), so `tcc-opt` accepts them on the command line.
void registerAllTccPasses();

/// The passes from the frontend's IR to what the code generators walk
/// (docs/passes.md), with `target`'s passes at their points, less the
/// optimization passes `options` disables: the step pipeline
/// (bn-bias-elimination, pool-activation-reorder, precision, the target's
/// forward passes, build-train-step, canonicalize, widen-16bit for the
/// target's 16-bit kinds, its layout passes, bucket-collectives, fusion
/// with what its libraries fuse, its algorithm selection), then the
/// planning pipeline (recompute, plan-memory), which counts the workspaces
/// the selection set.
/// Registered as the pipeline `tcc-compile-pipeline`.
void buildCompilePipeline(OpPassManager &pm, const TargetBackend &target,
                          const TargetOptions &options);
void buildStepPipeline(OpPassManager &pm, const TargetBackend &target,
                       const TargetOptions &options);
void buildPlanningPipeline(OpPassManager &pm, const TargetOptions &options);

} // namespace tcc
} // namespace mlir

#endif // TCC_PASSES_INITALL_H
