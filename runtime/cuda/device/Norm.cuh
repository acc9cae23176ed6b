//===- Norm.cuh - Batch and layer norm on the device -------------*- CUDA -*-===//
//
// The cpu kernels' functions (runtime/kernels/Norm.h) behind the `_with`
// interface, plus the workspace the memory plan gave the op: the
// statistics and the backward's sums of each channel's group over many
// blocks (runtime/cuda/RowSplit.h: each block a fixed range, its threads in
// a fixed order, BlockSums; each row's parts added by a block, so the same
// bits on every run), each channel's results by one thread with the cpu
// kernel's math, the elementwise passes a chunk of elements per thread
// (norm_chunks). A fused group's elementwise ops come in as the device
// lambda `store` (an epilogue: a chunk of normalised elements) or
// `dyChunk` (a backward prologue: fills a chunk of gradients, or one
// element of it), printed by codegen/CpuFusion.cpp.
// Layer norm: one block per row (its sums BlockSums again), and its
// parameter gradients one thread per column; its `_with` forms take the
// input (xAt) and the gradient (dyAt) one element at a time, and the
// forward's store(k, x, y), as a fused group's lambdas.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_NORM_CUH
#define TCC_RUNTIME_CUDA_DEVICE_NORM_CUH

#include "runtime/common/FastDivide.h"
#include "runtime/cuda/device/Chunk.cuh"
#include "runtime/cuda/device/FaultInjection.cuh"
#include "runtime/cuda/device/RowSums.cuh"
#include "runtime/kernels/Norm.h"

namespace tcc::rt::cuda {

using kernels::BatchNormShape;

/// Where element k of [n, C, hw] is: its channel and its statistics row
/// g * C + c, by multiplications (FastDivide) instead of 64-bit divisions.
struct BatchNormPosition {
  BatchNormShape shape;
  FastDivide hw, c, groupSize, groups, rowsPerSample;

  explicit BatchNormPosition(const BatchNormShape &s)
      : shape(s), hw(uint64_t(s.hw)), c(uint64_t(s.c)), groupSize(uint64_t(s.group_size())),
        groups(uint64_t(s.num_groups())), rowsPerSample(uint64_t(s.rows_per_sample)) {}

  /// The channel and the statistics row of element k.
  TCC_HOST_DEVICE void at(int64_t k, int64_t &channel, int64_t &row) const {
    const uint64_t plane = hw.div(uint64_t(k)), sample = c.div(plane);
    channel = int64_t(c.rem(plane, sample));
    uint64_t group;
    if (shape.strided) {
      const uint64_t whole = rowsPerSample.div(sample);
      group = groups.rem(whole, groups.div(whole));
    } else {
      group = groupSize.div(sample);
    }
    row = int64_t(group) * shape.c + channel;
  }
};

/// The chunks the per-element passes of a batch norm take over [n, C, hw]
/// (Chunk.cuh): kChunk consecutive elements where they share a statistics
/// row (hw a multiple of kChunk: one plane) or take consecutive rows (hw 1
/// and C a multiple of kChunk: channels of one NHWC pixel), else one
/// element. One 2-byte element per thread left the memory system a fifth of
/// the bytes in flight it needs (docs/performance.md: ResNet-9's batch norms
/// took 4 of its 8.2 ms step).
struct NormChunks {
  int width = 1;   ///< elements per chunk
  int rowStep = 0; ///< element k's channel and row: the chunk's first's + k * rowStep
};
inline NormChunks norm_chunks(const BatchNormShape &s) {
  if (s.hw > 1 && s.hw % kChunk == 0)
    return {kChunk, 0};
  if (s.hw == 1 && s.c % kChunk == 0)
    return {kChunk, 1};
  return {1, 0};
}

/// f(i0, count, channel, row) for each chunk of [n, C, hw] (norm_chunks),
/// its first element's channel and statistics row found once.
template <class F> void for_each_norm_chunk(cudaStream_t s, const BatchNormShape &shape, F f) {
  const BatchNormPosition position(shape);
  for_each_chunk(
      s, shape.n * shape.c * shape.hw,
      [=] __device__(int64_t i0, int count) {
        int64_t c, row;
        position.at(i0, c, row);
        f(i0, count, c, row);
      },
      norm_chunks(shape).width);
}

/// x normalised chunk by chunk, element k of a chunk by affineOf(its
/// channel, its row) (kernels::batch_norm_normalized's math), each chunk
/// handed to store(i0, count, y) (a fused epilogue's elementwise ops).
template <class T, class X, class AffineOf, class Store>
void normalize_chunks(cudaStream_t s, const BatchNormShape &shape, const X *x, AffineOf affineOf,
                      Store store) {
  const int step = norm_chunks(shape).rowStep;
  for_each_norm_chunk(s, shape, [=] __device__(int64_t i0, int count, int64_t c, int64_t row) {
    alignas(16) X xs[kChunk];
    load_chunk(x, i0, count, xs);
    alignas(16) T y[kChunk];
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      if (k == count)
        break;
      const kernels::detail::NormAffine a = affineOf(c + k * step, row + k * step);
      y[k] = kernels::detail::affine(kernels::widened<T>(xs[k]), a.scale, a.shift);
    }
    store(i0, count, y);
  });
}

