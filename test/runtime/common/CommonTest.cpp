//===- CommonTest.cpp - runtime/common on the CPU -------------------------===//
//
// Known answers for the math the cpu and cuda targets share; the same
// headers are compiled for the device by the common-headers-nvcc test.
//
//===----------------------------------------------------------------------===//

#include "runtime/common/DropoutMask.h"
#include "runtime/common/Float16.h"
#include "runtime/common/LossScale.h"
#include "runtime/common/Philox.h"
#include "runtime/common/Schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace tcc::rt;

namespace {

//===----------------------------------------------------------------------===//
// Philox4x32-10
//===----------------------------------------------------------------------===//

void expectWords(const philox::Words &w, uint32_t w0, uint32_t w1, uint32_t w2,
                 uint32_t w3) {
  EXPECT_EQ(w.w[0], w0);
  EXPECT_EQ(w.w[1], w1);
  EXPECT_EQ(w.w[2], w2);
  EXPECT_EQ(w.w[3], w3);
}

TEST(Philox, Random123KnownAnswers) {
  // Random123's kat_vectors, the three "philox4x32 10" lines.
  expectWords(philox::philox4x32_10(philox::Words{{0, 0, 0, 0}}, 0, 0),
              0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u);
  expectWords(philox::philox4x32_10(
                  philox::Words{{0xffffffffu, 0xffffffffu, 0xffffffffu,
                                 0xffffffffu}},
                  0xffffffffu, 0xffffffffu),
              0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
  expectWords(philox::philox4x32_10(
                  philox::Words{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu,
                                 0x03707344u}},
                  0xa4093822u, 0x299f31d0u),
              0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

TEST(Philox, CounterLayout) {
  // key = seed, counter = (index / 4, stream); word index % 4.
  const uint64_t seed = 0x0123456789abcdefull, stream = 0xfedcba9876543210ull;
  const uint64_t block = 0x100000005ull; // both halves of the block number
  const philox::Words expected = philox::philox4x32_10(
      philox::Words{{5u, 1u, 0x76543210u, 0xfedcba98u}}, 0x89abcdefu,
      0x01234567u);
  const philox::Words got = philox::randomBlock(seed, stream, block);
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(got.w[j], expected.w[j]);
    EXPECT_EQ(philox::randomU32(seed, stream, block * 4 + j), expected.w[j]);
  }
}

TEST(Philox, UniformKeepsTheTop24Bits) {
  EXPECT_EQ(philox::u32ToUniform(0), 0.0f);
  EXPECT_EQ(philox::u32ToUniform(0xffu), 0.0f); // the low 8 bits are dropped
  EXPECT_EQ(philox::u32ToUniform(0x80000000u), 0.5f);
  EXPECT_EQ(philox::u32ToUniform(0xffffffffu), 1.0f - 1.0f / 16777216.0f);
}

//===----------------------------------------------------------------------===//
// 16-bit floats
//===----------------------------------------------------------------------===//

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint32_t toBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// A 16-bit format for the reference rounding: positive finite encodings
/// 0..inf-1 grow with their bits; `inf` stands for 2^(emax + 1) when
/// rounding (IEEE overflow rounds as if the exponent were unbounded).
struct Format {
  const char *name;
  uint16_t (*encode)(float);
  float (*decode)(uint16_t);
  uint16_t inf;
  double infValue;
};

const Format kHalf{"f16", half::floatToF16, half::f16ToFloat, 0x7c00, 65536.0};
const Format kBf16{"bf16", half::floatToBf16, half::bf16ToFloat, 0x7f80,
                   std::ldexp(1.0, 128)};

double value(const Format &f, uint16_t bits) {
  return bits == f.inf ? f.infValue : double(f.decode(bits));
}

/// Round to nearest even by search over the encodings (no bit tricks).
uint16_t referenceEncode(const Format &f, float x) {
  const double a = std::fabs(double(x));
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (a >= f.infValue)
    return sign | f.inf;
  uint16_t lo = 0, hi = f.inf; // value(lo) <= a < value(hi)
  while (hi - lo > 1) {
    const uint16_t mid = uint16_t((lo + hi) / 2);
    (value(f, mid) <= a ? lo : hi) = mid;
  }
  const double below = a - value(f, lo), above = value(f, hi) - a;
  if (below < above || (below == above && lo % 2 == 0))
    return sign | lo;
  return sign | hi;
}

void expectRoundsLikeReference(const Format &f) {
  // Every finite encoding, the midpoints to the next one (ties) and the
  // floats just beside them, on both signs: exact, ties to even, subnormals
  // and the overflow to infinity.
  for (uint32_t h = 0; h < f.inf; ++h) {
    const double v = value(f, uint16_t(h)), next = value(f, uint16_t(h + 1));
    const float mid = float((v + next) / 2); // exact: floats have more bits
    ASSERT_EQ(double(mid), (v + next) / 2);
    const float cases[] = {float(v), mid, std::nextafter(mid, 0.0f),
                           std::nextafter(mid, INFINITY)};
    for (float x : cases)
      for (float s : {x, -x})
        ASSERT_EQ(f.encode(s), referenceEncode(f, s))
            << f.name << " of " << s << " (bits 0x" << std::hex << toBits(s)
            << ")";
  }
  // A sample of all floats, infinities included.
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4093) {
    const float x = fromBits(uint32_t(u));
    if (std::isnan(x))
      continue;
    ASSERT_EQ(f.encode(x), referenceEncode(f, x))
        << f.name << " of bits 0x" << std::hex << u;
  }
}

TEST(Float16, Bfloat16RoundsToNearestEven) {
  expectRoundsLikeReference(kBf16);
  EXPECT_EQ(half::floatToBf16(1.0f), 0x3f80u);
  // 1 + 2^-8 is halfway between bf16 1.0 and 1 + 2^-7: ties go to even (1.0).
  EXPECT_EQ(half::floatToBf16(1.00390625f), 0x3f80u);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up.
  EXPECT_EQ(half::floatToBf16(1.01171875f), 0x3f82u);
  EXPECT_EQ(half::floatToBf16(INFINITY), 0x7f80u);
  EXPECT_EQ(half::floatToBf16(-INFINITY), 0xff80u);
  EXPECT_EQ(half::floatToBf16(-0.0f), 0x8000u);
  // Past the largest bf16 (by half an ulp or more), rounds to infinity.
  EXPECT_EQ(half::floatToBf16(3.4028235e38f), 0x7f80u);
  EXPECT_EQ(half::floatToBf16(fromBits(0x7f7f7fffu)), 0x7f7fu);
  // Subnormals: ties to even at the bottom of the range.
  EXPECT_EQ(half::floatToBf16(fromBits(0x00008000u)), 0x0000u);
  EXPECT_EQ(half::floatToBf16(fromBits(0x00018000u)), 0x0002u);
  EXPECT_EQ(half::floatToBf16(fromBits(0x00008001u)), 0x0001u);
}

TEST(Float16, Bfloat16DecodesExactlyAndKeepsNaNs) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = half::bf16ToFloat(uint16_t(h));
    ASSERT_EQ(toBits(f), h << 16);
    if (!std::isnan(f)) {
      ASSERT_EQ(half::floatToBf16(f), h);
    }
  }
  // A NaN stays a NaN (never rounds to infinity) with its sign, quieted,
  // with the top 7 bits of its payload.
  EXPECT_EQ(half::floatToBf16(fromBits(0x7f800001u)), 0x7fc0u); // signalling
  EXPECT_EQ(half::floatToBf16(fromBits(0xffffffffu)), 0xffffu);
  EXPECT_EQ(half::floatToBf16(fromBits(0x7fa10000u)), 0x7fe1u);
  EXPECT_EQ(half::floatToBf16(-std::numeric_limits<float>::quiet_NaN()) & 0x8000u,
            0x8000u);
}

