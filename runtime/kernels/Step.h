//===- Step.h - Scalar and bookkeeping kernels of a training step -*- C++ -*-//
//
// The learning-rate schedule, seeds, the reductions autodiff emits for
// biases, and the test-time-augmentation views. Semantics are those of
// docs/model-format.md and ir/TccTrainOps.td.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_STEP_H
#define TCC_RUNTIME_KERNELS_STEP_H

#include "runtime/kernels/Common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tcc::rt::kernels {

/// model.json's train.schedule, as the generated code spells it.
struct ScheduleDesc {
  enum Type { Constant, Step, LinearWarmup, OneCycle, Cosine, PiecewiseLinear };
  Type type = Constant;
  bool perEpoch = true;        ///< unit "epoch" (else "step")
  double stepSize = 1, gamma = 0.1;            ///< step
  double warmup = 0, minFactor = 0;            ///< linear_warmup, cosine
  double pctStart = 0.3, divFactor = 25, finalDivFactor = 1e4; ///< one_cycle
  bool annealCos = true;
  std::vector<double> pointT, pointFactor;     ///< piecewise_linear
};

/// factor(t) of the schedule; `step` counts optimizer steps taken before this
/// one. one_cycle follows torch.optim.lr_scheduler.OneCycleLR, which counts
/// steps whatever the unit.
inline double lr_factor(const ScheduleDesc &s, int64_t step, int64_t stepsPerEpoch,
                        int64_t totalSteps) {
  double perUnit = s.perEpoch ? double(std::max<int64_t>(1, stepsPerEpoch)) : 1.0;
  double t = double(step) / perUnit, total = double(totalSteps) / perUnit;
  const double pi = 3.14159265358979323846;
  switch (s.type) {
  case ScheduleDesc::Constant:
    return 1.0;
  case ScheduleDesc::Step:
    return std::pow(s.gamma, std::floor(t / s.stepSize));
  case ScheduleDesc::LinearWarmup:
    return std::min(1.0, t / s.warmup);
  case ScheduleDesc::Cosine: {
    if (t < s.warmup)
      return t / s.warmup;
    double span = std::max(total - s.warmup, 1e-12);
    double p = std::min(1.0, (t - s.warmup) / span);
    return s.minFactor + (1.0 - s.minFactor) * 0.5 * (1.0 + std::cos(pi * p));
  }
  case ScheduleDesc::OneCycle: {
    double initial = 1.0 / s.divFactor, last = initial / s.finalDivFactor;
    double end1 = s.pctStart * double(totalSteps) - 1, end2 = double(totalSteps) - 1;
    double x = double(step), start = 0, from = initial, to = 1.0;
    if (x > end1) {
      start = end1;
      from = 1.0;
      to = last;
      end1 = end2;
    }
    double pct = end1 > start ? std::min(1.0, (x - start) / (end1 - start)) : 1.0;
    if (s.annealCos)
      return to + (from - to) / 2.0 * (std::cos(pi * pct) + 1.0);
    return (to - from) * pct + from;
  }
  case ScheduleDesc::PiecewiseLinear: {
    const auto &ts = s.pointT, &fs = s.pointFactor;
    if (t >= ts.back())
      return fs.back();
    size_t i = 1;
    while (ts[i] <= t)
      ++i;
    double w = (t - ts[i - 1]) / (ts[i] - ts[i - 1]);
    return fs[i - 1] + w * (fs[i] - fs[i - 1]);
  }
  }
  return 1.0;
}

/// splitmix64: a per-step seed from the run's seed and the step.
inline int64_t mix_seed(int64_t seed, int64_t step) {
  uint64_t z = uint64_t(seed) ^ (uint64_t(step) * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return int64_t(z ^ (z >> 31));
}

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
