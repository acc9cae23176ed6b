//===- CpuOps.cpp - One tcc op as runtime/kernels calls -------------------===//
//
// The cpu target's dispatch: a fusion group by its kind (CpuGroups.cpp),
// any other op by the table its families register (cpu/ops/).
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/CpuEmitter.h"

#include "codegen/cpu/ops/CpuPrinter.h"

#include "ir/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

LogicalResult mlir::tcc::cpuCannotRun(Operation *op) {
  return op->emitError("the cpu target cannot run this op yet");
}

LogicalResult mlir::tcc::emitCpuOp(Operation *op, StepEmitter &e) {
  if (auto group = dyn_cast<FusionGroupOp>(op))
    return emitCpuFusionGroup(group, e);
  static const CpuOpPrinters printers([](CpuOpPrinters &t) {
#define OP_FAMILY(Family) registerCpu##Family##Ops(t);
#include "codegen/common/OpFamilies.def"
  });
  const CpuOpPrinters::Print *print = printers.lookup(op);
  if (!print)
    return cpuCannotRun(op);
  CpuPrinter p{e, e.os};
  return (*print)(op, p);
}
