//===- Loss.h - cross entropy (label smoothing), MSE, one-hot ---*- C++ -*-===//
//
// cross_entropy: torch.nn.functional.cross_entropy(logits [n, K], labels [n]
// int64 in [0, K), label_smoothing = s, reduction = mean|sum), no class
// weights, no ignore_index. With logp = log_softmax(logits):
//   loss_i = (1 - s) * (-logp[i, y_i]) + s * mean_k(-logp[i, k])
//   loss   = sum_i loss_i  (Sum)   or   sum_i loss_i / n  (Mean)
// backward, for the upstream gradient dloss of the scalar loss:
//   dlogits[i, k] = dloss * c * (softmax[i, k] - (1-s)*[k == y_i] - s/K),
//   c = 1/n (Mean) or 1 (Sum).
// mse_loss: mean (or sum) over all n elements of (x - target)^2.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_LOSS_H
#define TCC_RUNTIME_KERNELS_LOSS_H

#include "runtime/kernels/Common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tcc::rt::kernels {

enum class Reduction { Mean, Sum };

namespace detail {
/// max and log(sum exp(x - max)) of one row.
template <class T>
TCC_HOST_DEVICE void row_logsumexp(const T *row, int64_t k, acc_t &mx, acc_t &lse) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < k; ++j)
    m = std::max(m, row[j]);
  acc_t sum = 0;
  for (int64_t j = 0; j < k; ++j)
    sum += std::exp(acc_t(row[j]) - acc_t(m));
  mx = m;
  lse = std::log(sum);
}

/// loss_i of the header comment, in double.
template <class T>
TCC_HOST_DEVICE acc_t cross_entropy_row(const T *row, int64_t k, int64_t label,
                        double smoothing) {
  acc_t mx, lse;
  row_logsumexp(row, k, mx, lse);
  const acc_t nll = mx + lse - acc_t(row[label]);
  if (smoothing == 0.0)
    return nll;
  acc_t sumNeg = 0; // sum_k -logp[k]
  for (int64_t j = 0; j < k; ++j)
    sumNeg += mx + lse - acc_t(row[j]);
  return (1.0 - smoothing) * nll + smoothing * sumNeg / acc_t(k);
}
} // namespace detail

/// *loss = the reduced cross entropy. per_sample [n] (optional, may be
/// nullptr) receives loss_i. With `valid` (may be nullptr: all rows), only
/// the first *valid rows count, and Mean averages over them (the evaluation
/// step's test loss; padded rows of a last partial batch are left out).
template <class T>
void cross_entropy_forward(int64_t n, int64_t k, const T *logits,
                           const int64_t *labels, double label_smoothing,
                           Reduction reduction, T *loss, T *per_sample,
                           const int64_t *valid = nullptr) {
  if (valid)
    n = std::max<int64_t>(0, std::min(n, *valid));
  const acc_t total = detail::deterministic_sum(n, [&](int64_t i) {
    const acc_t l = detail::cross_entropy_row(logits + i * k, k, labels[i],
                                              label_smoothing);
    if (per_sample)
      per_sample[i] = T(l);
    return l;
  });
  *loss = T(reduction == Reduction::Mean ? (n ? total / acc_t(n) : acc_t(0)) : total);
}

/// dlogits [n, K] for the upstream gradient `dloss` of the scalar loss.
template <class T>
void cross_entropy_backward(int64_t n, int64_t k, const T *logits,
                            const int64_t *labels, double label_smoothing,
                            Reduction reduction, T dloss, T *dlogits) {
  const acc_t scale =
      acc_t(dloss) / (reduction == Reduction::Mean ? acc_t(n) : 1.0);
  const acc_t off = label_smoothing / acc_t(k);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const T *row = logits + i * k;
    T *drow = dlogits + i * k;
    acc_t mx, lse;
    detail::row_logsumexp(row, k, mx, lse);
    for (int64_t j = 0; j < k; ++j) {
      acc_t g = std::exp(acc_t(row[j]) - mx - lse) - off;
      if (j == labels[i])
        g -= 1.0 - label_smoothing;
      drow[j] = T(scale * g);
    }
  }
}

/// *loss = mean (or sum) of (x - target)^2 over n elements. With `valid`
/// (may be nullptr: all rows), only the first *valid rows of `row` elements
/// each count, and Mean averages over their elements.
template <class T>
void mse_loss_forward(int64_t n, const T *x, const T *target,
                      Reduction reduction, T *loss, const int64_t *valid = nullptr,
                      int64_t row = 1) {
  if (valid)
    n = std::max<int64_t>(0, std::min(n / row, *valid)) * row;
  const acc_t total = detail::deterministic_sum(n, [&](int64_t i) {
    const acc_t d = acc_t(x[i]) - acc_t(target[i]);
    return d * d;
  });
  *loss = T(reduction == Reduction::Mean ? (n ? total / acc_t(n) : acc_t(0)) : total);
}

/// dx = dloss * 2 (x - target) (/ n for Mean).
template <class T>
void mse_loss_backward(int64_t n, const T *x, const T *target,
                       Reduction reduction, T dloss, T *dx) {
  const acc_t scale =
      2.0 * acc_t(dloss) / (reduction == Reduction::Mean ? acc_t(n) : 1.0);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    dx[i] = T(scale * (acc_t(x[i]) - acc_t(target[i])));
}

/// Element e of one_hot: y[i, j] = (j == labels[i]), e = i * K + j.
template <class T>
TCC_HOST_DEVICE T one_hot_at(int64_t k, const int64_t *labels, int64_t e) {
  return e % k == labels[e / k] ? T(1) : T(0);
}

/// y [n, K]: y[i, labels[i]] = 1, else 0 (labels outside [0, K) give a zero
/// row).
template <class T>
void one_hot(int64_t n, int64_t k, const int64_t *labels, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < n * k; ++e)
    y[e] = one_hot_at<T>(k, labels, e);
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_LOSS_H
