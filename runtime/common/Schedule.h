//===- Schedule.h - The learning-rate schedule's factor -----------*- C++ -*-===//
//
// factor(t) of model.json's train.schedule (docs/model-format.md), computed
// in double from the step counter, written once for the cpu kernels and the
// device. `ScheduleDesc` is a plain aggregate (no heap) so a generated
// step can hold it as a constant on either side.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMMON_SCHEDULE_H
#define TCC_RUNTIME_COMMON_SCHEDULE_H

#include "runtime/common/HostDevice.h"

#include <cmath>
#include <cstdint>

namespace tcc::rt {

/// The most points a piecewise-linear schedule may have (the frontend and
/// the tcc.lr_schedule verifier reject more).
constexpr int kMaxSchedulePoints = 64;

/// model.json's train.schedule, as the generated code spells it.
struct ScheduleDesc {
  enum Type { Constant, Step, LinearWarmup, OneCycle, Cosine, PiecewiseLinear };
  Type type = Constant;
  bool perEpoch = true;                                       ///< unit "epoch" (else "step")
  int countFrom = 0; ///< count_from: t's step count at the first optimizer step (0 or 1)
  double stepSize = 1, gamma = 0.1;                           ///< step
  double warmup = 0, minFactor = 0;                           ///< linear_warmup, cosine
  double pctStart = 0.3, divFactor = 25, finalDivFactor = 1e4; ///< one_cycle
  bool annealCos = true;
  int pointCount = 0; ///< piecewise_linear: (pointT[i], pointFactor[i]), i < pointCount
  double pointT[kMaxSchedulePoints] = {}, pointFactor[kMaxSchedulePoints] = {};
};

/// factor(t) of the schedule; `step` counts optimizer steps taken before this
/// one, and t counts from `countFrom` (PyTorch's schedulers from 0,
/// cifar10-fast's from 1). one_cycle follows
/// torch.optim.lr_scheduler.OneCycleLR, which counts steps whatever the unit.
TCC_HOST_DEVICE inline double lrFactor(const ScheduleDesc &s, int64_t step,
                                       int64_t stepsPerEpoch, int64_t totalSteps) {
  step += s.countFrom;
  const double perUnit = s.perEpoch ? double(stepsPerEpoch > 1 ? stepsPerEpoch : 1) : 1.0;
  const double t = double(step) / perUnit, total = double(totalSteps) / perUnit;
  const double pi = 3.14159265358979323846;
  switch (s.type) {
  case ScheduleDesc::Constant:
    return 1.0;
  case ScheduleDesc::Step:
    return pow(s.gamma, floor(t / s.stepSize));
  case ScheduleDesc::LinearWarmup:
    return t / s.warmup < 1.0 ? t / s.warmup : 1.0;
  case ScheduleDesc::Cosine: {
    if (t < s.warmup)
      return t / s.warmup;
    const double span = total - s.warmup < 1e-12 ? 1e-12 : total - s.warmup;
    const double p = (t - s.warmup) / span < 1.0 ? (t - s.warmup) / span : 1.0;
    return s.minFactor + (1.0 - s.minFactor) * 0.5 * (1.0 + cos(pi * p));
  }
  case ScheduleDesc::OneCycle: {
    const double initial = 1.0 / s.divFactor, last = initial / s.finalDivFactor;
    double end1 = s.pctStart * double(totalSteps) - 1;
    const double end2 = double(totalSteps) - 1;
    double x = double(step), start = 0, from = initial, to = 1.0;
    if (x > end1) {
      start = end1;
      from = 1.0;
      to = last;
      end1 = end2;
    }
    double pct = 1.0;
    if (end1 > start)
      pct = (x - start) / (end1 - start) < 1.0 ? (x - start) / (end1 - start) : 1.0;
    if (s.annealCos)
      return to + (from - to) / 2.0 * (cos(pi * pct) + 1.0);
    return (to - from) * pct + from;
  }
  case ScheduleDesc::PiecewiseLinear: {
    const double *ts = s.pointT, *fs = s.pointFactor;
    const int last = s.pointCount - 1;
    if (t >= ts[last])
      return fs[last];
    int i = 1;
    while (ts[i] <= t)
      ++i;
    const double w = (t - ts[i - 1]) / (ts[i] - ts[i - 1]);
    return fs[i - 1] + w * (fs[i] - fs[i - 1]);
  }
  }
  return 1.0;
}

} // namespace tcc::rt

#endif // TCC_RUNTIME_COMMON_SCHEDULE_H
