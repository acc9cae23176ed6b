//===- Passes.h - The cuda target's passes ----------------------*- C++ -*-===//
#ifndef TCC_CODEGEN_CUDA_PASSES_H
#define TCC_CODEGEN_CUDA_PASSES_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::tcc {

#define GEN_PASS_DECL
#include "codegen/cuda/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/cuda/Passes.h.inc"

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CUDA_PASSES_H
