//===- TokenWorkspace.h - The token kernels' scratch -------------*- C++
//-*-===//
//
// The cuda target's embedding backward (runtime/cuda/device/Embedding.cuh)
// groups the positions by id in its op's workspace: the segment starts
// [rows + 1] and the positions in id order [n], as 32-bit integers. The
// token cross entropy's backward (runtime/cuda/device/TokenLoss.cuh) keeps
// its scale (the upstream gradient over the positions counted) there, one
// double. The compiler asks the memory plan for these bytes
// (codegen/cuda/CudaConvPlans.cpp, attachCudaTarget); the kernels check
// what they get.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_TOKENWORKSPACE_H
#define TCC_RUNTIME_CUDA_TOKENWORKSPACE_H

#include <cstdint>

namespace tcc::cuda {

/// n ids into a table of `rows` rows.
inline int64_t embeddingWorkspaceBytes(int64_t n, int64_t rows) {
  return (rows + 1 + n) * int64_t(sizeof(int32_t));
}

inline int64_t tokenLossWorkspaceBytes() { return int64_t(sizeof(double)); }

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_TOKENWORKSPACE_H
