//===- ElementwiseTest.cpp - Arithmetic, layout ops, casts ----------------===//
#include "runtime/kernels/Elementwise.h"
#include "TestUtil.h"

#include <cstring>
#include <limits>

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

TEST(Elementwise, Arithmetic) {
  Vec a = {1, 2, 3}, b = {4, -5, 6}, y(3);
  add(3, a.data(), b.data(), y.data());
  EXPECT_EQ(y, (Vec{5, -3, 9}));
  sub(3, a.data(), b.data(), y.data());
  EXPECT_EQ(y, (Vec{-3, 7, -3}));
  mul(3, a.data(), b.data(), y.data());
  EXPECT_EQ(y, (Vec{4, -10, 18}));
  scale(3, 0.5, a.data(), y.data());
  EXPECT_EQ(y, (Vec{0.5, 1, 1.5}));
  add_accumulate(3, a.data(), y.data());
  EXPECT_EQ(y, (Vec{1.5, 3, 4.5}));
  scale_inplace(3, 2.0, y.data());
  EXPECT_EQ(y, (Vec{3, 6, 9}));
  fill(3, 7.0, y.data());
  EXPECT_EQ(y, (Vec{7, 7, 7}));
  copy(3, b.data(), y.data());
  EXPECT_EQ(y, b);
}

TEST(Elementwise, ReduceSumAndBackward) {
  const int64_t outer = 2, axis = 3, inner = 4;
  Vec x = random_vec(outer * axis * inner, 1), y(outer * inner);
  reduce_sum(outer, axis, inner, x.data(), y.data());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      EXPECT_NEAR(y[o * inner + i],
                  x[(o * 3 + 0) * 4 + i] + x[(o * 3 + 1) * 4 + i] +
                      x[(o * 3 + 2) * 4 + i],
                  1e-15);
  Vec total(1);
  reduce_sum(1, int64_t(x.size()), 1, x.data(), total.data());
  EXPECT_NEAR(total[0], std::accumulate(x.begin(), x.end(), 0.0), 1e-14);
  Vec dy = random_vec(outer * inner, 2), dx(x.size(), 9.0);
  reduce_sum_backward(outer, axis, inner, dy.data(), dx.data());
  check_gradient("reduce_sum", x, dx, dy, [&](Vec &out) {
    reduce_sum(outer, axis, inner, x.data(), out.data());
  });
}

TEST(Elementwise, ConcatSliceAndBackward) {
  // [2, {2,3,1}, 3] along the middle axis.
  const int64_t outer = 2, inner = 3, sizes[] = {2, 3, 1};
  Vec a = random_vec(2 * 2 * 3, 1), b = random_vec(2 * 3 * 3, 2),
      c = random_vec(2 * 1 * 3, 3);
  Vec y(2 * 6 * 3);
  auto run = [&](Vec &out) {
    const double *ins[] = {a.data(), b.data(), c.data()};
    concat(outer, inner, 3, ins, sizes, out.data());
  };
  run(y);
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(y[(o * 6 + 1) * 3 + j], a[(o * 2 + 1) * 3 + j]);
      EXPECT_EQ(y[(o * 6 + 4) * 3 + j], b[(o * 3 + 2) * 3 + j]);
      EXPECT_EQ(y[(o * 6 + 5) * 3 + j], c[o * 3 + j]);
    }
  // slice recovers b.
  Vec s(b.size());
  slice(outer, 6, inner, 2, 3, y.data(), s.data());
  EXPECT_EQ(s, b);

  Vec dy = random_vec(y.size(), 4), da(a.size(), 9.0), db(b.size(), 9.0);
  double *dxs[] = {da.data(), db.data(), nullptr};
  concat_backward(outer, inner, 3, sizes, dy.data(), dxs);
  check_gradient("concat input 0", a, da, dy, run);
  check_gradient("concat input 1", b, db, dy, run);

  Vec ds = random_vec(s.size(), 5), dfull(y.size(), 9.0);
  slice_backward(outer, 6, inner, 2, 3, ds.data(), dfull.data());
  check_gradient("slice", y, dfull, ds, [&](Vec &out) {
    slice(outer, 6, inner, 2, 3, y.data(), out.data());
  });
}

