//===- CudaFusionPatterns.h - The cuda target's library epilogues -*- C++ -*-===//
#ifndef TCC_CODEGEN_CUDA_CUDAFUSIONPATTERNS_H
#define TCC_CODEGEN_CUDA_CUDAFUSIONPATTERNS_H

#include "target/FusionPattern.h"

#include "llvm/ADT/ArrayRef.h"

namespace mlir::tcc {

/// What cuBLASLt and cuDNN apply in their epilogues, in the order
/// tcc-fusion tries them (docs/passes.md#tcc-fusion).
llvm::ArrayRef<FusionPattern> cudaEpiloguePatterns();

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CUDA_CUDAFUSIONPATTERNS_H