TEST(Float16, BinaryHalfRoundsToNearestEven) {
  expectRoundsLikeReference(kHalf);
  EXPECT_EQ(half::floatToF16(1.0f + 1.0f / 2048), 0x3c00u); // tie: even
  EXPECT_EQ(half::floatToF16(1.0f + 3.0f / 2048), 0x3c02u); // tie: even (up)
  EXPECT_EQ(half::floatToF16(65504.0f), 0x7bffu); // the largest half
  EXPECT_EQ(half::floatToF16(65519.0f), 0x7bffu); // below the midpoint
  EXPECT_EQ(half::floatToF16(65520.0f), 0x7c00u); // the midpoint: to even (inf)
  EXPECT_EQ(half::floatToF16(-1e5f), 0xfc00u);
  EXPECT_EQ(half::floatToF16(INFINITY), 0x7c00u);
  EXPECT_EQ(half::floatToF16(-INFINITY), 0xfc00u);
  EXPECT_EQ(half::floatToF16(-0.0f), 0x8000u);
  // Subnormals (units of 2^-24).
  EXPECT_EQ(half::floatToF16(0x1p-24f), 0x0001u);   // the smallest
  EXPECT_EQ(half::floatToF16(0x1p-25f), 0x0000u);   // its half: to even (0)
  EXPECT_EQ(half::floatToF16(0x1.000002p-25f), 0x0001u); // just above: up
  EXPECT_EQ(half::floatToF16(0x1.8p-24f), 0x0002u); // 1.5 units: to even
  EXPECT_EQ(half::floatToF16(0x1.ffcp-15f), 0x0400u); // 1023.5 units: carries
                                                      // into the smallest normal
  EXPECT_EQ(half::floatToF16(-1e-30f), 0x8000u); // underflow keeps the sign
}