TEST(Elementwise, FlipAndTranspose) {
  Vec x = {1, 2, 3, 4, 5, 6}, y(6);
  flip(2, 3, 1, x.data(), y.data()); // [2,3] along the last axis
  EXPECT_EQ(y, (Vec{3, 2, 1, 6, 5, 4}));
  flip(1, 2, 3, x.data(), y.data()); // [2,3] along the first axis
  EXPECT_EQ(y, (Vec{4, 5, 6, 1, 2, 3}));

  // x [2, 3, 4] permuted by (2, 0, 1) -> [4, 2, 3]; and back.
  const int64_t shape[] = {2, 3, 4}, perm[] = {2, 0, 1};
  Vec t(24), u(24);
  for (int i = 0; i < 24; ++i)
    t[i] = i;
  transpose(3, shape, perm, t.data(), u.data());
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 3; ++c)
        ASSERT_EQ(u[(a * 2 + b) * 3 + c], t[(b * 3 + c) * 4 + a]);
  const int64_t shape2[] = {4, 2, 3}, inv[] = {1, 2, 0};
  Vec back(24);
  transpose(3, shape2, inv, u.data(), back.data());
  EXPECT_EQ(back, t);
  // 2-D transpose.
  const int64_t s2[] = {2, 3}, p2[] = {1, 0};
  transpose(2, s2, p2, x.data(), y.data());
  EXPECT_EQ(y, (Vec{1, 4, 2, 5, 3, 6}));
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Reference values: PyTorch 1.13 (float32 tensor).bfloat16() / .half().
TEST(Cast, RepresentativeValuesMatchPyTorch) {
  struct Case {
    float v;
    uint16_t bf16, f16;
  } cases[] = {
      {1.0f, 0x3f80, 0x3c00},
      {1.00390625f, 0x3f80, 0x3c04}, // bf16 tie -> even (down)
      {1.01171875f, 0x3f82, 0x3c0c}, // bf16 tie -> even (up)
      {-3.1415926f, 0xc049, 0xc248},
      {65504.0f, 0x4780, 0x7bff},
      {3.4028234663852886e38f, 0x7f80, 0x7c00}, // FLT_MAX rounds to inf
      {1e-40f, 0x0001, 0x0000},
      {std::numeric_limits<float>::infinity(), 0x7f80, 0x7c00},
      {-std::numeric_limits<float>::infinity(), 0xff80, 0xfc00},
      {0.0f, 0x0000, 0x0000},
      {-0.0f, 0x8000, 0x8000},
      {1.0009765625f, 0x3f80, 0x3c01},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(float_to_bf16(c.v), c.bf16) << c.v;
    EXPECT_EQ(float_to_f16(c.v), c.f16) << c.v;
  }
  // f16 ties: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 -> even (1).
  EXPECT_EQ(float_to_f16(1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(float_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
  // f16 overflow boundary: 65519 -> 65504, 65520 -> inf.
  EXPECT_EQ(float_to_f16(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_f16(65520.0f), 0x7c00);
  // f16 subnormals: 2^-24 is the smallest; 2^-25 ties to 0; 3*2^-25 ties to 2.
  EXPECT_EQ(float_to_f16(0x1p-24f), 0x0001);
  EXPECT_EQ(float_to_f16(0x1p-25f), 0x0000);
  EXPECT_EQ(float_to_f16(0x1.000002p-25f), 0x0001);
  EXPECT_EQ(float_to_f16(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(float_to_f16(-0x1p-14f), 0x8400);
}

TEST(Cast, NaNStaysNaN) {
  for (uint32_t u :
       {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu, 0x7f80ffffu}) {
    const float f = from_bits(u);
    const uint16_t b = float_to_bf16(f), h = float_to_f16(f);
    EXPECT_TRUE(std::isnan(bf16_to_float(b))) << std::hex << u;
    EXPECT_TRUE(std::isnan(f16_to_float(h))) << std::hex << u;
    EXPECT_EQ(b >> 15, u >> 31);
  }
}

TEST(Cast, SixteenBitRoundTripsAreExact) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float b = bf16_to_float(uint16_t(h));
    if (std::isnan(b))
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(b))));
    else
      ASSERT_EQ(float_to_bf16(b), h) << std::hex << h;
    const float f = f16_to_float(uint16_t(h));
    if (std::isnan(f))
      EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(f))));
    else
      ASSERT_EQ(float_to_f16(f), h) << std::hex << h;
  }
  EXPECT_EQ(f16_to_float(0x0001), 0x1p-24f);
  EXPECT_EQ(f16_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(f16_to_float(0xc000), -2.0f);
}

/// Independent reference: the nearer of the two 16-bit neighbours (in double),
/// ties to the even one.
uint16_t bf16_reference(float f) {
  const uint32_t u = bits(f);
  const uint16_t lo = uint16_t(u >> 16), hi = uint16_t(lo + 1);
  const double dlo = std::fabs(double(f) - double(bf16_to_float(lo)));
  const double dhi = std::fabs(double(f) - double(bf16_to_float(hi)));
  if (dlo < dhi)
    return lo;
  if (dhi < dlo)
    return hi;
  return (lo & 1) ? hi : lo;
}

TEST(Cast, RandomFloatsRoundToNearestEven) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = rng();
    // Keep finite values below bf16's overflow region (the reference compares
    // against hi = the next pattern, which is meaningless past inf).
    if (((u >> 23) & 0xff) >= 0xfe)
      continue;
    if (i % 4 == 0)
      u = (u & 0xffff0000u) | 0x8000u; // exact ties
    const float f = from_bits(u);
    ASSERT_EQ(float_to_bf16(f), bf16_reference(f)) << std::hex << u;
#ifdef __FLT16_MAX__
    const _Float16 h = (_Float16)f; // the compiler's RNE conversion
    uint16_t hb;
    std::memcpy(&hb, &h, 2);
    ASSERT_EQ(float_to_f16(f), hb) << std::hex << u;
#endif
  }
}

TEST(Cast, Arrays) {
  const float x[] = {1.5f, -2.25f, 3.0e-3f};
  uint16_t b[3], h[3];
  float back[3];
  cast_f32_to_bf16(3, x, b);
  cast_bf16_to_f32(3, b, back);
  EXPECT_EQ(back[0], 1.5f);
  EXPECT_EQ(back[1], -2.25f);
  EXPECT_NEAR(back[2], 3.0e-3f, 3.0e-3f / 128);
  cast_f32_to_f16(3, x, h);
  cast_f16_to_f32(3, h, back);
  EXPECT_EQ(back[0], 1.5f);
  EXPECT_NEAR(back[2], 3.0e-3f, 3.0e-3f / 1024);
  double d[3];
  cast(3, x, d);
  EXPECT_EQ(d[1], -2.25);
}

} // namespace
