//===- RowSplit.h - Per-channel sums over many blocks -------------*- C++ -*-===//
//
// The cuda target sums each row of [n, C, hw] it reduces per channel (a
// batch norm's statistics row: channel c of ghost group g, its G * hw
// elements; a bias gradient's channel: all n * hw) over `parts` blocks, each
// a contiguous range of `chunk` elements, then adds each row's parts, a
// block per row (runtime/cuda/device/RowSums.cuh); where a row's elements
// are C apart (an NHWC tensor), a block sums kTile neighbouring rows side by
// side. One block per row left most of the GPU idle: airbench94's first
// batch norm has 64 rows of 230400 elements, its whitening bias gradient 24
// of a million. The split is a function of the
// shape only, so the sums, and the bits, are the same on every GPU. The
// parts' sums need a workspace in the memory plan: the compiler asks for
// workspaceBytes() (codegen/cuda/CudaConvPlans.cpp, attachCudaTarget) and
// the kernels check what they get.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_ROWSPLIT_H
#define TCC_RUNTIME_CUDA_ROWSPLIT_H

#include "runtime/kernels/Norm.h"

#include <cstdint>

namespace tcc::cuda {

struct RowSplit {
  /// About two waves of 256-thread blocks on an H100 (132 SMs, 8 each).
  static constexpr int64_t kTargetBlocks = 2048;
  /// Fewer elements per block than this are not worth a part of their own.
  static constexpr int64_t kMinChunk = 4096;
  /// Rows a block sums side by side where a row's elements are C apart (hw
  /// 1: an NHWC tensor seen as [n*h*w, C], or [n, C]): each warp reads 32
  /// neighbouring channels of one sample, where one row per block would
  /// read one element per C.
  static constexpr int64_t kTile = 32;

  int64_t rows = 0;   ///< C * groups, row g * C + c
  int64_t length = 0; ///< elements per row, G * hw
  int64_t parts = 1;  ///< blocks per row
  int64_t chunk = 0;  ///< elements per block (the row's last block: the rest)
  int64_t tile = 1;   ///< rows per block: 1, or kTile where hw is 1
  int64_t across = 0; ///< blocks side by side: rows, or groups * tiles of C

  /// Two sums per block and row, then two per row (kernels::Sums of doubles).
  int64_t workspaceBytes() const {
    return (rows * parts + rows) * int64_t(sizeof(tcc::rt::kernels::Sums));
  }
};

inline RowSplit rowSplit(const tcc::rt::kernels::BatchNormShape &s) {
  RowSplit split;
  split.rows = split.across = s.c * s.num_groups();
  split.length = s.group_size() * s.hw;
  if (split.rows <= 0 || split.length <= 0)
    return split;
  int64_t width = 1; // the rows a block reads at once
  if (s.hw == 1 && s.c > 1) {
    split.tile = RowSplit::kTile;
    split.across = s.num_groups() * ((s.c + RowSplit::kTile - 1) / RowSplit::kTile);
    width = s.c < RowSplit::kTile ? s.c : RowSplit::kTile;
  }
  const int64_t wanted = (RowSplit::kTargetBlocks + split.across - 1) / split.across;
  const int64_t worth = (split.length * width + RowSplit::kMinChunk - 1) / RowSplit::kMinChunk;
  const int64_t parts = wanted < worth ? wanted : worth;
  split.chunk = (split.length + parts - 1) / parts;
  split.parts = (split.length + split.chunk - 1) / split.chunk;
  return split;
}

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_ROWSPLIT_H
