//===- Float16.h - bfloat16 and IEEE binary16 conversions ---------*- C++ -*-===//
//
// float <-> 16-bit conversions, round to nearest even, written once for the
// kernels, the trainer (checkpoints, initial values) and the device. NaNs
// stay quiet NaNs with their sign; values past the 16-bit range round to
// infinity; binary16 subnormals are exact.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMMON_FLOAT16_H
#define TCC_RUNTIME_COMMON_FLOAT16_H

#include "runtime/common/HostDevice.h"

#include <cstdint>

namespace tcc::rt::half {

TCC_HOST_DEVICE inline uint32_t floatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u; // __builtin_memcpy: no <cstring> in a common header
  __builtin_memcpy(&u, &f, 4);
  return u;
#endif
}

TCC_HOST_DEVICE inline float bitsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
#endif
}

/// float -> bfloat16 bits, round to nearest even.
TCC_HOST_DEVICE inline uint16_t floatToBf16(float f) {
  const uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep sign, set the quiet bit
    return uint16_t((u >> 16) | 0x0040u);
  const uint32_t bias = 0x7fffu + ((u >> 16) & 1u);
  return uint16_t((u + bias) >> 16);
}

/// bfloat16 bits -> float (exact).
TCC_HOST_DEVICE inline float bf16ToFloat(uint16_t h) {
  return bitsFloat(uint32_t(h) << 16);
}

/// float -> IEEE binary16 bits, round to nearest even.
TCC_HOST_DEVICE inline uint16_t floatToF16(float f) {
  uint32_t x = floatBits(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) // NaN: quiet, keep the top payload bits
    return uint16_t(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
  if (x >= 0x477ff000u) // >= 65520 (incl. inf): rounds to inf
    return uint16_t(sign | 0x7c00u);
  if (x >= 0x38800000u) { // normal half: rebias exponent by -112, round
    x += 0xc8000fffu + ((x >> 13) & 1u);
    return uint16_t(sign | (x >> 13));
  }
  if (x <= 0x33000000u) // <= 2^-25: rounds to (signed) zero
    return sign;
  // Subnormal half: value = m * 2^(e-150), half unit 2^-24.
  const uint32_t e = x >> 23, m = (x & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - e; // in [14, 24]
  uint32_t hm = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1), halfUnit = 1u << (shift - 1);
  if (rem > halfUnit || (rem == halfUnit && (hm & 1u)))
    ++hm; // may carry into the smallest normal, which is the right encoding
  return uint16_t(sign | hm);
}

/// IEEE binary16 bits -> float (exact).
TCC_HOST_DEVICE inline float f16ToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) { // zero or subnormal: m * 2^-24
    const float v = float(m) * 5.9604644775390625e-8f;
    return bitsFloat(floatBits(v) | sign);
  }
  if (e == 31)
    return bitsFloat(sign | 0x7f800000u | (m << 13));
  return bitsFloat(sign | ((e + 112) << 23) | (m << 13));
}

/// A stored bfloat16 / binary16, for the kernels templated on their element
/// type that compute in double and store `T(value)` (the optimizer updates):
/// the value is rounded to float first, then to 16 bits, exactly as an f32
/// kernel's result cast down to 16 bits afterwards would be, so the update
/// gives the same bits as one on f32 copies of the 16-bit state.
///
/// isNan() and orderKey() compare stored values without widening them (a
/// max pool's argmax): for two numbers a, b, a < b exactly when
/// a.orderKey() < b.orderKey(), the two zeros having one key; NaN has none.
template <uint16_t kInfinityBits> struct StoredHalf {
  /// -infinity's orderKey(), below every other number's.
  static constexpr uint16_t kNegativeInfinityKey = uint16_t(~(kInfinityBits | 0x8000u));
  uint16_t bits;
  TCC_HOST_DEVICE bool isNan() const { return (bits & 0x7fffu) > kInfinityBits; }
  /// Sign-magnitude bits as an offset: negatives reversed below 0x8000.
  TCC_HOST_DEVICE uint16_t orderKey() const {
    if ((bits & 0x7fffu) == 0)
      return 0x8000u;
    return (bits & 0x8000u) ? uint16_t(~bits) : uint16_t(bits | 0x8000u);
  }
};
struct BF16 : StoredHalf<0x7f80u> {
  BF16() = default;
  TCC_HOST_DEVICE explicit BF16(double v) : StoredHalf{floatToBf16(float(v))} {}
  TCC_HOST_DEVICE operator double() const { return bf16ToFloat(bits); }
};
struct F16 : StoredHalf<0x7c00u> {
  F16() = default;
  TCC_HOST_DEVICE explicit F16(double v) : StoredHalf{floatToF16(float(v))} {}
  TCC_HOST_DEVICE operator double() const { return f16ToFloat(bits); }
};
static_assert(sizeof(BF16) == 2 && sizeof(F16) == 2, "stored as 16 bits");

} // namespace tcc::rt::half

#endif // TCC_RUNTIME_COMMON_FLOAT16_H
