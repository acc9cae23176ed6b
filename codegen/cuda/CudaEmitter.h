//===- CudaEmitter.h - Printing one op as launches on a GPU ------*- C++ -*-===//
//
// Private to codegen/: the cuda target's op printers (CudaOps.cpp), called
// by its TargetEmitter (CudaTarget.cpp) from the shared step walk.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_CODEGEN_CUDAEMITTER_H
#define TCC_CODEGEN_CUDAEMITTER_H

#include "codegen/common/Emitter.h"

namespace mlir::tcc {

/// Prints the launches of `op` on `args.stream`, its buffers named in
/// `emitter`; a convolution runs row i of the baked cuDNN plans, whose
/// problem keys are `convKeys`. Fails with an error on the op when the cuda
/// target cannot run it yet.
LogicalResult emitCudaOp(Operation *op, StepEmitter &emitter, ArrayRef<std::string> convKeys);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CUDAEMITTER_H
