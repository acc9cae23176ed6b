//===- TokenLoss.h - Cross entropy at every position ------------*- C++ -*-===//
//
// token_cross_entropy: torch.nn.functional.cross_entropy(logits [n, K],
// labels [n], ignore_index, label_smoothing, reduction) over the n = N * T
// positions of a batch of sequences. Positions whose label is ignore_index
// count nowhere; with m the others:
//   loss = sum_i loss_i (Sum)   or   sum_i loss_i / m (Mean; 0 when m = 0)
// with loss_i as cross_entropy's (Loss.h), summed in double in a fixed
// order. backward: zero at ignored rows, dloss * c * (softmax - target)
// elsewhere, c = 1/m (Mean) or 1 (Sum).
// count_correct_tokens: rows not ignored whose argmax is their label.
// A label outside [0, K) that is not ignore_index (the trainer's data check
// refuses one) counts as class 0, never read out of bounds.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_TOKENLOSS_H
#define TCC_RUNTIME_KERNELS_TOKENLOSS_H

#include "runtime/kernels/Loss.h"
#include "runtime/kernels/Metrics.h"

#include <cstdint>

namespace tcc::rt::kernels {

namespace detail {
TCC_HOST_DEVICE inline int64_t token_class(int64_t label, int64_t k) {
  return label >= 0 && label < k ? label : 0;
}
inline int64_t counted_tokens(int64_t n, const int64_t *labels, int64_t ignoreIndex) {
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i)
    m += labels[i] != ignoreIndex;
  return m;
}
} // namespace detail

template <class T>
void token_cross_entropy_forward(int64_t n, int64_t k, const T *logits, const int64_t *labels,
                                 int64_t ignoreIndex, double smoothing, Reduction reduction,
                                 T *loss) {
  const acc_t total = detail::deterministic_sum(n, [&](int64_t i) {
    return labels[i] == ignoreIndex
               ? acc_t(0)
               : detail::cross_entropy_row(logits + i * k, k,
                                           detail::token_class(labels[i], k), smoothing);
  });
  const int64_t m = detail::counted_tokens(n, labels, ignoreIndex);
  *loss = T(reduction == Reduction::Mean ? (m ? total / acc_t(m) : acc_t(0)) : total);
}

template <class T>
void token_cross_entropy_backward(int64_t n, int64_t k, const T *logits, const int64_t *labels,
                                  int64_t ignoreIndex, double smoothing, Reduction reduction,
                                  T dloss, T *dlogits) {
  const int64_t m = detail::counted_tokens(n, labels, ignoreIndex);
  const acc_t scale = acc_t(dloss) / (reduction == Reduction::Mean && m ? acc_t(m) : 1.0);
  const acc_t off = smoothing / acc_t(k);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const T *row = logits + i * k;
    T *drow = dlogits + i * k;
    if (labels[i] == ignoreIndex) {
      for (int64_t j = 0; j < k; ++j)
        drow[j] = T(0);
      continue;
    }
    const int64_t label = detail::token_class(labels[i], k);
    acc_t mx, lse;
    detail::row_logsumexp(row, k, mx, lse);
    for (int64_t j = 0; j < k; ++j) {
      acc_t g = std::exp(acc_t(row[j]) - mx - lse) - off;
      if (j == label)
        g -= 1.0 - smoothing;
      drow[j] = T(scale * g);
    }
  }
}

template <class T>
int64_t count_correct_tokens(int64_t n, int64_t k, const T *logits, const int64_t *labels,
                             int64_t ignoreIndex) {
  int64_t correct = 0;
#pragma omp parallel for reduction(+ : correct) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    correct += labels[i] != ignoreIndex && argmax_row(logits + i * k, k) == labels[i] ? 1 : 0;
  return correct;
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_TOKENLOSS_H
