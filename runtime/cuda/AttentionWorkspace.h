//===- AttentionWorkspace.h - The attention kernels' scratch -----*- C++ -*-===//
//
// The cuda target's attention (runtime/cuda/device/Attention.cuh) keeps the
// [n*heads, tq, tk] scores of a batch in f32 in its op's workspace: one
// matrix forward (the probabilities), two backward (the probabilities and
// the scores' gradients); after them (from a multiple of 256 bytes) the
// workspace of its cuBLASLt head products (AttentionProducts.h). The
// compiler asks the memory plan for these bytes
// (codegen/cuda/CudaConvPlans.cpp, attachCudaTarget); the kernels check
// what they get.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_ATTENTIONWORKSPACE_H
#define TCC_RUNTIME_CUDA_ATTENTIONWORKSPACE_H

#include "runtime/kernels/Attention.h"

#include <cstdint>

namespace tcc::cuda {

/// The scores' bytes, rounded up to 256: where the matmuls' workspace starts.
inline int64_t attentionScoresBytes(const rt::kernels::AttentionShape &s, bool backward) {
  const int64_t bytes = (backward ? 2 : 1) * s.n * s.heads * s.tq * s.tk * int64_t(sizeof(float));
  return (bytes + 255) / 256 * 256;
}

/// The whole workspace: the scores, then `matmulBytes` for cuBLASLt
/// (matmulWorkspaceBytes of the GPU).
inline int64_t attentionWorkspaceBytes(const rt::kernels::AttentionShape &s, bool backward,
                                       int64_t matmulBytes) {
  return attentionScoresBytes(s, backward) + matmulBytes;
}

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_ATTENTIONWORKSPACE_H
