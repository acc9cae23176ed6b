//===- Norm.h - Batch norm (with ghost batches) and layer norm --*- C++ -*-===//
//
// Batch norm (torch.nn.functional.batch_norm, training=True), on x [n, C] or
// [n, C, HW] (hw = 1 for the former). Ghost batch norm: the batch is split
// into n/G groups of G samples, each normalized with its own statistics
// (G = n, or ghost = 0: the whole batch; n % G == 0).
//   per group g and channel c, over cnt = G*hw elements:
//     mean = sum x / cnt,  var = sum (x-mean)^2 / cnt        (biased)
//     invstd = 1 / sqrt(var + eps)
//     y = (x - mean) * invstd * weight[c] + bias[c]
//   saved_mean / saved_invstd: [n/G, C].
//   running stats (if given), with the averages taken over the n/G groups:
//     running_mean = (1-momentum)*running_mean + momentum * avg_g mean_g
//     running_var  = (1-momentum)*running_var
//                    + momentum * avg_g var_g * cnt/(cnt-1)    (unbiased)
//   The groups are consecutive samples (sample i in group i / G), or with
//   `strided` every (n/G)-th sample (sample i in group i mod (n/G)): the
//   myrtle.ai ResNet-9's GhostBatchNorm, whose x.view(-1, C*num_splits, H, W)
//   puts sample i in split i mod num_splits. Same formulas per group, other
//   members, so other numbers on the same batch.
// weight / bias may be nullptr: scale 1 / shift 0 ("frozen" or absent).
//
// Layer norm (torch.nn.functional.layer_norm) over the trailing `inner`
// elements of x [outer, inner]; weight / bias [inner], optional.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_NORM_H
#define TCC_RUNTIME_KERNELS_NORM_H

#include "runtime/common/HostDevice.h"
#include "runtime/kernels/Common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace tcc::rt::kernels {

namespace detail {

/// A batch norm's per-channel affine map, y = x * scale + shift, from the
/// statistics as saved (rounded to T): the training forward and
/// batch_norm_apply (a recompute of it) both use this, so they agree bit
/// for bit.
struct NormAffine {
  acc_t scale, shift;
};
template <class T>
TCC_HOST_DEVICE inline NormAffine norm_affine(T mean, T invstd, const T *weight, const T *bias,
                              int64_t c) {
  const acc_t scale = acc_t(invstd) * (weight ? acc_t(weight[c]) : 1.0);
  return {scale, (bias ? acc_t(bias[c]) : 0.0) - acc_t(mean) * scale};
}

/// x * scale + shift rounded to T, with one rounding in acc_t wherever it
/// is computed: a fused multiply-add where the target has one (as the
/// compiler would contract it), else a product kept from contraction.
template <class T> TCC_HOST_DEVICE inline T affine(T x, acc_t scale, acc_t shift) {
#if defined(__CUDA_ARCH__) || defined(__FMA__) || defined(__aarch64__)
  return T(std::fma(acc_t(x), scale, shift));
#else
  return T(as_stored(acc_t(x) * scale) + shift);
#endif
}

/// store(k, x[k] * scale + shift) for k in [k0, k0 + n), in chunks: the
/// normalisation of a chunk is one vectorisable loop into a local array,
/// whatever `store` does with it afterwards (an epilogue's activation).
template <class T, class X, class Store>
TCC_HOST_DEVICE inline void normalize_row(int64_t k0, int64_t n, const X *x, acc_t scale,
                          acc_t shift, Store &store) {
  constexpr int64_t kChunk = 256;
  T y[kChunk];
  for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
    const int64_t m = kChunk < n - j0 ? kChunk : n - j0;
    for (int64_t j = 0; j < m; ++j)
      y[j] = affine(widened<T>(x[k0 + j0 + j]), scale, shift);
    for (int64_t j = 0; j < m; ++j)
      store(k0 + j0 + j, y[j]);
  }
}

} // namespace detail

