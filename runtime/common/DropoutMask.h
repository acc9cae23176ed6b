//===- DropoutMask.h - Which elements dropout keeps ---------------*- C++ -*-===//
//
// Dropout with probability p keeps element `index` of stream `stream` when
// its Philox uniform is >= p (as a float), and scales kept elements by
// 1 / (1 - p). The step's seed is mixSeed(run seed, step), so every step
// draws a new mask and the backward recomputes the same one.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMMON_DROPOUTMASK_H
#define TCC_RUNTIME_COMMON_DROPOUTMASK_H

#include "runtime/common/HostDevice.h"
#include "runtime/common/Philox.h"

#include <cstdint>

namespace tcc::rt::dropout {

/// Whether 32 random bits `r` keep an element at drop probability `p`.
TCC_HOST_DEVICE inline bool keeps(uint32_t r, float p) {
  return philox::u32ToUniform(r) >= p;
}

/// Whether element `index` of (seed, stream) is kept at drop probability p.
TCC_HOST_DEVICE inline bool keep(double p, uint64_t seed, uint64_t stream,
                                 uint64_t index) {
  return keeps(philox::randomU32(seed, stream, index), float(p));
}

/// The factor of kept elements, 1 / (1 - p) (p < 1; p = 1 keeps nothing).
TCC_HOST_DEVICE inline double keptScale(double p) { return 1.0 / (1.0 - p); }

/// splitmix64 of the run's seed and the step: the step's dropout seed.
TCC_HOST_DEVICE inline int64_t mixSeed(int64_t seed, int64_t step) {
  uint64_t z = uint64_t(seed) ^ (uint64_t(step) * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return int64_t(z ^ (z >> 31));
}

} // namespace tcc::rt::dropout

#endif // TCC_RUNTIME_COMMON_DROPOUTMASK_H
