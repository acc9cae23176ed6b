//===- SyncNorm.cuh - Batch norm with statistics over every rank -*- CUDA -*-===//
//
// The device side of runtime/kernels/SyncNorm.h (train.distributed.
// sync_batch_norm): this rank's per-channel sums over many blocks, as
// Norm.cuh takes a batch norm's (RowSums.cuh, a fixed order), written as
// f64 for the step's tcc.all_reduce; then the statistics, normalisation
// and dx from the sums over every rank by the cpu kernels' functions with
// the count of all ranks' samples (kernels::all_ranks). Whole-batch norms
// only: a statistics row is a channel.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_SYNCNORM_CUH
#define TCC_RUNTIME_CUDA_DEVICE_SYNCNORM_CUH

#include "runtime/cuda/device/Norm.cuh"
#include "runtime/kernels/SyncNorm.h"

namespace tcc::rt::cuda {

/// Per channel, this rank's sum of x, or with `centered` (the sums of x
/// over every rank) its sum of (x - mean)^2 around the mean of all ranks.
template <class X>
void batch_norm_sums(cudaStream_t s, char *workspace, int64_t workspaceBytes,
                     const BatchNormShape &shape, int64_t ranks, const X *x,
                     const double *centered, double *out) {
  const tcc::cuda::RowSplit split = tcc::cuda::rowSplit(shape);
  const RowWorkspace w = row_workspace(split, workspace, workspaceBytes);
  const BatchNormShape all = kernels::all_ranks(shape, ranks);
  if (centered)
    row_part_sums(s, shape, split, w.parts, [=] __device__(int64_t c, int64_t k) {
      const double d = double(x[k]) - kernels::batch_norm_mean(all, centered[c]);
      return kernels::Sums{d * d, 0};
    });
  else
    row_part_sums(s, shape, split, w.parts, [=] __device__(int64_t, int64_t k) {
      return kernels::Sums{double(x[k]), 0};
    });
  combine_parts(s, split, w.parts,
                [=] __device__(int64_t c, const kernels::Sums &total) { out[c] = total.first; });
}

/// Training forward from the sums over every rank (`sum`, `squared`): the
/// statistics of each channel by one thread, then this rank's x normalised
/// and handed to store a chunk at a time (Norm.cuh).
template <class T, class X, class Store>
void batch_norm_forward_synced(cudaStream_t s, const BatchNormShape &shape, int64_t ranks,
                               const X *x, const T *weight, const T *bias, double eps,
                               double momentum, const double *sum, const double *squared,
                               Store store, T *savedMean, T *savedInvstd, T *runningMean,
                               T *runningVar) {
  const BatchNormShape all = kernels::all_ranks(shape, ranks);
  for_each(s, shape.c, [=] __device__(int64_t c) {
    kernels::batch_norm_store_statistics(
        all, eps, momentum, savedMean, savedInvstd, runningMean, runningVar, c,
        [&](int64_t) { return kernels::Sums{sum[c], squared[c]}; }, true);
  });
  batch_norm_apply_with<T>(s, shape, x, weight, bias, savedMean, savedInvstd, store);
}

/// This rank's backward sums, sums[c] = sum dy and sums[C + c] =
/// sum dy * (x - mean), and from them its dweight and dbias (either may be
/// null; the step's gradient all_reduce adds the ranks' up).
template <class T, class DY, class X>
void batch_norm_backward_sums(cudaStream_t s, char *workspace, int64_t workspaceBytes,
                              const BatchNormShape &shape, const DY *dy, const X *x,
                              const T *savedMean, const T *savedInvstd, double *sums,
                              T *dweight, T *dbias) {
  const tcc::cuda::RowSplit split = tcc::cuda::rowSplit(shape);
  const RowWorkspace w = row_workspace(split, workspace, workspaceBytes);
#if TCC_INJECT_FAULT == TCC_FAULT_BN_BACKWARD_SUMS_DROP_LAST
  const int64_t total = shape.n * shape.c * shape.hw;
  const int64_t lastSample = total - total / (shape.n / shape.rows_per_sample);
#endif
  row_part_sums(s, shape, split, w.parts, [=] __device__(int64_t c, int64_t k) {
#if TCC_INJECT_FAULT == TCC_FAULT_BN_BACKWARD_SUMS_DROP_LAST
    if (k >= lastSample)
      return kernels::Sums{0, 0};
#endif
    const double g = double(dy[k]);
    return kernels::Sums{g, g * (double(x[k]) - double(savedMean[c]))};
  });
  const int64_t channels = shape.c;
  combine_parts(s, split, w.parts, [=] __device__(int64_t c, const kernels::Sums &total) {
    w.rows[c] = total;
    sums[c] = total.first;
    sums[channels + c] = total.second;
  });
  if (dweight || dbias)
    for_each(s, shape.c, [=] __device__(int64_t c) {
      kernels::batch_norm_param_grads(
          shape, savedInvstd, dweight, dbias, c, [&](int64_t) { return w.rows[c]; }, true);
    });
}

/// dx of this rank's samples from the backward sums over every rank, a
/// chunk at a time (kernels::batch_norm_dx, the cpu kernel's).
template <class T, class DY, class X, class DX>
void batch_norm_backward_input(cudaStream_t s, const BatchNormShape &shape, int64_t ranks,
                               const DY *dy, const X *x, const T *weight, const T *savedMean,
                               const T *savedInvstd, const double *sums, DX *dx) {
  const BatchNormShape all = kernels::all_ranks(shape, ranks);
  const int step = norm_chunks(shape).rowStep;
  for_each_norm_chunk(s, shape, [=] __device__(int64_t i0, int count, int64_t c0, int64_t) {
    alignas(16) DY dys[kChunk];
    load_chunk(dy, i0, count, dys);
    alignas(16) X xs[kChunk];
    load_chunk(x, i0, count, xs);
    alignas(16) DX out[kChunk];
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      if (k == count)
        break;
      const int64_t c = c0 + k * step;
      const double mean = savedMean[c], invstd = savedInvstd[c];
      const double scale = weight ? double(weight[c]) : 1.0;
      out[k] = DX(kernels::batch_norm_dx(
          double(dys[k]), double(xs[k]), scale, mean, invstd,
          kernels::batch_norm_grad_factors(all, kernels::Sums{sums[c], sums[all.c + c]},
                                           invstd)));
    }
    store_chunk(dx, i0, count, out);
  });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_SYNCNORM_CUH
