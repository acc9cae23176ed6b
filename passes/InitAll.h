//===- InitAll.h - Register the tcc dialect and passes ----------*- C++ -*-===//
//
// One place that both tools (tcc, tcc-opt) use to learn every dialect and
// pass a tcc pipeline may contain.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_PASSES_INITALL_H
#define TCC_PASSES_INITALL_H

#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace tcc {

/// The settings of the compile pipeline, shared by `tcc compile` (which
/// fills them from its command line) and `tcc-opt
/// -tcc-compile-pipeline='disable=NAME,...'`.
struct CompilePipelineOptions : PassPipelineOptions<CompilePipelineOptions> {
  ListOption<std::string> disable{
      *this, "disable",
      llvm::cl::desc("optimization passes to leave out, named as in "
                     "optimizationPassNames() (the flag without 'tcc-')")};
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("the target the steps are planned for (cpu, cuda): "
                     "which ops tcc-widen-16bit leaves on 16-bit tensors"),
      llvm::cl::init("cpu")};
};

/// The ops `target` runs on 16-bit tensors itself (tcc-widen-16bit's
/// `keep`): on both, the optimizer updates (double arithmetic on the stored
/// values); on cuda also convolutions, linear layers and views.
std::vector<std::string> targetSixteenBitOps(StringRef target);

/// The optimization passes the pipeline runs by default, in pipeline order
/// (docs/passes.md): the names --disable-pass takes.
ArrayRef<StringRef> optimizationPassNames();

/// The tcc dialect and the upstream dialects tcc IR contains (func, arith).
void registerAllTccDialects(DialectRegistry &registry);

/// Every tcc pass and pipeline, plus the upstream passes they are run with
/// (canonicalize, cse), so `tcc-opt` accepts them on the command line.
void registerAllTccPasses();

/// The passes from the frontend's IR to what the code generators walk:
/// bn-bias-elimination, pool-activation-reorder, precision,
/// build-train-step, canonicalize, widen-16bit (for the target),
/// channels-last (the cuda target), fusion,
/// recompute, plan-memory
/// (docs/passes.md), less the optimization passes `options` disables.
/// Registered as the pipeline `tcc-compile-pipeline`. It is the step
/// pipeline followed by the planning pipeline: between the two, the step's
/// ops, types and fusion groups are final, and `tcc compile` lets the
/// target choose its library calls (a convolution's cuDNN engine, for its
/// epilogue too) and set the
/// workspaces its ops need (`tcc.workspace_bytes`: the cuda target's cuDNN
/// and cuBLASLt workspaces), which recompute and the memory plan count.
void buildCompilePipeline(OpPassManager &pm,
                          const CompilePipelineOptions &options = {});
/// bn-bias-elimination through fusion.
void buildStepPipeline(OpPassManager &pm, const CompilePipelineOptions &options);
/// recompute, plan-memory.
void buildPlanningPipeline(OpPassManager &pm, const CompilePipelineOptions &options);

} // namespace tcc
} // namespace mlir

#endif // TCC_PASSES_INITALL_H
