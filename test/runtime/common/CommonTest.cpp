//===- CommonTest.cpp - runtime/common on the CPU -------------------------===//
//
// Known answers for the math the cpu and cuda targets share; the same
// headers are compiled for the device by the common-headers-nvcc test.
//
//===----------------------------------------------------------------------===//

#include "runtime/common/DropoutMask.h"
#include "runtime/common/Float16.h"
#include "runtime/common/Philox.h"
#include "runtime/common/Schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace tcc::rt;

TEST(Philox, Random123KnownAnswers) {
  // kat_vectors of Random123 for philox4x32_10.
  philox::Words zero = philox::philox4x32_10(philox::Words{{0, 0, 0, 0}}, 0, 0);
  EXPECT_EQ(zero.w[0], 0x6627e8d5u);
  EXPECT_EQ(zero.w[1], 0xe169c58du);
  EXPECT_EQ(zero.w[2], 0xbc57ac4cu);
  EXPECT_EQ(zero.w[3], 0x9b00dbd8u);
  philox::Words ones = philox::philox4x32_10(
      philox::Words{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu,
      0xffffffffu);
  EXPECT_EQ(ones.w[0], 0x408f276du);
  EXPECT_EQ(ones.w[1], 0x41c83b0eu);
  EXPECT_EQ(ones.w[2], 0xa20bc7c6u);
  EXPECT_EQ(ones.w[3], 0x6d5451fdu);
  philox::Words pi = philox::philox4x32_10(
      philox::Words{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u,
      0x299f31d0u);
  EXPECT_EQ(pi.w[0], 0xd16cfe09u);
  EXPECT_EQ(pi.w[1], 0x94fdccebu);
  EXPECT_EQ(pi.w[2], 0x5001e420u);
  EXPECT_EQ(pi.w[3], 0x24126ea1u);
}

TEST(Philox, UniformIsInTheUnitInterval) {
  EXPECT_EQ(philox::u32ToUniform(0), 0.0f);
  EXPECT_EQ(philox::u32ToUniform(0xffffffffu), 1.0f - 1.0f / 16777216.0f);
}

TEST(Float16, Bfloat16RoundsToNearestEven) {
  EXPECT_EQ(half::floatToBf16(1.0f), 0x3f80u);
  // 1 + 2^-8 is halfway between bf16 1.0 and 1 + 2^-7: ties go to even (1.0).
  EXPECT_EQ(half::floatToBf16(1.00390625f), 0x3f80u);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up.
  EXPECT_EQ(half::floatToBf16(1.01171875f), 0x3f82u);
  EXPECT_EQ(half::floatToBf16(std::numeric_limits<float>::infinity()), 0x7f80u);
  EXPECT_EQ(half::floatToBf16(-0.0f), 0x8000u);
  // NaN stays a quiet NaN with its sign, never rounds to infinity.
  const uint16_t nan = half::floatToBf16(-std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(half::bf16ToFloat(nan)));
  EXPECT_EQ(nan & 0x8000u, 0x8000u);
  // Past the largest bf16, rounds to infinity.
  EXPECT_EQ(half::floatToBf16(3.4028235e38f), 0x7f80u);
}

TEST(Float16, BinaryHalfRoundTripAndEdges) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = half::f16ToFloat(uint16_t(h));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(half::floatToF16(f), h) << "half " << h;
  }
  EXPECT_EQ(half::floatToF16(65504.0f), 0x7bffu); // the largest half
  EXPECT_EQ(half::floatToF16(65519.0f), 0x7bffu); // below the midpoint
  EXPECT_EQ(half::floatToF16(65520.0f), 0x7c00u); // the midpoint: to even (inf)
  EXPECT_EQ(half::floatToF16(5.9604644775390625e-8f), 0x0001u); // smallest subnormal
  EXPECT_EQ(half::floatToF16(2.98023223876953125e-8f), 0x0000u); // its half: to even
  EXPECT_EQ(half::floatToF16(8.94069671630859375e-8f), 0x0002u); // 1.5 units: to even
  EXPECT_TRUE(std::isnan(half::f16ToFloat(half::floatToF16(std::nanf("")))));
}

TEST(Schedule, FactorsAtChosenSteps) {
  ScheduleDesc piecewise;
  piecewise.type = ScheduleDesc::PiecewiseLinear;
  piecewise.pointCount = 3;
  const double ts[] = {0, 2, 4}, fs[] = {0, 1, 0.5};
  for (int i = 0; i < 3; ++i) {
    piecewise.pointT[i] = ts[i];
    piecewise.pointFactor[i] = fs[i];
  }
  // 10 steps per epoch: step 5 is t = 0.5 epochs, a quarter of the way up.
  EXPECT_DOUBLE_EQ(lrFactor(piecewise, 5, 10, 40), 0.25);
  EXPECT_DOUBLE_EQ(lrFactor(piecewise, 30, 10, 40), 0.75);
  EXPECT_DOUBLE_EQ(lrFactor(piecewise, 45, 10, 40), 0.5); // past the last point
  ScheduleDesc step;
  step.type = ScheduleDesc::Step;
  step.stepSize = 2;
  step.gamma = 0.1;
  EXPECT_DOUBLE_EQ(lrFactor(step, 39, 10, 100), 0.1); // epoch 3.9: one decay
  ScheduleDesc cosine;
  cosine.type = ScheduleDesc::Cosine;
  cosine.perEpoch = false;
  EXPECT_DOUBLE_EQ(lrFactor(cosine, 50, 10, 100), 0.5); // half way: cos(pi/2)
  ScheduleDesc cycle;
  cycle.type = ScheduleDesc::OneCycle;
  // OneCycleLR: the peak (factor 1) at step pct_start * total - 1.
  EXPECT_DOUBLE_EQ(lrFactor(cycle, 29, 10, 100), 1.0);
  // At step 0, 1 + (1/25 - 1): 1/25 up to the rounding of that sum.
  EXPECT_NEAR(lrFactor(cycle, 0, 10, 100), 1.0 / 25, 1e-15);
}

TEST(Dropout, KeepRateIsWithinABinomialBound) {
  // n = 1e6 draws at p = 0.3: the kept fraction has sd sqrt(0.21 / n) =
  // 4.6e-4; 6 sd is 2.7e-3.
  const int64_t n = 1000000;
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i)
    kept += dropout::keep(0.3, 42, 7, uint64_t(i));
  EXPECT_NEAR(double(kept) / n, 0.7, 2.75e-3);
  // A new step draws another mask.
  EXPECT_NE(dropout::mixSeed(42, 0), dropout::mixSeed(42, 1));
}
