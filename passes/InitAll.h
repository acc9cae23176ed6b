//===- InitAll.h - Register the tcc dialect and passes ----------*- C++ -*-===//
//
// One place that both tools (tcc, tcc-opt) use to learn every dialect and
// pass a tcc pipeline may contain.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_PASSES_INITALL_H
#define TCC_PASSES_INITALL_H

namespace mlir {
class DialectRegistry;
class OpPassManager;
namespace tcc {

/// The tcc dialect and the upstream dialects tcc IR contains (func, arith).
void registerAllTccDialects(DialectRegistry &registry);

/// Every tcc pass and pipeline, plus the upstream passes they are run with
/// (canonicalize, cse), so `tcc-opt` accepts them on the command line.
void registerAllTccPasses();

/// The passes from the frontend's IR to what the code generators walk:
/// build-train-step, canonicalize, plan-memory. Registered as the pipeline
/// `tcc-compile-pipeline`.
void buildCompilePipeline(OpPassManager &pm);

} // namespace tcc
} // namespace mlir

#endif // TCC_PASSES_INITALL_H
