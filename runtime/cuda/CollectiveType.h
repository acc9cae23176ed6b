//===- CollectiveType.h - The element types of the step's collectives -*- C++ -*-===//
//
// Shared by the generated step (device/Collectives.cuh, also under host
// emulation) and the NCCL communicator (NcclCollectives.h).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_COLLECTIVETYPE_H
#define TCC_RUNTIME_CUDA_COLLECTIVETYPE_H

namespace tcc::rt::cuda {

enum class CollectiveType { F32, F64, F16, BF16 };

/// Bytes of one element of `type`.
inline constexpr int collectiveBytes(CollectiveType type) {
  return type == CollectiveType::F64 ? 8 : type == CollectiveType::F32 ? 4 : 2;
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_COLLECTIVETYPE_H