template <class T, class X, class Store>
void batch_norm_apply_with(cudaStream_t s, const BatchNormShape &shape, const X *x,
                           const T *weight, const T *bias, const T *savedMean,
                           const T *savedInvstd, Store store) {
  normalize_chunks<T>(s, shape, x, [=] __device__(int64_t c, int64_t row) {
    return kernels::detail::norm_affine(savedMean[row], savedInvstd[row], weight, bias, c);
  }, store);
}

/// Training forward: each statistics row summed over split.parts blocks
/// (RowSplit) and the parts added (a block per row), its mean, the squared
/// deviations from it the same way, the statistics of each channel by one
/// thread (kernels::batch_norm_store_statistics, the cpu kernel's), then
/// x normalised and stored a chunk at a time.
template <class T, class X, class Store>
void batch_norm_forward_train_with(cudaStream_t s, char *workspace, int64_t workspaceBytes,
                                   const BatchNormShape &shape, const X *x, const T *weight,
                                   const T *bias, double eps, double momentum, Store store,
                                   T *savedMean, T *savedInvstd, T *runningMean,
                                   T *runningVar) {
  const tcc::cuda::RowSplit split = tcc::cuda::rowSplit(shape);
  const RowWorkspace w = row_workspace(split, workspace, workspaceBytes);
  row_part_sums(s, shape, split, w.parts, [=] __device__(int64_t, int64_t k) {
    return kernels::Sums{double(x[k]), 0};
  });
  combine_parts(s, split, w.parts, [=] __device__(int64_t row, const kernels::Sums &total) {
    w.rows[row].first = total.first;
  });
  row_part_sums(s, shape, split, w.parts, [=] __device__(int64_t row, int64_t k) {
    const double d = double(x[k]) - kernels::batch_norm_mean(shape, w.rows[row].first);
    return kernels::Sums{d * d, 0};
  });
  combine_parts(s, split, w.parts, [=] __device__(int64_t row, const kernels::Sums &total) {
    w.rows[row].second = total.first;
  });
  for_each(s, shape.c, [=] __device__(int64_t c) {
    kernels::batch_norm_store_statistics(
        shape, eps, momentum, savedMean, savedInvstd, runningMean, runningVar, c,
        [&](int64_t g) { return w.rows[g * shape.c + c]; },
        true);
  });
  batch_norm_apply_with<T>(s, shape, x, weight, bias, savedMean, savedInvstd, store);
}

template <class T, class X, class Store>
void batch_norm_forward_inference_with(cudaStream_t s, const BatchNormShape &shape, const X *x,
                                       const T *weight, const T *bias, const T *runningMean,
                                       const T *runningVar, double eps, Store store) {
  normalize_chunks<T>(s, shape, x, [=] __device__(int64_t c, int64_t) {
    return kernels::inference_affine(weight, bias, runningMean, runningVar, eps, c);
  }, store);
}