struct BatchNormShape {
  int64_t n, c;
  int64_t hw = 1;    ///< spatial size (h*w); 1 for [n, C]
  int64_t ghost = 0; ///< ghost batch size G in samples; 0 (or n): whole batch
  bool strided = false; ///< group g is samples g, g + n/G, ... (else g*G, g*G + 1, ...)
  /// Consecutive rows of one sample: 1, or h*w for an NHWC tensor seen as
  /// [n*h*w, C] (hw 1; ghost counts rows then), whose strided groups still
  /// take whole samples.
  int64_t rows_per_sample = 1;
  TCC_HOST_DEVICE int64_t group_size() const { return ghost <= 0 || ghost >= n ? n : ghost; }
  TCC_HOST_DEVICE int64_t num_groups() const { return n / group_size(); }
  /// The group of sample (row) i.
  TCC_HOST_DEVICE int64_t group_of(int64_t i) const {
    return strided ? i / rows_per_sample % num_groups() : i / group_size();
  }
  /// The m-th sample (row) of group g, m < group_size().
  TCC_HOST_DEVICE int64_t member(int64_t g, int64_t m) const {
    if (!strided)
      return g * group_size() + m;
    const int64_t sample = m / rows_per_sample;
    return (g + sample * num_groups()) * rows_per_sample + (m - sample * rows_per_sample);
  }
};

/// Two sums taken in one pass (a backward's two; a forward's one, twice).
struct Sums {
  acc_t first = 0, second = 0;
};

/// How the cpu kernels sum a channel's group of `rows` samples of `hw`
/// elements: in order, on the calling thread (they run channels in
/// parallel). The cuda target's device reduction (cuda::BlockSums,
/// runtime/cuda/device/Launch.cuh) has the same interface: the per-channel
/// functions below are the one definition of the math for both targets;
/// only the order of the sums differs.
struct SequentialSums {
  int64_t hw;
  /// The sums of term(m, j) over m < rows, j < hw.
  template <class Term> TCC_HOST_DEVICE Sums over(int64_t rows, Term term) const {
    Sums s;
    for (int64_t m = 0; m < rows; ++m)
      for (int64_t j = 0; j < hw; ++j) {
        const Sums t = term(m, j);
        s.first += t.first;
        s.second += t.second;
      }
    return s;
  }
  /// f(m, j) for every m < rows, j < hw.
  template <class F> TCC_HOST_DEVICE void each(int64_t rows, F f) const {
    for (int64_t m = 0; m < rows; ++m)
      for (int64_t j = 0; j < hw; ++j)
        f(m, j);
  }
  /// Whether this thread writes a channel's results (a block has one).
  TCC_HOST_DEVICE bool leader() const { return true; }
};

/// The mean of a statistics row (a group's G * hw elements of a channel)
/// from its sum.
TCC_HOST_DEVICE inline acc_t batch_norm_mean(const BatchNormShape &s, acc_t sum) {
  return divide(sum, acc_t(s.group_size() * s.hw));
}

/// Channel c's saved_mean and saved_invstd of each group, and its running
/// statistics when given, from each group's sums: groupSums(g) is
/// Sums{sum x, sum (x - mean)^2} around batch_norm_mean(sum x), called once
/// per group in order. Only the `leader` writes.
template <class T, class GroupSums>
TCC_HOST_DEVICE void batch_norm_store_statistics(const BatchNormShape &s, double eps,
                                                 double momentum, T *saved_mean,
                                                 T *saved_invstd, T *running_mean,
                                                 T *running_var, int64_t c,
                                                 GroupSums &&groupSums, bool leader) {
  const int64_t groups = s.num_groups(), C = s.c, cnt = s.group_size() * s.hw;
  const acc_t unbias = cnt > 1 ? divide(acc_t(cnt), acc_t(cnt - 1)) : acc_t(1);
  acc_t meanSum = 0, varSum = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const Sums sums = groupSums(g);
    const acc_t mean = batch_norm_mean(s, sums.first);
    const acc_t var = divide(sums.second, acc_t(cnt));
    if (leader) {
      saved_mean[g * C + c] = T(mean);
      saved_invstd[g * C + c] = T(divide(1.0, std::sqrt(var + eps)));
    }
    meanSum += mean;
    varSum += var * unbias;
  }
  if (!leader)
    return;
  if (running_mean)
    running_mean[c] = T((1.0 - momentum) * acc_t(running_mean[c]) +
                        momentum * divide(meanSum, acc_t(groups)));
  if (running_var)
    running_var[c] = T((1.0 - momentum) * acc_t(running_var[c]) +
                       momentum * divide(varSum, acc_t(groups)));
}