TEST(Float16, BinaryHalfDecodesExactlyAndKeepsNaNs) {
  EXPECT_EQ(half::f16ToFloat(0x3c00u), 1.0f);
  EXPECT_EQ(half::f16ToFloat(0xc000u), -2.0f);
  EXPECT_EQ(half::f16ToFloat(0x0001u), 0x1p-24f);
  EXPECT_EQ(half::f16ToFloat(0x03ffu), 0x1.ff8p-15f); // the largest subnormal
  EXPECT_EQ(half::f16ToFloat(0x7bffu), 65504.0f);
  EXPECT_EQ(toBits(half::f16ToFloat(0x8000u)), 0x80000000u);
  EXPECT_EQ(half::f16ToFloat(0xfc00u), -INFINITY);
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = half::f16ToFloat(uint16_t(h));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(half::floatToF16(f), h) << "half " << h;
  }
  // NaN: quiet, sign and the top 10 payload bits kept; half NaNs decode to
  // float NaNs with their payload.
  EXPECT_EQ(half::floatToF16(fromBits(0x7f800001u)), 0x7e00u); // signalling
  EXPECT_EQ(half::floatToF16(fromBits(0x7f802000u)), 0x7e01u);
  EXPECT_EQ(half::floatToF16(fromBits(0xffc00000u)), 0xfe00u);
  EXPECT_EQ(toBits(half::f16ToFloat(0x7e01u)), 0x7fc02000u);
  EXPECT_EQ(toBits(half::f16ToFloat(0xfd00u)), 0xffa00000u);
}

// The stored 16-bit types of the optimizer kernels round a double through
// float, as an f32 kernel's result cast down to 16 bits is: 1 + 2^-11 +
// 2^-40 is above the binary16 tie between 1 and 1 + 2^-10, but as a float
// it is the tie itself, which goes to the even 1.
TEST(Float16, StoredTypesRoundThroughFloat) {
  const double aboveTie = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(half::F16(aboveTie).bits, half::floatToF16(float(aboveTie)));
  EXPECT_EQ(half::F16(aboveTie).bits, 0x3c00u);
  EXPECT_EQ(half::BF16(1.0 + 0x1p-8 + 0x1p-40).bits, 0x3f80u); // the same for bf16
  EXPECT_EQ(double(half::F16(-2.5)), -2.5);
  EXPECT_EQ(double(half::BF16(3.0)), 3.0);
  half::F16 stored[2] = {half::F16(1.5), half::F16(0.0)};
  stored[1] = stored[0]; // copied as bits, as the copy stages do
  EXPECT_EQ(stored[1].bits, 0x3e00u);
}

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

ScheduleDesc piecewise(std::initializer_list<std::pair<double, double>> points,
                       bool perEpoch) {
  ScheduleDesc s;
  s.type = ScheduleDesc::PiecewiseLinear;
  s.perEpoch = perEpoch;
  for (auto [t, f] : points) {
    s.pointT[s.pointCount] = t;
    s.pointFactor[s.pointCount] = f;
    ++s.pointCount;
  }
  return s;
}

