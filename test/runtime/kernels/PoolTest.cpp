//===- PoolTest.cpp - Max / avg / global pooling --------------------------===//
#include "runtime/kernels/Pool.h"
#include "runtime/common/Float16.h"
#include "runtime/kernels/Elementwise.h"
#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

uint32_t float_bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

struct PoolCase {
  const char *name;
  Pool2dShape s;
};
std::vector<PoolCase> cases() {
  return {
      {"2x2 s2", make_pool2d_shape(2, 2, 6, 6, 2, 2, 2, 2)},
      {"3x3 s2 p1 (overlap)", make_pool2d_shape(1, 2, 7, 6, 3, 3, 2, 2, 1, 1)},
      {"3x3 s1 p1 (overlap)", make_pool2d_shape(1, 1, 5, 5, 3, 3, 1, 1, 1, 1)},
      {"3x2 s(2,1) p(1,0)", make_pool2d_shape(2, 1, 6, 5, 3, 2, 2, 1, 1, 0)},
      {"2x2 s2 p1 ceil", make_pool2d_shape(1, 2, 5, 6, 2, 2, 2, 2, 1, 1, true)},
      {"3x3 s2 p1 ceil", make_pool2d_shape(1, 1, 6, 6, 3, 3, 2, 2, 1, 1, true)},
  };
}

TEST(Pool, OutputSize) {
  EXPECT_EQ(pool_out_size(32, 2, 2, 0), 16);
  EXPECT_EQ(pool_out_size(7, 3, 2, 1), 4);
  EXPECT_EQ(pool_out_size(5, 2, 2, 0), 2);
  EXPECT_EQ(pool_out_size(5, 2, 2, 0, true), 3);
  EXPECT_EQ(pool_out_size(5, 3, 2, 1, true), 3);
  EXPECT_EQ(pool_out_size(6, 3, 2, 1, true), 4);
  EXPECT_EQ(pool_out_size(4, 2, 2, 1, true), 3);
  // The last window would start in the right padding: dropped.
  EXPECT_EQ(pool_out_size(5, 2, 2, 1, true), 3);
}

TEST(MaxPool, ForwardMatchesDefinition) {
  uint64_t seed = 1;
  for (const PoolCase &c : cases()) {
    const Pool2dShape &s = c.s;
    Vec x = random_vec(s.n * s.c * s.h * s.w, seed++),
        y(s.n * s.c * s.oh * s.ow);
    max_pool2d_forward(s, x.data(), y.data());
    for (int64_t p = 0; p < s.n * s.c; ++p)
      for (int64_t oy = 0; oy < s.oh; ++oy)
        for (int64_t ox = 0; ox < s.ow; ++ox) {
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t ki = 0; ki < s.kh; ++ki)
            for (int64_t kj = 0; kj < s.kw; ++kj) {
              const int64_t iy = oy * s.sh - s.ph + ki,
                            ix = ox * s.sw - s.pw + kj;
              if (iy >= 0 && iy < s.h && ix >= 0 && ix < s.w)
                m = std::max(m, x[(p * s.h + iy) * s.w + ix]);
            }
          ASSERT_EQ(y[(p * s.oh + oy) * s.ow + ox], m) << c.name;
        }
  }
}

TEST(MaxPool, BackwardFiniteDifferences) {
  uint64_t seed = 20;
  for (const PoolCase &c : cases()) {
    const Pool2dShape &s = c.s;
    Vec x = random_distinct(s.n * s.c * s.h * s.w, seed++);
    Vec dy = random_vec(s.n * s.c * s.oh * s.ow, seed++), dx(x.size(), 9.0);
    max_pool2d_backward(s, x.data(), dy.data(), dx.data());
    check_gradient(std::string("max_pool2d ") + c.name, x, dx, dy,
                   [&](Vec &y) { max_pool2d_forward(s, x.data(), y.data()); });
  }
}