/// The statistics of channel c of a training forward, each sum over a
/// group's G * hw elements taken by `sums` (SequentialSums): the mean, then
/// the squared deviations from it (two passes, as PyTorch's).
template <class T, class X, class Reducer>
TCC_HOST_DEVICE void batch_norm_train_statistics(const BatchNormShape &s, const X *x, double eps,
                                                 double momentum, T *saved_mean,
                                                 T *saved_invstd, T *running_mean,
                                                 T *running_var, int64_t c,
                                                 const Reducer &sums) {
  const int64_t G = s.group_size(), C = s.c, hw = s.hw;
  batch_norm_store_statistics(
      s, eps, momentum, saved_mean, saved_invstd, running_mean, running_var, c,
      [&](int64_t g) {
        auto at = [&](int64_t m, int64_t j) { return x[(s.member(g, m) * C + c) * hw + j]; };
        const acc_t sum =
            sums.over(G, [&](int64_t m, int64_t j) { return Sums{acc_t(at(m, j)), 0}; }).first;
        const acc_t mean = batch_norm_mean(s, sum);
        const acc_t sq = sums.over(G, [&](int64_t m, int64_t j) {
                               const acc_t d = acc_t(at(m, j)) - mean;
                               return Sums{d * d, 0};
                             }).first;
        return Sums{sum, sq};
      },
      sums.leader());
}

/// Element k (the flat index into [n, C, hw]) of x normalised with the
/// saved statistics of its group, as a training forward stores it.
template <class T, class X>
TCC_HOST_DEVICE inline T batch_norm_normalized(const BatchNormShape &s, const X *x,
                                               const T *weight, const T *bias,
                                               const T *saved_mean, const T *saved_invstd,
                                               int64_t k) {
  const int64_t row = k / s.hw, c = row % s.c, gc = s.group_of(row / s.c) * s.c + c;
  const detail::NormAffine a =
      detail::norm_affine(saved_mean[gc], saved_invstd[gc], weight, bias, c);
  return detail::affine(widened<T>(x[k]), a.scale, a.shift);
}

/// Training forward. Hands each normalised element to `store(k, y_k)` (k
/// the flat index into [n, C, hw]; a fused epilogue, or a store into y);
/// writes saved_mean and saved_invstd [num_groups, C]; updates
/// running_mean / running_var [C] in place when they are not nullptr.
/// weight / bias may be nullptr. x may be stored in 16 bits (X = half::F16
/// or BF16: the group reads the stored tensor, kernels::widened).
template <class T, class X, class Store>
void batch_norm_forward_train_with(const BatchNormShape &s, const X *x,
                                   const T *weight, const T *bias, double eps,
                                   double momentum, Store store, T *saved_mean,
                                   T *saved_invstd, T *running_mean,
                                   T *running_var) {
  const int64_t C = s.c, hw = s.hw;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < C; ++c) {
    batch_norm_train_statistics(s, x, eps, momentum, saved_mean, saved_invstd, running_mean,
                                running_var, c, SequentialSums{hw});
    // Normalised with the statistics as saved, as the backward and a
    // recompute (batch_norm_apply) see them.
    for (int64_t i = 0; i < s.n; ++i) {
      const int64_t gc = s.group_of(i) * C + c;
      const detail::NormAffine a =
          detail::norm_affine(saved_mean[gc], saved_invstd[gc], weight, bias, c);
      detail::normalize_row<T>((i * C + c) * hw, hw, x, a.scale, a.shift, store);
    }
  }
}

