//===- Step.h - Scalar and bookkeeping kernels of a training step -*- C++ -*-//
//
// The learning-rate schedule, seeds, the reductions autodiff emits for
// biases, and the test-time-augmentation views. Semantics are those of
// docs/model-format.md and ir/TccTrainOps.td.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_STEP_H
#define TCC_RUNTIME_KERNELS_STEP_H

#include "runtime/common/DropoutMask.h"
#include "runtime/common/Schedule.h"
#include "runtime/kernels/Common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tcc::rt::kernels {

/// The schedule (runtime/common/Schedule.h) and the step's dropout seed
/// (runtime/common/DropoutMask.h), under the kernels' names.
using ::tcc::rt::ScheduleDesc;
inline double lr_factor(const ScheduleDesc &s, int64_t step, int64_t stepsPerEpoch,
                        int64_t totalSteps) {
  return lrFactor(s, step, stepsPerEpoch, totalSteps);
}
inline int64_t mix_seed(int64_t seed, int64_t step) { return dropout::mixSeed(seed, step); }

/// Sum of x over every dim except `keep`: y[j] = sum x[o, j, i] for x viewed
/// as [outer, mid, inner] (bias gradients).
template <class T>
void reduce_sum_keep(int64_t outer, int64_t mid, int64_t inner, const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < mid; ++j) {
    acc_t sum = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        sum += acc_t(x[(o * mid + j) * inner + i]);
    y[j] = T(sum);
  }
}

/// Any reduce_sum: `reduced[d]` says whether dim d is summed away.
template <class T>
void reduce_sum_dims(int rank, const int64_t *shape, const bool *reduced,
                     const T *x, T *y, int64_t outCount) {
  std::vector<acc_t> sum(outCount, 0.0);
  int64_t total = 1;
  for (int d = 0; d < rank; ++d)
    total *= shape[d];
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, out = 0, outStride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t coord = rest % shape[d];
      rest /= shape[d];
      if (!reduced[d]) {
        out += coord * outStride;
        outStride *= shape[d];
      }
    }
    sum[out] += acc_t(x[flat]);
  }
  for (int64_t i = 0; i < outCount; ++i)
    y[i] = T(sum[i]);
}

/// Images [n, c, h, w] translated by (dy, dx) with reflection at the border
/// (a TTA view): out[i][j] = in[reflect(i - dy)][reflect(j - dx)].
template <class T>
void shift_reflect(int64_t nc, int64_t h, int64_t w, int64_t dy, int64_t dx,
                   const T *x, T *y) {
  auto reflect = [](int64_t i, int64_t n) {
    if (i < 0)
      return -i;
    if (i >= n)
      return 2 * (n - 1) - i;
    return i;
  };
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < nc; ++p)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j)
        y[(p * h + i) * w + j] =
            x[(p * h + reflect(i - dy, h)) * w + reflect(j - dx, w)];
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_STEP_H