TEST(MaxPool, TiesGoToFirstElementAndOverlapsAccumulate) {
  // 1x1x3x3 all equal, 2x2 windows stride 1: each window's first element
  // (row-major) is its top-left corner.
  const Pool2dShape s = make_pool2d_shape(1, 1, 3, 3, 2, 2, 1, 1);
  Vec x(9, 1.0), dy = {1, 10, 100, 1000}, dx(9);
  max_pool2d_backward(s, x.data(), dy.data(), dx.data());
  EXPECT_EQ(dx, (Vec{1, 10, 0, 100, 1000, 0, 0, 0, 0}));
  // Overlapping windows sharing one maximum: gradients add up.
  x = {0, 0, 0, 0, 5, 0, 0, 0, 0};
  max_pool2d_backward(s, x.data(), dy.data(), dx.data());
  EXPECT_EQ(dx, (Vec{0, 0, 0, 0, 1111, 0, 0, 0, 0}));
  // A NaN wins.
  x[8] = std::nan("");
  Vec y(4);
  max_pool2d_forward(s, x.data(), y.data());
  EXPECT_EQ(y[0], 5);
  EXPECT_TRUE(std::isnan(y[3]));
}

// Reference values: PyTorch 1.13 avg_pool2d on x = arange(25).view(1,1,5,5).
TEST(AvgPool, DivisorRulesMatchPyTorch) {
  Vec x(25);
  for (int i = 0; i < 25; ++i)
    x[i] = i;
  struct Want {
    Pool2dShape s;
    bool cip;
    Vec y;
  } wants[] = {
      {make_pool2d_shape(1, 1, 5, 5, 3, 3, 2, 2, 1, 1, true),
       true,
       {1.3333333333333333, 3.0, 2.6666666666666665, 7.0, 12.0, 9.0, 8.0, 13.0,
        9.333333333333334}},
      {make_pool2d_shape(1, 1, 5, 5, 3, 3, 2, 2, 1, 1, true),
       false,
       {3.0, 4.5, 6.0, 10.5, 12.0, 13.5, 18.0, 19.5, 21.0}},
      {make_pool2d_shape(1, 1, 5, 5, 2, 2, 2, 2, 1, 1),
       true,
       {0.0, 0.75, 1.75, 3.75, 9.0, 11.0, 8.75, 19.0, 21.0}},
      {make_pool2d_shape(1, 1, 5, 5, 2, 2, 2, 2, 1, 1),
       false,
       {0.0, 1.5, 3.5, 7.5, 9.0, 11.0, 17.5, 19.0, 21.0}},
  };
  for (const Want &w : wants) {
    Vec y(w.s.oh * w.s.ow);
    ASSERT_EQ(y.size(), w.y.size());
    avg_pool2d_forward(w.s, w.cip, x.data(), y.data());
    for (size_t i = 0; i < y.size(); ++i)
      EXPECT_NEAR(y[i], w.y[i], 1e-14)
          << "cip " << w.cip << " k" << w.s.kh << " i " << i;
  }
}

TEST(AvgPool, BackwardFiniteDifferences) {
  uint64_t seed = 40;
  for (const PoolCase &c : cases())
    for (bool cip : {true, false}) {
      const Pool2dShape &s = c.s;
      Vec x = random_vec(s.n * s.c * s.h * s.w, seed++);
      Vec dy = random_vec(s.n * s.c * s.oh * s.ow, seed++), dx(x.size(), 9.0);
      avg_pool2d_backward(s, cip, dy.data(), dx.data());
      check_gradient(std::string("avg_pool2d ") + c.name +
                         (cip ? " count_include_pad" : " exclude_pad"),
                     x, dx, dy, [&](Vec &y) {
                       avg_pool2d_forward(s, cip, x.data(), y.data());
                     });
    }
}

// The cuda target's backward gathers, per input element, the windows that
// contain it (Pool.h's *_at functions); the cpu's scatters each window. Same
// terms in the same order: the same float bits, ties and NaNs included.
TEST(Pool, PerElementBackwardEqualsPerPlaneBitForBit) {
  uint64_t seed = 40;
  for (const PoolCase &c : cases()) {
    const Pool2dShape &s = c.s;
    const int64_t in = s.n * s.c * s.h * s.w, out = s.n * s.c * s.oh * s.ow;
    // Values from {-2, ..., 2}: many ties; and one NaN.
    Vec r = random_vec(in, seed++, -2.5, 2.5), g = random_vec(out, seed++);
    std::vector<float> x(in), dy(g.begin(), g.end());
    for (int64_t i = 0; i < in; ++i)
      x[i] = std::round(r[i]);
    x[in / 2] = std::nanf("");
    for (int m = 0; m < 3; ++m) {
      std::vector<float> plane(in, 7.0f), element(in, 9.0f);
      for (int64_t i = 0; i < in; ++i) {
        if (m == 0)
          max_pool2d_backward_at(s, x.data(), dy.data(), element.data(), i);
        else
          avg_pool2d_backward_at(s, m == 2, dy.data(), element.data(), i);
      }
      if (m == 0)
        max_pool2d_backward(s, x.data(), dy.data(), plane.data());
      else
        avg_pool2d_backward(s, m == 2, dy.data(), plane.data());
      for (int64_t i = 0; i < in; ++i)
        ASSERT_EQ(float_bits(plane[i]), float_bits(element[i]))
            << c.name << (m == 0 ? " max" : m == 1 ? " avg" : " avg count_include_pad")
            << " at " << i;
    }
  }
}