TEST(Schedule, PiecewiseLinearInterpolatesAndHolds) {
  const ScheduleDesc s = piecewise({{0, 0}, {2, 1}, {4, 0.5}}, true);
  // 10 steps per epoch: step 5 is t = 0.5 epochs, a quarter of the way up.
  EXPECT_EQ(lrFactor(s, 0, 10, 40), 0.0);
  EXPECT_EQ(lrFactor(s, 5, 10, 40), 0.25);
  EXPECT_EQ(lrFactor(s, 20, 10, 40), 1.0); // on a point
  EXPECT_EQ(lrFactor(s, 30, 10, 40), 0.75);
  EXPECT_EQ(lrFactor(s, 40, 10, 40), 0.5);  // the last point
  EXPECT_EQ(lrFactor(s, 45, 10, 40), 0.5);  // past it: held
  // count_from 1 (cifar10-fast): the first step (0 before it) reads t = 1/10.
  ScheduleDesc fromOne = s;
  fromOne.countFrom = 1;
  EXPECT_EQ(lrFactor(fromOne, 0, 10, 40), 0.05);
  EXPECT_EQ(lrFactor(fromOne, 19, 10, 40), 1.0);
  // Unit "step", and all 64 points usable.
  ScheduleDesc full = piecewise({}, false);
  for (int i = 0; i < kMaxSchedulePoints; ++i) {
    full.pointT[i] = 2.0 * i;
    full.pointFactor[i] = i % 2;
  }
  full.pointCount = kMaxSchedulePoints;
  EXPECT_EQ(lrFactor(full, 125, 10, 200), 0.5); // between points 62 and 63
  EXPECT_EQ(lrFactor(full, 126, 10, 200), 1.0);
  EXPECT_EQ(lrFactor(full, 500, 10, 200), 1.0);
}

TEST(Schedule, ClosedFormsAtChosenSteps) {
  EXPECT_EQ(lrFactor(ScheduleDesc{}, 123, 10, 1000), 1.0); // constant

  ScheduleDesc step;
  step.type = ScheduleDesc::Step;
  step.stepSize = 2;
  step.gamma = 0.1;
  EXPECT_EQ(lrFactor(step, 19, 10, 100), 1.0); // epoch 1.9: none yet
  EXPECT_EQ(lrFactor(step, 39, 10, 100), 0.1); // epoch 3.9: one decay
  step.perEpoch = false;
  step.stepSize = 3;
  step.gamma = 0.5;
  EXPECT_EQ(lrFactor(step, 8, 10, 100), 0.25); // floor(8 / 3) = 2 decays

  ScheduleDesc warmup;
  warmup.type = ScheduleDesc::LinearWarmup;
  warmup.warmup = 4;
  EXPECT_EQ(lrFactor(warmup, 10, 10, 100), 0.25); // epoch 1 of 4
  EXPECT_EQ(lrFactor(warmup, 50, 10, 100), 1.0);  // capped

  ScheduleDesc cosine;
  cosine.type = ScheduleDesc::Cosine;
  cosine.perEpoch = false;
  EXPECT_DOUBLE_EQ(lrFactor(cosine, 50, 10, 100), 0.5); // cos(pi / 2)
  EXPECT_EQ(lrFactor(cosine, 100, 10, 100), 0.0);       // cos(pi) = -1
  cosine.perEpoch = true;
  cosine.warmup = 1;
  cosine.minFactor = 0.1;
  // 50 steps of 10 per epoch: 5 epochs, warmup 1.
  EXPECT_EQ(lrFactor(cosine, 5, 10, 50), 0.5);                 // warming up
  EXPECT_DOUBLE_EQ(lrFactor(cosine, 30, 10, 50), 0.1 + 0.45); // p = 1/2
  EXPECT_DOUBLE_EQ(lrFactor(cosine, 50, 10, 50), 0.1);        // p = 1
  EXPECT_DOUBLE_EQ(lrFactor(cosine, 70, 10, 50), 0.1);        // held

  ScheduleDesc cycle;
  cycle.type = ScheduleDesc::OneCycle;
  // OneCycleLR: the peak (factor 1) at step pct_start * total - 1.
  EXPECT_EQ(lrFactor(cycle, 29, 10, 100), 1.0);
  // At step 0, 1 + (1/25 - 1): 1/25 up to the rounding of that sum.
  EXPECT_NEAR(lrFactor(cycle, 0, 10, 100), 1.0 / 25, 1e-15);
  // Half way down (step 64 of the 29..99 phase) to 1/25/1e4.
  EXPECT_NEAR(lrFactor(cycle, 64, 10, 100), (1 + 4e-6) / 2, 1e-15);
  EXPECT_NEAR(lrFactor(cycle, 99, 10, 100), 4e-6, 1e-18);
  cycle.annealCos = false;
  EXPECT_EQ(lrFactor(cycle, 0, 10, 100), 1.0 / 25);
  EXPECT_NEAR(lrFactor(cycle, 14, 10, 100), 0.04 + 0.96 * 14 / 29, 1e-15);
  EXPECT_NEAR(lrFactor(cycle, 64, 10, 100), (1 + 4e-6) / 2, 1e-15);
}

