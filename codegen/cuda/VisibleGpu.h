//===- VisibleGpu.h - Whether the NVIDIA driver shows a GPU -----*- C++ -*-===//
#ifndef TCC_CODEGEN_CUDA_VISIBLEGPU_H
#define TCC_CODEGEN_CUDA_VISIBLEGPU_H

#include <string>

namespace mlir::tcc {

/// The NVIDIA driver's answer: true with the first GPU's name, or false
/// with why there is none (no driver, no GPU, a driver that cannot start).
bool visibleGpu(std::string &gpu, std::string &whyNot);

} // namespace mlir::tcc

#endif // TCC_CODEGEN_CUDA_VISIBLEGPU_H
