//===- PassReport.h - What each optimization pass did -------------*- C++ -*-===//
//
// Each optimization pass records what it did on the module, under
// `tcc.pass_report` (kPassReportAttr): a dictionary from the pass's name (the
// flag without "tcc-") to a dictionary of its results, e.g.
//   tcc.pass_report = {"pool-activation-reorder" = {moved = 2 : i64}}
// `tcc compile --report` copies it into the report's `passes` section; lit
// tests read it from `--emit=planned-mlir` or tcc-opt's output. (MLIR's pass
// statistics would be the natural place, but release builds of LLVM compile
// them out.)
//
//===----------------------------------------------------------------------===//
#ifndef TCC_PASSES_PASSREPORT_H
#define TCC_PASSES_PASSREPORT_H

#include "ir/TccAttrNames.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tcc {

/// Sets `key` = `value` in pass `pass`'s entry of the module's report.
void recordPassResult(ModuleOp module, StringRef pass, StringRef key, Attribute value);

/// The kernels one run of `step` launches: one per op or fusion group, a
/// micro-batch loop's body once per micro-batch; constants and views
/// (flatten, reshape: a new name for the same bytes) launch none, except,
/// in a planned step, a view the memory plan gave bytes of its own (a copy:
/// ir/PlannedViews.h).
int64_t kernelsPerStep(func::FuncOp step);
/// The kernels `op` launches in one run of its block, as kernelsPerStep
/// counts them.
int64_t kernelsOf(Operation &op);

} // namespace mlir::tcc

#endif // TCC_PASSES_PASSREPORT_H
