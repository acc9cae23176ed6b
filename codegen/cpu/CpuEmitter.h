//===- CpuEmitter.h - Printing one op as runtime/kernels calls ---*- C++ -*-===//
//
// Private to codegen/: the cpu target's op printers (CpuOps.cpp, by family
// in ops/), called by its TargetEmitter (CpuTarget.cpp) from the shared
// step walk.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_CPU_CPUEMITTER_H
#define TCC_CODEGEN_CPU_CPUEMITTER_H

#include "codegen/common/Emitter.h"

namespace mlir::tcc {

/// Prints the kernel calls of `op`. Fails with an error on the op when the
/// cpu target cannot run it.
LogicalResult emitCpuOp(Operation *op, StepEmitter &emitter);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CPU_CPUEMITTER_H