// 16-bit storage (the cuda target runs max pools on the stored bf16 / fp16
// tensors, T = half::BF16 / F16): the same bits as the f32 kernels on
// widened copies, cast down after. Ties and overlapping windows (whose
// backward sums several terms, rounded once) included.
template <class Half, uint16_t (*down)(float), float (*up)(uint16_t)>
void expectHalfMaxPoolEqualsF32CastDown(uint64_t seed) {
  for (const PoolCase &c : cases()) {
    const Pool2dShape &s = c.s;
    const int64_t in = s.n * s.c * s.h * s.w, out = s.n * s.c * s.oh * s.ow;
    Vec r = random_vec(in, seed++, -2.5, 2.5), g = random_vec(out, seed++);
    std::vector<Half> x(in), dy(out);
    std::vector<float> xf(in), dyf(out);
    for (int64_t i = 0; i < in; ++i) {
      x[i].bits = down(float(i % 3 == 0 ? std::round(r[i]) : r[i]));
      xf[i] = up(x[i].bits);
    }
    for (int64_t o = 0; o < out; ++o) {
      dy[o].bits = down(float(g[o]));
      dyf[o] = up(dy[o].bits);
    }
    std::vector<Half> y(out), dx(in);
    std::vector<float> yf(out), dxf(in);
    for (int64_t o = 0; o < out; ++o) {
      max_pool2d_forward_at(s, x.data(), y.data(), o);
      max_pool2d_forward_at(s, xf.data(), yf.data(), o);
      ASSERT_EQ(y[o].bits, down(yf[o])) << c.name << " forward at " << o;
    }
    for (int64_t i = 0; i < in; ++i) {
      max_pool2d_backward_at(s, x.data(), dy.data(), dx.data(), i);
      max_pool2d_backward_at(s, xf.data(), dyf.data(), dxf.data(), i);
      ASSERT_EQ(dx[i].bits, down(dxf[i])) << c.name << " backward at " << i;
    }
  }
}

TEST(Pool, SixteenBitMaxPoolEqualsF32CastDown) {
  expectHalfMaxPoolEqualsF32CastDown<tcc::rt::half::F16, float_to_f16, f16_to_float>(60);
  expectHalfMaxPoolEqualsF32CastDown<tcc::rt::half::BF16, float_to_bf16, bf16_to_float>(80);
}

TEST(GlobalPool, ForwardAndBackward) {
  const int64_t n = 2, c = 3, hw = 10;
  Vec x = random_distinct(n * c * hw, 5), dy = random_vec(n * c, 6);
  Vec y(n * c), dx(x.size(), 9.0);
  global_avg_pool_forward(n, c, hw, x.data(), y.data());
  for (int64_t p = 0; p < n * c; ++p) {
    double s = 0;
    for (int64_t j = 0; j < hw; ++j)
      s += x[p * hw + j];
    EXPECT_NEAR(y[p], s / hw, 1e-15);
  }
  global_avg_pool_backward(n, c, hw, dy.data(), dx.data());
  check_gradient("global_avg_pool", x, dx, dy, [&](Vec &out) {
    global_avg_pool_forward(n, c, hw, x.data(), out.data());
  });
  global_max_pool_forward(n, c, hw, x.data(), y.data());
  for (int64_t p = 0; p < n * c; ++p)
    EXPECT_EQ(y[p],
              *std::max_element(x.begin() + p * hw, x.begin() + (p + 1) * hw));
  global_max_pool_backward(n, c, hw, x.data(), dy.data(), dx.data());
  check_gradient("global_max_pool", x, dx, dy, [&](Vec &out) {
    global_max_pool_forward(n, c, hw, x.data(), out.data());
  });
  // Ties: the first maximal element gets the gradient.
  Vec t = {1, 3, 2, 3}, g = {5}, dt(4);
  global_max_pool_backward(1, 1, 4, t.data(), g.data(), dt.data());
  EXPECT_EQ(dt, (Vec{0, 5, 0, 0}));
}

} // namespace