//===----------------------------------------------------------------------===//
// Dropout masks
//===----------------------------------------------------------------------===//

TEST(Dropout, KeepRateIsWithinABinomialBound) {
  // n = 1e6 draws: the kept fraction has sd sqrt(p (1 - p) / n) <= 5e-4; a
  // bound of 6 sd fails by chance with probability ~2e-9.
  const int64_t n = 1000000;
  for (double p : {0.1, 0.3, 0.5, 0.9}) {
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i)
      kept += dropout::keep(p, 42, 7, uint64_t(i));
    const double sd = std::sqrt(p * (1 - p) / double(n));
    EXPECT_NEAR(double(kept) / double(n), 1 - p, 6 * sd) << "p = " << p;
  }
}

TEST(Dropout, KeepIsTheUniformAgainstP) {
  for (uint64_t i = 0; i < 1000; ++i) {
    const uint32_t r = philox::randomU32(3, 9, i);
    ASSERT_EQ(dropout::keep(0.25, 3, 9, i), philox::u32ToUniform(r) >= 0.25f);
    ASSERT_EQ(dropout::keep(0.25, 3, 9, i), dropout::keeps(r, 0.25f));
  }
  EXPECT_TRUE(dropout::keeps(0, 0.0f));            // p = 0 keeps everything
  EXPECT_FALSE(dropout::keeps(0xffffffffu, 1.0f)); // p = 1 keeps nothing
  EXPECT_TRUE(dropout::keeps(0x80000000u, 0.5f));  // u = p keeps
  EXPECT_EQ(dropout::keptScale(0.5), 2.0);
  EXPECT_EQ(dropout::keptScale(0.0), 1.0);
}

TEST(Dropout, EachStepDrawsItsOwnSeed) {
  // splitmix64 of (seed ^ step * golden ratio); step 0 of seed 0 is
  // splitmix64's known first output for state 0.
  EXPECT_EQ(uint64_t(dropout::mixSeed(0, 0)), 0u);
  EXPECT_EQ(uint64_t(dropout::mixSeed(0, 1)), 0xe220a8397b1dcdafull);
  EXPECT_NE(dropout::mixSeed(42, 0), dropout::mixSeed(42, 1));
  EXPECT_NE(dropout::mixSeed(42, 1), dropout::mixSeed(43, 1));
}

} // namespace

// GradScaler's update, step by step (torch._amp_update_scale_): back off
// and reset on an inf or NaN, grow after `interval` clean steps, never to
// an infinite scale.
TEST(LossScale, UpdatesAsGradScaler) {
  EXPECT_TRUE(loss_scale::isFinite(3.4028235e38f));
  EXPECT_FALSE(loss_scale::isFinite(std::numeric_limits<float>::infinity()));
  EXPECT_FALSE(loss_scale::isFinite(-std::numeric_limits<float>::infinity()));
  EXPECT_FALSE(loss_scale::isFinite(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_EQ(loss_scale::inverse(65536.0f), 1.0f / 65536.0f);
  EXPECT_EQ(loss_scale::inverse(3.0f), float(1.0 / 3.0));

  float scale = 65536.0f;
  int64_t tracker = 0;
  loss_scale::update(2.0, 0.5, 3, false, scale, tracker);
  loss_scale::update(2.0, 0.5, 3, false, scale, tracker);
  EXPECT_EQ(scale, 65536.0f);
  EXPECT_EQ(tracker, 2);
  loss_scale::update(2.0, 0.5, 3, false, scale, tracker);
  EXPECT_EQ(scale, 131072.0f);
  EXPECT_EQ(tracker, 0);
  loss_scale::update(2.0, 0.5, 3, false, scale, tracker);
  loss_scale::update(2.0, 0.5, 3, true, scale, tracker);
  EXPECT_EQ(scale, 65536.0f);
  EXPECT_EQ(tracker, 0);

  float top = 3.0e38f;
  int64_t clean = 0;
  loss_scale::update(2.0, 0.5, 1, false, top, clean);
  EXPECT_EQ(top, 3.0e38f); // 6e38 overflows f32: kept
  EXPECT_EQ(clean, 0);
}
