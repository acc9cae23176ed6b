//===- StepCount.cpp - How many steps a run of some epochs takes ----------===//

#include "runtime/trainer/StepCount.h"

#include <algorithm>
#include <cmath>

namespace tcc::rt {

int64_t totalStepsFor(double epochs, int64_t stepsPerEpoch) {
  double x = epochs * static_cast<double>(stepsPerEpoch);
  if (!(x > 0))
    return 0;
  if (x >= 9.2e18)
    return INT64_MAX;
  double nearest = std::nearbyint(x);
  if (std::abs(x - nearest) <= 1e-9 * std::max(1.0, x))
    return static_cast<int64_t>(nearest);
  return static_cast<int64_t>(std::ceil(x));
}

} // namespace tcc::rt
