//===- NormSplit.h - Batch norm's sums over many blocks ------------*- C++ -*-===//
//
// The cuda target sums each statistics row of a batch norm (channel c of
// ghost group g: its G * hw elements) over `parts` blocks, each a
// contiguous range of `chunk` elements, then adds the parts in order
// (runtime/cuda/device/Norm.cuh). One block per row left most of the GPU
// idle: airbench94's first batch norm has 64 rows of a million elements.
// The split is a function of the shape only, so the sums, and the bits, are
// the same on every GPU. The parts' sums need a workspace in the memory
// plan: the compiler asks for workspace_bytes() (codegen/cuda/
// CudaConvPlans.cpp, attachCudaTarget) and the kernels check what they get.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_NORMSPLIT_H
#define TCC_RUNTIME_CUDA_NORMSPLIT_H

#include "runtime/kernels/Norm.h"

#include <cstdint>

namespace tcc::cuda {

struct NormSplit {
  /// About two waves of 256-thread blocks on an H100 (132 SMs, 8 each).
  static constexpr int64_t kTargetBlocks = 2048;
  /// Fewer elements per block than this are not worth a part of their own.
  static constexpr int64_t kMinChunk = 4096;

  int64_t rows = 0;   ///< C * groups, row g * C + c
  int64_t length = 0; ///< elements per row, G * hw
  int64_t parts = 1;  ///< blocks per row
  int64_t chunk = 0;  ///< elements per block (the row's last block: the rest)

  /// Two sums per block, then two per row (kernels::Sums of doubles).
  int64_t workspaceBytes() const {
    return (rows * parts + rows) * int64_t(sizeof(tcc::rt::kernels::Sums));
  }
};

inline NormSplit normSplit(const tcc::rt::kernels::BatchNormShape &s) {
  NormSplit split;
  split.rows = s.c * s.num_groups();
  split.length = s.group_size() * s.hw;
  if (split.rows <= 0 || split.length <= 0)
    return split;
  const int64_t wanted = (NormSplit::kTargetBlocks + split.rows - 1) / split.rows;
  const int64_t worth = (split.length + NormSplit::kMinChunk - 1) / NormSplit::kMinChunk;
  const int64_t parts = wanted < worth ? wanted : worth;
  split.chunk = (split.length + parts - 1) / parts;
  split.parts = (split.length + split.chunk - 1) / split.chunk;
  return split;
}

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_NORMSPLIT_H
