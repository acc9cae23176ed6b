//===- InitValues.cpp - State tensor elements as doubles ------------------===//
//
// The 16-bit conversions are runtime/common/Float16.h's, under the
// trainer's names.
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/Init.h"

#include "runtime/common/Float16.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tcc::rt {

uint16_t floatToHalf(float value) { return half::floatToF16(value); }
float halfToFloat(uint16_t bits) { return half::f16ToFloat(bits); }
uint16_t floatToBFloat16(float value) { return half::floatToBf16(value); }
float bfloat16ToFloat(uint16_t bits) { return half::bf16ToFloat(bits); }

void storeValue(DType dtype, void *dst, double value) {
  switch (dtype) {
  case DType::F32: {
    float f = static_cast<float>(value);
    std::memcpy(dst, &f, 4);
    return;
  }
  case DType::F16: {
    uint16_t h = floatToHalf(static_cast<float>(value));
    std::memcpy(dst, &h, 2);
    return;
  }
  case DType::BF16: {
    uint16_t h = floatToBFloat16(static_cast<float>(value));
    std::memcpy(dst, &h, 2);
    return;
  }
  case DType::I64: {
    int64_t v = 0;
    if (std::isnan(value))
      v = 0;
    else if (value >= 9.2233720368547758e18)
      v = INT64_MAX;
    else if (value <= -9.2233720368547758e18)
      v = INT64_MIN;
    else
      v = std::llround(value);
    std::memcpy(dst, &v, 8);
    return;
  }
  case DType::U8: {
    double r = std::isnan(value) ? 0 : std::nearbyint(value);
    *static_cast<uint8_t *>(dst) =
        static_cast<uint8_t>(std::clamp(r, 0.0, 255.0));
    return;
  }
  }
}

void convertValues(DType to, void *dst, DType from, const void *src, int64_t count) {
  const size_t toSize = dtypeSize(to), fromSize = dtypeSize(from);
  for (int64_t i = 0; i < count; ++i)
    storeValue(to, static_cast<uint8_t *>(dst) + i * toSize,
               loadValue(from, static_cast<const uint8_t *>(src) + i * fromSize));
}

double loadValue(DType dtype, const void *src) {
  switch (dtype) {
  case DType::F32: {
    float f;
    std::memcpy(&f, src, 4);
    return f;
  }
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, src, 2);
    return halfToFloat(h);
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, src, 2);
    return bfloat16ToFloat(h);
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, src, 8);
    return static_cast<double>(v);
  }
  case DType::U8:
    return *static_cast<const uint8_t *>(src);
  }
  return 0;
}

} // namespace tcc::rt