/// Training forward, writing y [n, C, hw].
template <class T>
void batch_norm_forward_train(const BatchNormShape &s, const T *x,
                              const T *weight, const T *bias, double eps,
                              double momentum, T *y, T *saved_mean,
                              T *saved_invstd, T *running_mean,
                              T *running_var) {
  batch_norm_forward_train_with(
      s, x, weight, bias, eps, momentum, [y](int64_t k, T v) { y[k] = v; },
      saved_mean, saved_invstd, running_mean, running_var);
}

/// The normalised x of a training forward, again, from the statistics it
/// saved: each element handed to `store(k, y_k)`, bit-identical to what
/// batch_norm_forward_train_with handed over (tcc.batch_norm_apply).
template <class T, class X, class Store>
void batch_norm_apply_with(const BatchNormShape &s, const X *x, const T *weight,
                           const T *bias, const T *saved_mean,
                           const T *saved_invstd, Store store) {
  const int64_t C = s.c, hw = s.hw;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t i = 0; i < s.n; ++i) {
    for (int64_t c = 0; c < C; ++c) {
      const int64_t gc = s.group_of(i) * C + c;
      const detail::NormAffine a =
          detail::norm_affine(saved_mean[gc], saved_invstd[gc], weight, bias, c);
      detail::normalize_row<T>((i * C + c) * hw, hw, x, a.scale, a.shift, store);
    }
  }
}

/// batch_norm_apply_with, writing y [n, C, hw].
template <class T>
void batch_norm_apply(const BatchNormShape &s, const T *x, const T *weight,
                      const T *bias, const T *saved_mean, const T *saved_invstd,
                      T *y) {
  batch_norm_apply_with(s, x, weight, bias, saved_mean, saved_invstd,
                        [y](int64_t k, T v) { y[k] = v; });
}

/// One element of batch_norm_apply: x at channel c of the statistics row
/// `mean`, `invstd` (a backward prologue recomputing it where it reads it).
template <class T>
TCC_HOST_DEVICE inline T batch_norm_apply_at(T x, T mean, T invstd, const T *weight,
                             const T *bias, int64_t c) {
  const detail::NormAffine a = detail::norm_affine(mean, invstd, weight, bias, c);
  return detail::affine(x, a.scale, a.shift);
}

/// The affine map of channel c of an inference forward.
template <class T>
TCC_HOST_DEVICE inline detail::NormAffine inference_affine(const T *weight, const T *bias,
                                                           const T *running_mean,
                                                           const T *running_var, double eps,
                                                           int64_t c) {
  const acc_t invstd = divide(1.0, std::sqrt(acc_t(running_var[c]) + eps));
  const acc_t scale = invstd * (weight ? acc_t(weight[c]) : 1.0);
  return {scale, (bias ? acc_t(bias[c]) : 0.0) - acc_t(running_mean[c]) * scale};
}

/// Inference forward with the running statistics:
/// y = (x - running_mean) / sqrt(running_var + eps) * weight + bias, each
/// element handed to `store(k, y_k)`. s.ghost is ignored. weight / bias may
/// be nullptr.
template <class T, class X, class Store>
void batch_norm_forward_inference_with(const BatchNormShape &s, const X *x,
                                       const T *weight, const T *bias,
                                       const T *running_mean,
                                       const T *running_var, double eps,
                                       Store store) {
  const int64_t C = s.c, hw = s.hw;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t i = 0; i < s.n; ++i) {
    for (int64_t c = 0; c < C; ++c) {
      const detail::NormAffine a =
          inference_affine(weight, bias, running_mean, running_var, eps, c);
      detail::normalize_row<T>((i * C + c) * hw, hw, x, a.scale, a.shift, store);
    }
  }
}

