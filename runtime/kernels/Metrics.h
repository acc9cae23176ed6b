//===- Metrics.h - Accuracy and loss sums for epoch metrics -----*- C++ -*-===//
//
// Only the first `valid` rows of a batch count (a last partial batch is padded
// to the static batch size). The argmax of a row is its FIRST maximal element
// (a NaN counts as the maximum, as torch.argmax).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_METRICS_H
#define TCC_RUNTIME_KERNELS_METRICS_H

#include "runtime/kernels/Common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tcc::rt::kernels {

/// Index of the first maximal element of row[0..k).
template <class T> TCC_HOST_DEVICE int64_t argmax_row(const T *row, int64_t k) {
  int64_t best = 0;
  for (int64_t j = 1; j < k; ++j) {
    if (std::isnan(row[best]))
      break;
    if (row[j] > row[best] || std::isnan(row[j]))
      best = j;
  }
  return best;
}

/// Number of rows i < min(n, valid) with argmax(logits[i]) == labels[i].
template <class T>
int64_t count_correct(int64_t n, int64_t k, const T *logits,
                      const int64_t *labels, int64_t valid) {
  const int64_t rows = std::min(n, valid);
  int64_t correct = 0;
#pragma omp parallel for reduction(+ : correct) schedule(static)
  for (int64_t i = 0; i < rows; ++i)
    correct += argmax_row(logits + i * k, k) == labels[i] ? 1 : 0;
  return correct;
}

/// *count += count_correct(...).
template <class T>
void count_correct_accumulate(int64_t n, int64_t k, const T *logits,
                              const int64_t *labels, int64_t valid,
                              int64_t *count) {
  *count += count_correct(n, k, logits, labels, valid);
}

/// Sum of per_sample[i] for i < min(n, valid), in double.
template <class T>
double loss_sum(int64_t n, const T *per_sample, int64_t valid) {
  return detail::deterministic_sum(
      std::min(n, valid), [&](int64_t i) { return acc_t(per_sample[i]); });
}

/// *sum += loss_sum(...).
template <class T>
void loss_sum_accumulate(int64_t n, const T *per_sample, int64_t valid,
                         double *sum) {
  *sum += loss_sum(n, per_sample, valid);
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_METRICS_H
