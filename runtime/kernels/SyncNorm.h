//===- SyncNorm.h - Batch norm with statistics over every rank --*- C++ -*-===//
//
// Synchronised batch norm (train.distributed.sync_batch_norm,
// docs/distributed.md): the batch is every rank's samples together, so each
// per-channel sum of Norm.h's batch norm is this rank's part, added up over
// the ranks by the step's tcc.all_reduce between the kernels below:
//   forward:  sum x            -> all_reduce -> sum (x - mean)^2
//             -> all_reduce -> statistics, normalisation (Norm.h's formulas,
//                with count = n * hw * ranks)
//   backward: sum dy, sum dy * (x - mean) (and this rank's dweight, dbias)
//             -> all_reduce -> dx
// The sums are f64 (acc_t), as Norm.h keeps them, so N ranks compute the
// one-process batch norm up to the order of the additions. Whole-batch
// norms only (no ghost batches: those stay within a rank).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_SYNCNORM_H
#define TCC_RUNTIME_KERNELS_SYNCNORM_H

#include "runtime/kernels/Norm.h"

namespace tcc::rt::kernels {

/// The shape the statistics of all `ranks` ranks' samples describe: this
/// rank's n times the ranks (one group; the kernels read only this rank's).
inline BatchNormShape all_ranks(BatchNormShape s, int64_t ranks) {
  s.n *= ranks;
  s.ghost = 0;
  return s;
}

/// Per channel, this rank's sum of x, or with `centered` (the sums of x
/// over every rank) its sum of (x - mean)^2 around the mean of all ranks.
template <class T>
void batch_norm_sums(const BatchNormShape &s, int64_t ranks, const T *x,
                     const double *centered, double *out) {
  const BatchNormShape all = all_ranks(s, ranks);
  const SequentialSums sums{s.hw};
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < s.c; ++c) {
    auto at = [&](int64_t m, int64_t j) { return acc_t(x[(m * s.c + c) * s.hw + j]); };
    if (!centered) {
      out[c] = sums.over(s.n, [&](int64_t m, int64_t j) { return Sums{at(m, j), 0}; }).first;
      continue;
    }
    const acc_t mean = batch_norm_mean(all, centered[c]);
    out[c] = sums.over(s.n, [&](int64_t m, int64_t j) {
                    const acc_t d = at(m, j) - mean;
                    return Sums{d * d, 0};
                  }).first;
  }
}

/// Training forward from the sums over every rank (`sum`, `squared`):
/// Norm.h's statistics and normalisation of this rank's x, each element
/// handed to store(k, y_k) (a fused epilogue), x read as stored (X: float,
/// or half::F16 / BF16 widened as loaded).
template <class T, class X, class Store>
void batch_norm_forward_synced(const BatchNormShape &s, int64_t ranks, const X *x,
                               const T *weight, const T *bias, double eps, double momentum,
                               const double *sum, const double *squared, Store store,
                               T *saved_mean, T *saved_invstd, T *running_mean,
                               T *running_var) {
  const BatchNormShape all = all_ranks(s, ranks);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < s.c; ++c) {
    batch_norm_store_statistics(all, eps, momentum, saved_mean, saved_invstd, running_mean,
                                running_var, c,
                                [&](int64_t) { return Sums{sum[c], squared[c]}; },
                                /*leader=*/true);
    const detail::NormAffine a =
        detail::norm_affine(saved_mean[c], saved_invstd[c], weight, bias, c);
    for (int64_t i = 0; i < s.n; ++i)
      detail::normalize_row<T>((i * s.c + c) * s.hw, s.hw, x, a.scale, a.shift, store);
  }
}

/// The same, storing into y.
template <class T>
void batch_norm_forward_synced(const BatchNormShape &s, int64_t ranks, const T *x,
                               const T *weight, const T *bias, double eps, double momentum,
                               const double *sum, const double *squared, T *y,
                               T *saved_mean, T *saved_invstd, T *running_mean,
                               T *running_var) {
  batch_norm_forward_synced<T>(
      s, ranks, x, weight, bias, eps, momentum, sum, squared,
      [y](int64_t k, T v) { y[k] = v; }, saved_mean, saved_invstd, running_mean, running_var);
}

/// This rank's backward sums, sums[0][c] = sum dy and sums[1][c] =
/// sum dy * (x - mean), and from them its dweight and dbias.
template <class T>
void batch_norm_backward_sums(const BatchNormShape &s, const T *dy, const T *x,
                              const T *saved_mean, const T *saved_invstd, double *sums,
                              T *dweight, T *dbias) {
  const SequentialSums reduce{s.hw};
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < s.c; ++c) {
    const acc_t mean = saved_mean[c];
    const Sums both = reduce.over(s.n, [&](int64_t m, int64_t j) {
      const int64_t k = (m * s.c + c) * s.hw + j;
      return Sums{acc_t(dy[k]), acc_t(dy[k]) * (acc_t(x[k]) - mean)};
    });
    sums[c] = both.first;
    sums[s.c + c] = both.second;
    batch_norm_param_grads(s, saved_invstd, dweight, dbias, c,
                           [&](int64_t) { return both; }, /*leader=*/true);
  }
}

/// dx of this rank's samples from the backward sums over every rank.
template <class T>
void batch_norm_backward_input(const BatchNormShape &s, int64_t ranks, const T *dy,
                               const T *x, const T *weight, const T *saved_mean,
                               const T *saved_invstd, const double *sums, T *dx) {
  const BatchNormShape all = all_ranks(s, ranks);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < s.c; ++c) {
    const acc_t mean = saved_mean[c], invstd = saved_invstd[c];
    const acc_t w = weight ? acc_t(weight[c]) : 1.0;
    const NormGradFactors f =
        batch_norm_grad_factors(all, Sums{sums[c], sums[s.c + c]}, invstd);
    for (int64_t m = 0; m < s.n; ++m)
      for (int64_t j = 0; j < s.hw; ++j) {
        const int64_t k = (m * s.c + c) * s.hw + j;
        dx[k] = batch_norm_dx(dy[k], acc_t(x[k]), w, mean, invstd, f);
      }
  }
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_SYNCNORM_H