/// Inference forward, writing y [n, C, hw].
template <class T>
void batch_norm_forward_inference(const BatchNormShape &s, const T *x,
                                  const T *weight, const T *bias,
                                  const T *running_mean, const T *running_var,
                                  double eps, T *y) {
  batch_norm_forward_inference_with(s, x, weight, bias, running_mean, running_var,
                                    eps, [y](int64_t k, T v) { y[k] = v; });
}

// Training backward, with the batch statistics as functions of x. Per group
// and channel, xhat = (x - mean) * invstd and
//   dx      = weight * invstd * (dy - mean(dy) - xhat * mean(dy * xhat))
//   dweight = sum over all groups of sum(dy * xhat)
//   dbias   = sum over all groups of sum(dy)
// (means over the group's cnt elements). Any of dx / dweight / dbias may be
// nullptr (not computed); weight may be nullptr (1). dy is read through
// `dyAt(k, gc)` (k the flat index into [n, C, hw], gc = g * C + c the row
// of the statistics), where a fused prologue computes it, so dy needs no
// memory of its own: the cpu kernel keeps it in dx between its two passes,
// or, where dx is stored in 16 bits (DX: a fused narrowing cast), computes
// it again for dx; the cuda kernel always computes it twice (runtime/cuda/
// device/Norm.cuh: two reads of 16-bit inputs cost less than an f32 dy
// written and read back).

/// The factors of dx in a group: k1 = mean(dy), k2 = mean(dy * xhat), from
/// the group's Sums{sum dy, sum dy * (x - mean)}.
struct NormGradFactors {
  acc_t k1, k2;
};
TCC_HOST_DEVICE inline NormGradFactors batch_norm_grad_factors(const BatchNormShape &s,
                                                               const Sums &sums,
                                                               acc_t invstd) {
  const acc_t cnt = acc_t(s.group_size() * s.hw);
  return {divide(sums.first, cnt), divide(sums.second * invstd, cnt)};
}

/// One element of dx from its dy and x.
template <class T>
TCC_HOST_DEVICE inline T batch_norm_dx(T dy, acc_t x, acc_t w, acc_t mean, acc_t invstd,
                                       const NormGradFactors &f) {
  const acc_t xhat = (x - mean) * invstd;
  return T(w * invstd * (acc_t(dy) - f.k1 - xhat * f.k2));
}

/// Channel c's dweight and dbias (either may be null) from each group's
/// sums: groupSums(g) is Sums{sum dy, sum dy * (x - mean)}, called once per
/// group in order. Only the `leader` writes.
template <class T, class GroupSums>
TCC_HOST_DEVICE void batch_norm_param_grads(const BatchNormShape &s, const T *saved_invstd,
                                            T *dweight, T *dbias, int64_t c,
                                            GroupSums &&groupSums, bool leader) {
  acc_t dwSum = 0, dbSum = 0;
  for (int64_t g = 0; g < s.num_groups(); ++g) {
    const Sums sums = groupSums(g);
    dwSum += sums.second * acc_t(saved_invstd[g * s.c + c]);
    dbSum += sums.first;
  }
  if (!leader)
    return;
  if (dweight)
    dweight[c] = T(dwSum);
  if (dbias)
    dbias[c] = T(dbSum);
}

