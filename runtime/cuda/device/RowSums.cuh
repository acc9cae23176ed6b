//===- RowSums.cuh - Per-channel sums over many blocks -----------*- CUDA -*-===//
//
// The device side of runtime/cuda/RowSplit.h: row_part_sums() has each
// block sum its range of a row (BlockSums: a fixed order), row_sums() adds
// a row's parts in order. Batch norm's statistics and backward sums
// (Norm.cuh) and a bias gradient (StepOps.cuh, reduce_sum_keep) use them.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_ROWSUMS_CUH
#define TCC_RUNTIME_CUDA_DEVICE_ROWSUMS_CUH

#include "runtime/cuda/RowSplit.h"
#include "runtime/cuda/device/Launch.cuh"

#include <string>

namespace tcc::rt::cuda {

using kernels::BatchNormShape;

/// The workspace of a split reduction (RowSplit): each block's sums, then
/// each row's.
struct RowWorkspace {
  kernels::Sums *parts, *rows;
};
inline RowWorkspace row_workspace(const tcc::cuda::RowSplit &split, char *workspace,
                                  int64_t bytes) {
  if (!workspace || bytes < split.workspaceBytes())
    throw std::runtime_error("a per-channel reduction was given " + std::to_string(bytes) +
                             " bytes of workspace, it needs " +
                             std::to_string(split.workspaceBytes()) +
                             " (a trainer compiled by another tcc version?)");
  if (split.length > 0xffffffffLL)
    throw std::runtime_error("a per-channel reduction over more than 2^32 elements per channel");
  auto *parts = reinterpret_cast<kernels::Sums *>(workspace);
  return {parts, parts + split.rows * split.parts};
}

/// parts[b] = the sums of term(row, k) over block b's range of its row
/// (row = g * C + c; k the flat index into [n, C, hw]), in a fixed order.
template <class Term>
void row_part_sums(cudaStream_t s, const BatchNormShape &shape,
                   const tcc::cuda::RowSplit &split, kernels::Sums *parts, Term term) {
  per_block(s, split.rows * split.parts, shape.hw,
            [=] __device__(int64_t b, const BlockSums &sums) {
              const int64_t row = b / split.parts, begin = (b - row * split.parts) * split.chunk;
              const int64_t end = begin + split.chunk < split.length ? begin + split.chunk
                                                                     : split.length;
              const int64_t g = row / shape.c, c = row - g * shape.c;
              const kernels::Sums total = sums.over_range(begin, end, [&](int64_t m, int64_t j) {
                return term(row, (shape.member(g, m) * shape.c + c) * shape.hw + j);
              });
              if (sums.leader())
                parts[b] = total;
            });
}

/// The sums of row `row`'s parts, in order.
TCC_HOST_DEVICE inline kernels::Sums row_sums(const tcc::cuda::RowSplit &split,
                                              const kernels::Sums *parts, int64_t row) {
  kernels::Sums total;
  for (int64_t p = 0; p < split.parts; ++p) {
    total.first += parts[row * split.parts + p].first;
    total.second += parts[row * split.parts + p].second;
  }
  return total;
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_ROWSUMS_CUH
