//===- Norm.cuh - Batch and layer norm on the device -------------*- CUDA -*-===//
//
// The cpu kernels' functions (runtime/kernels/Norm.h) behind the same
// `_with` interface: the statistics and the backward's sums one block per
// channel (through every group of its channel, each group's sums spread over
// the block's threads in a fixed order, BlockSums), every elementwise part
// one thread per element. A fused group's elementwise
// ops come in as the device lambda `store` (an epilogue) or `dyAt` (a
// backward prologue), printed by codegen/CpuFusion.cpp; each element's
// thread calls them once (a call inside a loop would spill registers).
// Layer norm: one block per row (its sums BlockSums again), and its
// parameter gradients one thread per column.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_NORM_CUH
#define TCC_RUNTIME_CUDA_DEVICE_NORM_CUH

#include "runtime/cuda/device/Launch.cuh"
#include "runtime/kernels/Norm.h"

namespace tcc::rt::cuda {

using kernels::BatchNormShape;

/// The statistics row g * C + c of element k of [n, C, hw].
TCC_HOST_DEVICE inline int64_t statisticsRow(const BatchNormShape &s, int64_t k) {
  const int64_t row = k / s.hw;
  return s.group_of(row / s.c) * s.c + row % s.c;
}

template <class T, class Store>
void batch_norm_apply_with(cudaStream_t s, const BatchNormShape &shape, const T *x,
                           const T *weight, const T *bias, const T *savedMean,
                           const T *savedInvstd, Store store) {
  for_each(s, shape.n * shape.c * shape.hw, [=] __device__(int64_t k) {
    store(k, kernels::batch_norm_normalized(shape, x, weight, bias, savedMean, savedInvstd, k));
  });
}

/// Statistics one block per channel, then each element normalised and
/// stored by its own thread.
template <class T, class Store>
void batch_norm_forward_train_with(cudaStream_t s, const BatchNormShape &shape, const T *x,
                                   const T *weight, const T *bias, double eps, double momentum,
                                   Store store, T *savedMean, T *savedInvstd, T *runningMean,
                                   T *runningVar) {
  per_block(s, shape.c, shape.hw, [=] __device__(int64_t c, const BlockSums &sums) {
    kernels::batch_norm_train_statistics(shape, x, eps, momentum, savedMean, savedInvstd,
                                         runningMean, runningVar, c, sums);
  });
  batch_norm_apply_with(s, shape, x, weight, bias, savedMean, savedInvstd, store);
}

template <class T, class Store>
void batch_norm_forward_inference_with(cudaStream_t s, const BatchNormShape &shape, const T *x,
                                       const T *weight, const T *bias, const T *runningMean,
                                       const T *runningVar, double eps, Store store) {
  for_each(s, shape.n * shape.c * shape.hw, [=] __device__(int64_t k) {
    const kernels::detail::NormAffine a =
        kernels::inference_affine(weight, bias, runningMean, runningVar, eps, k / shape.hw % shape.c);
    store(k, kernels::detail::affine(x[k], a.scale, a.shift));
  });
}

/// dy (a fused prologue's value) into dx, one thread per element; then the
/// cpu kernel's per-channel backward, one block per channel, reading it.
template <class T, class DyAt>
void batch_norm_backward_with(cudaStream_t s, const BatchNormShape &shape, DyAt dyAt,
                              const T *x, const T *weight, const T *savedMean,
                              const T *savedInvstd, T *dx, T *dweight, T *dbias) {
  for_each(s, shape.n * shape.c * shape.hw,
           [=] __device__(int64_t k) { dx[k] = dyAt(k, statisticsRow(shape, k)); });
  per_block(s, shape.c, shape.hw, [=] __device__(int64_t c, const BlockSums &sums) {
    auto fromDx = [dx](int64_t k, int64_t) { return dx[k]; };
    kernels::batch_norm_backward_channel(shape, fromDx, x, weight, savedMean, savedInvstd, dx,
                                         dweight, dbias, c, sums);
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

/// Layer norm backward: dx one block per row, the parameter gradients one
/// thread per column (either may be null).
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