/// Channel c of batch_norm_backward_with.
template <class T, class X, class DyAt, class DX, class Reducer>
TCC_HOST_DEVICE void batch_norm_backward_channel(const BatchNormShape &s, DyAt &dyAt, const X *x,
                                                 const T *weight, const T *saved_mean,
                                                 const T *saved_invstd, DX *dx, T *dweight,
                                                 T *dbias, int64_t c, const Reducer &sums) {
  const int64_t G = s.group_size(), C = s.c, hw = s.hw;
  const acc_t w = weight ? acc_t(weight[c]) : 1.0;
  // An f32 dx holds dy between the two passes (dy computed once); a
  // narrowed one cannot, and dy is computed again.
  constexpr bool kKeepDy = std::is_same_v<DX, T>;
  batch_norm_param_grads(
      s, saved_invstd, dweight, dbias, c,
      [&](int64_t g) {
        const int64_t gc = g * C + c;
        const acc_t mean = saved_mean[gc];
        const acc_t invstd = saved_invstd[gc];
        auto at = [&](int64_t m, int64_t j) { return (s.member(g, m) * C + c) * hw + j; };
        const Sums both = sums.over(G, [&](int64_t m, int64_t j) {
          const int64_t k = at(m, j);
          const T dy = dyAt(k, gc);
          if constexpr (kKeepDy) {
            if (dx)
              dx[k] = dy;
          }
          return Sums{acc_t(dy), acc_t(dy) * (acc_t(x[k]) - mean)};
        });
        if (dx) {
          const NormGradFactors f = batch_norm_grad_factors(s, both, invstd);
          sums.each(G, [&](int64_t m, int64_t j) {
            const int64_t k = at(m, j);
            T dy;
            if constexpr (kKeepDy)
              dy = dx[k];
            else
              dy = dyAt(k, gc);
            dx[k] = DX(batch_norm_dx(dy, acc_t(x[k]), w, mean, invstd, f));
          });
        }
        return both;
      },
      sums.leader());
}

template <class T, class DyAt, class X, class DX>
void batch_norm_backward_with(const BatchNormShape &s, DyAt dyAt, const X *x,
                              const T *weight, const T *saved_mean,
                              const T *saved_invstd, DX *dx, T *dweight,
                              T *dbias) {
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < s.c; ++c)
    batch_norm_backward_channel(s, dyAt, x, weight, saved_mean, saved_invstd, dx, dweight,
                                dbias, c, SequentialSums{s.hw});
}

/// Training backward, reading dy [n, C, hw].
template <class T>
void batch_norm_backward(const BatchNormShape &s, const T *dy, const T *x,
                         const T *weight, const T *saved_mean,
                         const T *saved_invstd, T *dx, T *dweight, T *dbias) {
  batch_norm_backward_with(s, [dy](int64_t k, int64_t) { return dy[k]; }, x, weight,
                           saved_mean, saved_invstd, dx, dweight, dbias);
}

/// Row r of the layer norm forward over [outer, inner]:
/// y = (x - mean) * invstd * weight + bias, invstd = 1/sqrt(var_biased + eps),
/// each sum over the row taken by `sums` (SequentialSums{inner} on the cpu,
/// a block's BlockSums on the cuda target); saved_mean / saved_invstd [outer].
/// weight / bias may be nullptr. x is read through xAt(k) (k = r * inner + j:
/// a load, or a fused prologue computing it: a residual add), three times
/// per element; each normalised element goes to store(k, x_k, y_k) (a
/// store, or a fused epilogue, which also stores the prologue's values that
/// others read).
template <class T, class XAt, class Store, class Reducer>
TCC_HOST_DEVICE void layer_norm_forward_row_with(int64_t inner, const XAt &xAt, const T *weight,
                                                 const T *bias, double eps, const Store &store,
                                                 T *saved_mean, T *saved_invstd, int64_t r,
                                                 const Reducer &sums) {
  const int64_t base = r * inner;
  const acc_t mean = divide(
      sums.over(1, [&](int64_t, int64_t j) { return Sums{acc_t(xAt(base + j)), 0}; }).first,
      acc_t(inner));
  const acc_t sq = sums.over(1, [&](int64_t, int64_t j) {
                         const acc_t d = acc_t(xAt(base + j)) - mean;
                         return Sums{d * d, 0};
                       }).first;
  const acc_t invstd = divide(1.0, std::sqrt(divide(sq, acc_t(inner)) + eps));
  if (sums.leader()) {
    saved_mean[r] = T(mean);
    saved_invstd[r] = T(invstd);
  }
  sums.each(1, [&](int64_t, int64_t j) {
    const T x = xAt(base + j);
    acc_t v = (acc_t(x) - mean) * invstd;
    if (weight)
      v *= acc_t(weight[j]);
    if (bias)
      v += acc_t(bias[j]);
    store(base + j, x, T(v));
  });
}