/// Training backward: each statistics row's two sums over split.parts
/// blocks, each term's dy from dyChunk(k, 1, row, 0, dy) (a fused
/// prologue's elementwise ops, or a load); each channel's parameter
/// gradients by one thread; then dx a chunk at a time from
/// dyChunk(i0, count, row, rowStep, dy) (element k's statistics row
/// row + k * rowStep) and kernels::batch_norm_dx, the cpu kernel's, stored
/// as DX (16 bits where the group narrows dx). dy is computed twice and
/// never stored: 16-bit inputs read twice instead of an f32 dy written,
/// read twice and rewritten as dx, and dx cast down by a kernel of its own
/// (30 bytes per element in airbench94's steps, now 10).
template <class T, class DyChunk, class X, class DX>
void batch_norm_backward_with(cudaStream_t s, char *workspace, int64_t workspaceBytes,
                              const BatchNormShape &shape, DyChunk dyChunk, const X *x,
                              const T *weight, const T *savedMean, const T *savedInvstd, DX *dx,
                              T *dweight, T *dbias) {
  const tcc::cuda::RowSplit split = tcc::cuda::rowSplit(shape);
  const RowWorkspace w = row_workspace(split, workspace, workspaceBytes);
  row_part_sums(s, shape, split, w.parts, [=] __device__(int64_t row, int64_t k) {
    T dy[kChunk];
    dyChunk(k, 1, row, 0, dy);
    return kernels::Sums{double(dy[0]), double(dy[0]) * (double(x[k]) - double(savedMean[row]))};
  });
  combine_parts(s, split, w.parts,
                [=] __device__(int64_t row, const kernels::Sums &total) { w.rows[row] = total; });
  if (dweight || dbias)
    for_each(s, shape.c, [=] __device__(int64_t c) {
      kernels::batch_norm_param_grads(
          shape, savedInvstd, dweight, dbias, c,
          [&](int64_t g) { return w.rows[g * shape.c + c]; }, true);
    });
  if (!dx)
    return;
  const int step = norm_chunks(shape).rowStep;
  for_each_norm_chunk(s, shape, [=] __device__(int64_t i0, int count, int64_t c0, int64_t row0) {
    alignas(16) T dy[kChunk];
    dyChunk(i0, count, row0, step, dy);
    alignas(16) X xs[kChunk];
    load_chunk(x, i0, count, xs);
    alignas(16) DX out[kChunk];
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      if (k == count)
        break;
      const int64_t c = c0 + k * step, row = row0 + k * step;
      const double mean = savedMean[row], invstd = savedInvstd[row];
      const double scale = weight ? double(weight[c]) : 1.0;
      double v = kernels::batch_norm_dx(
          dy[k], double(xs[k]), scale, mean, invstd,
          kernels::batch_norm_grad_factors(shape, w.rows[row], invstd));
#if TCC_INJECT_FAULT == TCC_FAULT_BATCH_NORM_DX_ULP
      v += (v < 0 ? -v : v) * 0x1p-10;
#endif
      out[k] = DX(v);
    }
    store_chunk(dx, i0, count, out);
  });
}

/// Layer norm forward over the rows of [outer, inner], one block per row:
/// x through xAt(k), each normalised element to store(k, x_k, y_k)
/// (kernels::layer_norm_forward_row_with; a fused group's prologue and
/// epilogue, printed by codegen/common/NormGroups.cpp).
template <class T, class XAt, class Store>
void layer_norm_forward_with(cudaStream_t s, int64_t outer, int64_t inner, XAt xAt,
                             const T *weight, const T *bias, double eps, Store store,
                             T *savedMean, T *savedInvstd) {
  per_block(s, outer, inner, [=] __device__(int64_t r, const BlockSums &sums) {
    kernels::layer_norm_forward_row_with(inner, xAt, weight, bias, eps, store, savedMean,
                                         savedInvstd, r, sums);
  });
}

/// Layer norm forward over the rows of x [outer, inner], one block per row.
template <class T>
void layer_norm_forward(cudaStream_t s, int64_t outer, int64_t inner, const T *x,
                        const T *weight, const T *bias, double eps, T *y, T *savedMean,
                        T *savedInvstd) {
  per_block(s, outer, inner, [=] __device__(int64_t r, const BlockSums &sums) {
    kernels::layer_norm_forward_row(inner, x, weight, bias, eps, y, savedMean, savedInvstd, r,
                                    sums);
  });
}

/// Layer norm backward with dy through dyAt(k) (a fused prologue computes
/// each element where it is read: once for dx, which holds it between the
/// row's two passes, once for the parameter gradients): dx one block per
/// row, the parameter gradients one thread per column (either may be null).
template <class T, class DyAt>
void layer_norm_backward_with(cudaStream_t s, int64_t outer, int64_t inner, DyAt dyAt,
                              const T *x, const T *weight, const T *savedMean,
                              const T *savedInvstd, T *dx, T *dweight, T *dbias) {
  if (dx)
    per_block(s, outer, inner, [=] __device__(int64_t r, const BlockSums &sums) {
      kernels::layer_norm_backward_row_with(inner, dyAt, x, weight, savedMean, savedInvstd, dx,
                                            r, sums);
    });
  if (dweight || dbias)
    for_each(s, inner, [=] __device__(int64_t j) {
      kernels::layer_norm_param_grads_at_with(outer, inner, dyAt, x, savedMean, savedInvstd,
                                              dweight, dbias, j);
    });
}

/// Layer norm backward reading dy: dx one block per row, the parameter
/// gradients one thread per column (either may be null).
template <class T>
void layer_norm_backward(cudaStream_t s, int64_t outer, int64_t inner, const T *dy, const T *x,
                         const T *weight, const T *savedMean, const T *savedInvstd, T *dx,
                         T *dweight, T *dbias) {
  if (dx)
    per_block(s, outer, inner, [=] __device__(int64_t r, const BlockSums &sums) {
      kernels::layer_norm_backward_row(inner, dy, x, weight, savedMean, savedInvstd, dx, r,
                                       sums);
    });
  if (dweight || dbias)
    for_each(s, inner, [=] __device__(int64_t j) {
      kernels::layer_norm_param_grads_at(outer, inner, dy, x, savedMean, savedInvstd, dweight,
                                         dbias, j);
    });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_NORM_CUH
