//===- CpuPrinter.h - The cpu target's op printers, by family ----*- C++ -*-===//
//
// Private to codegen/cpu/. Each op becomes calls of the reference kernels
// (runtime/kernels/, and runtime/cpu/StepOps.h for the ops that read step
// values). Shapes are static, so every size is printed as a literal.
// Results that replace a state operand may share its memory (the memory
// plan decides); where a kernel works in place, the operand is first
// copied into the result unless they already are the same memory.
//
// A family's file registers its printers (registerCpu<Family>Ops);
// CpuOps.cpp builds the table from them and dispatches; CpuGroups.cpp
// prints the fusion groups.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_CPU_OPS_CPUPRINTER_H
#define TCC_CODEGEN_CPU_OPS_CPUPRINTER_H

#include "codegen/common/Emitter.h"
#include "codegen/common/OpPrinterTable.h"

namespace mlir::tcc {

/// What a cpu printer prints with: the emitter's names and its stream.
struct CpuPrinter {
  StepEmitter &e;
  llvm::raw_ostream &os;

  std::string operator()(Value v) const { return e.name(v); }
  /// The name, or a null float pointer for an absent operand.
  std::string opt(Value v) const { return e.nameOrNull(v); }
  /// The pointer as the update kernels' element type (updatePointer).
  std::string update(Value v) const { return updatePointer(e, v, v); }

  /// Copies `from` into `to` unless they are the same memory, so an
  /// in-place kernel can then update `to`.
  void copyInto(Value from, Value to) {
    if (e.name(from) != e.name(to))
      os << "  copy<" << cppElementType(from.getType()) << ">(" << numElements(from) << ", "
         << e.name(from) << ", " << e.name(to) << ");\n";
  }
};

using CpuOpPrinters = OpPrinterTable<CpuPrinter>;

/// The error of an op the cpu target cannot print.
LogicalResult cpuCannotRun(Operation *op);

class FusionGroupOp;

/// Prints a tcc.fusion_group as one loop nest (CpuGroups.cpp): its values
/// from outside and the values it yields are named in `emitter`.
LogicalResult emitCpuFusionGroup(FusionGroupOp group, StepEmitter &emitter);

/// The families (cpu/ops/<Family>Ops.cpp): registerCpu<Family>Ops.
#define OP_FAMILY(Family) void registerCpu##Family##Ops(CpuOpPrinters &table);
#include "codegen/common/OpFamilies.def"

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CPU_OPS_CPUPRINTER_H
