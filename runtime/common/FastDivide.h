//===- FastDivide.h - Division by a divisor fixed in advance ----*- C++ -*-===//
//
// A GPU has no integer divider: n / d by a divisor known only at run time
// is a subroutine of some twenty instructions for 32 bits, several times
// that for 64. An element's channel (k / hw % C) and statistics row in a
// batch norm are such divisions, several per element. With the divisor
// fixed before the launch, n / d is a multiply-high, an add and a shift
// (Granlund and Montgomery, "Division by invariant integers using
// multiplication", 1994; CUTLASS's FastDivmod): exact for every
// 0 <= n < 2^31, which the callers check.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMMON_FASTDIVIDE_H
#define TCC_RUNTIME_COMMON_FASTDIVIDE_H

#include "runtime/common/HostDevice.h"

#include <cstdint>

namespace tcc::rt {

struct FastDivide {
  uint32_t divisor = 1;
  uint32_t multiplier = 0; ///< floor(2^32 (2^shift - divisor) / divisor) + 1
  uint32_t shift = 0;      ///< ceil(log2(divisor))

  FastDivide() = default;
  /// For 1 <= d < 2^31.
  TCC_HOST_DEVICE explicit FastDivide(uint32_t d) : divisor(d) {
    while ((uint64_t(1) << shift) < d)
      ++shift;
    multiplier = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }

  /// n / divisor, for 0 <= n < 2^31 (so that high + n does not overflow).
  TCC_HOST_DEVICE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t high = __umulhi(n, multiplier);
#else
    const uint32_t high = uint32_t((uint64_t(n) * multiplier) >> 32);
#endif
    return (high + n) >> shift;
  }
  /// n % divisor, given q = div(n).
  TCC_HOST_DEVICE uint32_t rem(uint32_t n, uint32_t q) const { return n - q * divisor; }
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_COMMON_FASTDIVIDE_H