/// Row r of the layer norm forward over x [outer, inner], into y.
template <class T, class Reducer>
TCC_HOST_DEVICE void layer_norm_forward_row(int64_t inner, const T *x, const T *weight,
                                            const T *bias, double eps, T *y, T *saved_mean,
                                            T *saved_invstd, int64_t r, const Reducer &sums) {
  layer_norm_forward_row_with(
      inner, [x](int64_t k) { return x[k]; }, weight, bias, eps,
      [y](int64_t k, T, T v) { y[k] = v; }, saved_mean, saved_invstd, r, sums);
}

/// Layer norm forward over the rows, x read through xAt and y handed to
/// store (layer_norm_forward_row_with).
template <class T, class XAt, class Store>
void layer_norm_forward_with(int64_t outer, int64_t inner, XAt xAt, const T *weight,
                             const T *bias, double eps, Store store, T *saved_mean,
                             T *saved_invstd) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < outer; ++r)
    layer_norm_forward_row_with(inner, xAt, weight, bias, eps, store, saved_mean,
                                saved_invstd, r, SequentialSums{inner});
}

/// Layer norm forward over the rows of x [outer, inner].
template <class T>
void layer_norm_forward(int64_t outer, int64_t inner, const T *x,
                        const T *weight, const T *bias, double eps, T *y,
                        T *saved_mean, T *saved_invstd) {
  layer_norm_forward_with(
      outer, inner, [x](int64_t k) { return x[k]; }, weight, bias, eps,
      [y](int64_t k, T, T v) { y[k] = v; }, saved_mean, saved_invstd);
}

/// Row r of the layer norm backward's dx, with xhat = (x - mean) * invstd
/// and g = dy * weight: dx = invstd * (g - mean(g) - xhat * mean(g * xhat)),
/// the two sums taken by `sums` in one pass. weight may be nullptr (1). dy
/// is read through dyAt(k) (a load, or a fused prologue computing it) once
/// per element: dx holds it between the two passes (each thread of a block
/// reads back what it wrote; calling dyAt twice made ptxas spill registers
/// for sm_90a where it loads 16-bit values).
template <class T, class DyAt, class Reducer>
TCC_HOST_DEVICE void layer_norm_backward_row_with(int64_t inner, const DyAt &dyAt, const T *x,
                                                  const T *weight, const T *saved_mean,
                                                  const T *saved_invstd, T *dx, int64_t r,
                                                  const Reducer &sums) {
  const int64_t base = r * inner;
  const T *xr = x + base;
  const acc_t mean = saved_mean[r], invstd = saved_invstd[r];
  T *dxr = dx + base;
  const Sums both = sums.over(1, [&](int64_t, int64_t j) {
    const T dy = dyAt(base + j);
    dxr[j] = dy;
    const acc_t g = acc_t(dy) * (weight ? acc_t(weight[j]) : 1.0);
    return Sums{g, g * (acc_t(xr[j]) - mean) * invstd};
  });
  const acc_t k1 = divide(both.first, acc_t(inner)), k2 = divide(both.second, acc_t(inner));
  sums.each(1, [&](int64_t, int64_t j) {
    const acc_t g = acc_t(dxr[j]) * (weight ? acc_t(weight[j]) : 1.0);
    const acc_t xhat = (acc_t(xr[j]) - mean) * invstd;
    dxr[j] = T(invstd * (g - k1 - xhat * k2));
  });
}

/// layer_norm_backward_row_with, reading dy [outer, inner].
template <class T, class Reducer>
TCC_HOST_DEVICE void layer_norm_backward_row(int64_t inner, const T *dy, const T *x,
                                             const T *weight, const T *saved_mean,
                                             const T *saved_invstd, T *dx, int64_t r,
                                             const Reducer &sums) {
  layer_norm_backward_row_with(inner, [dy](int64_t k) { return dy[k]; }, x, weight,
                               saved_mean, saved_invstd, dx, r, sums);
}

