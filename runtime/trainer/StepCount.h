//===- StepCount.h - How many steps a run of some epochs takes ---*- C++ -*-===//
#ifndef TCC_RUNTIME_TRAINER_STEPCOUNT_H
#define TCC_RUNTIME_TRAINER_STEPCOUNT_H

#include <cstdint>

namespace tcc::rt {

/// ceil(epochs * stepsPerEpoch), where a product within 1e-9 (relative) of
/// an integer counts as that integer (0.3 * 10 is 3 steps, not 4).
int64_t totalStepsFor(double epochs, int64_t stepsPerEpoch);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_STEPCOUNT_H
