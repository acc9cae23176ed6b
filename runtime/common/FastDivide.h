//===- FastDivide.h - Division by a divisor fixed in advance ----*- C++ -*-===//
//
// A GPU has no integer divider: n / d by a divisor known only at run time
// is a subroutine of some twenty instructions for 32 bits, several times
// that for 64, and a kernel that calls it keeps its live registers around
// the call (the batch norm kernels spilled them). An element's channel
// (k / hw % C) and statistics row in a batch norm are such divisions. With
// the divisor fixed before the launch, n / d is a multiply-high, an add
// and a shift (Granlund and Montgomery, "Division by invariant integers
// using multiplication", 1994, the round-up method; CUTLASS's FastDivmod):
// exact for every 0 <= n < 2^63 (so that the add cannot overflow) and
// every 1 <= d < 2^63.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMMON_FASTDIVIDE_H
#define TCC_RUNTIME_COMMON_FASTDIVIDE_H

#include "runtime/common/HostDevice.h"

#include <cstdint>

namespace tcc::rt {

struct FastDivide {
  uint64_t divisor = 1;
  uint64_t multiplier = 0; ///< floor(2^64 (2^shift - divisor) / divisor) + 1
  uint32_t shift = 0;      ///< ceil(log2(divisor))

  FastDivide() = default;
  /// For 1 <= d < 2^63; on the host (128-bit arithmetic).
  explicit FastDivide(uint64_t d) : divisor(d) {
    while ((uint64_t(1) << shift) < d)
      ++shift;
    using u128 = unsigned __int128;
    multiplier = uint64_t((u128(1) << 64) * ((u128(1) << shift) - d) / d + 1);
  }

  /// n / divisor, for 0 <= n < 2^63.
  TCC_HOST_DEVICE uint64_t div(uint64_t n) const {
#if defined(__CUDA_ARCH__)
    const uint64_t high = __umul64hi(n, multiplier);
#else
    const uint64_t high = uint64_t((static_cast<unsigned __int128>(n) * multiplier) >> 64);
#endif
    return (high + n) >> shift;
  }
  /// n % divisor, given q = div(n).
  TCC_HOST_DEVICE uint64_t rem(uint64_t n, uint64_t q) const { return n - q * divisor; }
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_COMMON_FASTDIVIDE_H