/// Column j of the layer norm's parameter gradients: dweight[j] = sum over
/// rows of dy * xhat, dbias[j] = sum of dy, rows in order (the cuda target's
/// thread per column; layer_norm_backward_with's blocked loop sums the same
/// terms in the same order). Either output may be nullptr. dy through
/// dyAt(k).
template <class T, class DyAt>
TCC_HOST_DEVICE void layer_norm_param_grads_at_with(int64_t outer, int64_t inner,
                                                    const DyAt &dyAt, const T *x,
                                                    const T *saved_mean, const T *saved_invstd,
                                                    T *dweight, T *dbias, int64_t j) {
  acc_t dw = 0, db = 0;
  for (int64_t r = 0; r < outer; ++r) {
    const acc_t mean = saved_mean[r], invstd = saved_invstd[r];
    const T dy = dyAt(r * inner + j);
    dw += acc_t(dy) * (acc_t(x[r * inner + j]) - mean) * invstd;
    db += dy;
  }
  if (dweight)
    dweight[j] = T(dw);
  if (dbias)
    dbias[j] = T(db);
}

/// layer_norm_param_grads_at_with, reading dy [outer, inner].
template <class T>
TCC_HOST_DEVICE void layer_norm_param_grads_at(int64_t outer, int64_t inner, const T *dy,
                                               const T *x, const T *saved_mean,
                                               const T *saved_invstd, T *dweight, T *dbias,
                                               int64_t j) {
  layer_norm_param_grads_at_with(outer, inner, [dy](int64_t k) { return dy[k]; }, x,
                                 saved_mean, saved_invstd, dweight, dbias, j);
}

/// Layer norm backward (layer_norm_backward_row_with per row; the parameter
/// gradients as layer_norm_param_grads_at_with, 64 columns at a time), dy
/// read through dyAt(k). Any of dx / dweight / dbias may be nullptr; weight
/// may be nullptr (1).
template <class T, class DyAt>
void layer_norm_backward_with(int64_t outer, int64_t inner, DyAt dyAt, const T *x,
                              const T *weight, const T *saved_mean, const T *saved_invstd,
                              T *dx, T *dweight, T *dbias) {
  if (dx) {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < outer; ++r)
      layer_norm_backward_row_with(inner, dyAt, x, weight, saved_mean, saved_invstd, dx, r,
                                   SequentialSums{inner});
  }
  if (dweight || dbias) {
    constexpr int64_t kCols = 64;
    const int64_t blocks = (inner + kCols - 1) / kCols;
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t j0 = b * kCols, cols = std::min(kCols, inner - j0);
      acc_t dw[kCols] = {}, db[kCols] = {};
      for (int64_t r = 0; r < outer; ++r) {
        const acc_t mean = saved_mean[r], invstd = saved_invstd[r];
        const T *xr = x + r * inner + j0;
        const int64_t k0 = r * inner + j0;
        for (int64_t j = 0; j < cols; ++j) {
          const T dy = dyAt(k0 + j);
          dw[j] += acc_t(dy) * (acc_t(xr[j]) - mean) * invstd;
          db[j] += dy;
        }
      }
      for (int64_t j = 0; j < cols; ++j) {
        if (dweight)
          dweight[j0 + j] = T(dw[j]);
        if (dbias)
          dbias[j0 + j] = T(db[j]);
      }
    }
  }
}

/// Layer norm backward, reading dy [outer, inner].
template <class T>
void layer_norm_backward(int64_t outer, int64_t inner, const T *dy, const T *x,
                         const T *weight, const T *saved_mean,
                         const T *saved_invstd, T *dx, T *dweight, T *dbias) {
  layer_norm_backward_with(outer, inner, [dy](int64_t k) { return dy[k]; }, x, weight,
                           saved_mean, saved_invstd, dx, dweight, dbias);
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_NORM_H
