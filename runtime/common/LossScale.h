//===- LossScale.h - fp16 dynamic loss scaling, host and device --*- C++ -*-===//
//
// The scalar steps of dynamic loss scaling (docs/passes.md, "fp16-mixed"),
// as torch.amp.GradScaler computes them: the inverse scale, whether a
// gradient holds an inf or a NaN, and the scale's update. Written once for
// the cpu kernels and the cuda step's single-thread launches.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMMON_LOSSSCALE_H
#define TCC_RUNTIME_COMMON_LOSSSCALE_H

#include "runtime/common/Float16.h"
#include "runtime/common/HostDevice.h"

#include <cstdint>

namespace tcc::rt::loss_scale {

/// 1 / scale, in double, rounded to f32 once (GradScaler's inverse scale).
TCC_HOST_DEVICE inline float inverse(float scale) { return float(1.0 / double(scale)); }

/// Whether `x` is neither an infinity nor a NaN (from its bits: the same
/// answer under any floating-point mode).
TCC_HOST_DEVICE inline bool isFinite(float x) {
  return (half::floatBits(x) & 0x7f800000u) != 0x7f800000u;
}

/// GradScaler.update (torch._amp_update_scale_): back off on an inf or NaN
/// gradient, grow after `interval` clean steps in a row (unless the grown
/// scale overflows f32). `scale` and `tracker` are updated in place.
TCC_HOST_DEVICE inline void update(double growth, double backoff, int64_t interval,
                                   bool foundInf, float &scale, int64_t &tracker) {
  if (foundInf) {
    scale = float(double(scale) * backoff);
    tracker = 0;
  } else if (++tracker == interval) {
    const float grown = float(double(scale) * growth);
    if (isFinite(grown))
      scale = grown;
    tracker = 0;
  }
}

} // namespace tcc::rt::loss_scale

#endif // TCC_RUNTIME_COMMON_LOSSSCALE_H
