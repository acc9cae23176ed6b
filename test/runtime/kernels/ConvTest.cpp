//===- ConvTest.cpp - conv2d: definition, dirac, gradients ----------------===//
#include "runtime/kernels/Conv.h"
#include "TestUtil.h"

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

/// y straight from the definition (zero padding by bounds checks).
Vec conv_reference(const Conv2dShape &s, const Vec &x, const Vec &w,
                   const double *bias) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  Vec y(s.n * s.o * s.oh * s.ow);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oc = 0; oc < s.o; ++oc)
      for (int64_t oy = 0; oy < s.oh; ++oy)
        for (int64_t ox = 0; ox < s.ow; ++ox) {
          double acc = bias ? bias[oc] : 0.0;
          for (int64_t ci = 0; ci < cpg; ++ci)
            for (int64_t ki = 0; ki < s.kh; ++ki)
              for (int64_t kj = 0; kj < s.kw; ++kj) {
                const int64_t iy = oy * s.sh - s.ph + ki * s.dh;
                const int64_t ix = ox * s.sw - s.pw + kj * s.dw;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
                  continue;
                const int64_t c = (oc / opg) * cpg + ci;
                acc += w[((oc * cpg + ci) * s.kh + ki) * s.kw + kj] *
                       x[((n * s.c + c) * s.h + iy) * s.w + ix];
              }
          y[((n * s.o + oc) * s.oh + oy) * s.ow + ox] = acc;
        }
  return y;
}

struct ConvCase {
  const char *name;
  Conv2dShape s;
};

std::vector<ConvCase> cases() {
  return {
      {"3x3 pad1", make_conv2d_shape(2, 3, 6, 5, 4, 3, 3, 1, 1, 1, 1)},
      {"stride2 pad1", make_conv2d_shape(2, 2, 7, 6, 3, 3, 3, 2, 2, 1, 1)},
      {"asym stride/pad", make_conv2d_shape(1, 2, 7, 8, 3, 3, 2, 2, 3, 2, 0)},
      {"dilation2", make_conv2d_shape(2, 2, 8, 7, 2, 3, 3, 1, 1, 2, 1, 2, 2)},
      {"groups2", make_conv2d_shape(2, 4, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2)},
      {"depthwise s2",
       make_conv2d_shape(1, 3, 6, 6, 3, 3, 3, 2, 2, 1, 1, 1, 1, 3)},
      {"1x1 stride2", make_conv2d_shape(2, 3, 5, 5, 2, 1, 1, 2, 2, 0, 0)},
      {"2x2 s2 (patch)", make_conv2d_shape(1, 3, 6, 6, 4, 2, 2, 2, 2, 0, 0)},
      {"big pad", make_conv2d_shape(1, 1, 3, 4, 2, 3, 3, 1, 2, 2, 3)},
  };
}

TEST(Conv, OutputSize) {
  EXPECT_EQ(conv_out_size(32, 3, 1, 1, 1), 32);
  EXPECT_EQ(conv_out_size(32, 3, 2, 1, 1), 16);
  EXPECT_EQ(conv_out_size(7, 3, 2, 0, 1), 3);
  EXPECT_EQ(conv_out_size(8, 3, 1, 1, 2), 6);
}

TEST(Conv, ForwardMatchesDefinition) {
  uint64_t seed = 1;
  for (const ConvCase &c : cases()) {
    const Conv2dShape &s = c.s;
    Vec x = random_vec(s.n * s.c * s.h * s.w, seed++);
    Vec w = random_vec(s.o * (s.c / s.groups) * s.kh * s.kw, seed++);
    Vec b = random_vec(s.o, seed++);
    for (bool withBias : {false, true}) {
      Vec y(s.n * s.o * s.oh * s.ow, 123.0);
      conv2d_forward(s, x.data(), w.data(), withBias ? b.data() : nullptr,
                     y.data());
      Vec ref = conv_reference(s, x, w, withBias ? b.data() : nullptr);
      for (size_t i = 0; i < y.size(); ++i)
        ASSERT_NEAR(y[i], ref[i], 1e-12) << c.name << " element " << i;
    }
  }
}

TEST(Conv, DiracKernelIsIdentity) {
  // 3x3 kernel with a single 1 at the centre, pad 1, per-group channel map.
  for (int64_t groups : {1, 2, 4}) {
    Conv2dShape s =
        make_conv2d_shape(2, 4, 5, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, groups);
    const int64_t cpg = 4 / groups;
    Vec w(4 * cpg * 9, 0.0);
    for (int64_t oc = 0; oc < 4; ++oc)
      w[(oc * cpg + oc % cpg) * 9 + 4] = 1.0;
    Vec x = random_vec(2 * 4 * 5 * 6, 7), y(x.size());
    conv2d_forward(s, x.data(), w.data(), (const double *)nullptr, y.data());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(y[i], x[i]) << "groups " << groups;
  }
}

TEST(Conv, BackwardDataFiniteDifferences) {
  uint64_t seed = 100;
  for (const ConvCase &c : cases()) {
    const Conv2dShape &s = c.s;
    Vec x = random_vec(s.n * s.c * s.h * s.w, seed++);
    Vec w = random_vec(s.o * (s.c / s.groups) * s.kh * s.kw, seed++);
    Vec b = random_vec(s.o, seed++);
    Vec dy = random_vec(s.n * s.o * s.oh * s.ow, seed++);
    Vec dx(x.size(), 99.0);
    conv2d_backward_data(s, dy.data(), w.data(), dx.data());
    check_gradient(std::string("conv dx ") + c.name, x, dx, dy, [&](Vec &y) {
      conv2d_forward(s, x.data(), w.data(), b.data(), y.data());
    });
  }
}

TEST(Conv, BackwardFilterFiniteDifferences) {
  uint64_t seed = 200;
  for (const ConvCase &c : cases()) {
    const Conv2dShape &s = c.s;
    Vec x = random_vec(s.n * s.c * s.h * s.w, seed++);
    Vec w = random_vec(s.o * (s.c / s.groups) * s.kh * s.kw, seed++);
    Vec dy = random_vec(s.n * s.o * s.oh * s.ow, seed++);
    Vec dw(w.size(), 99.0);
    conv2d_backward_filter(s, x.data(), dy.data(), dw.data());
    check_gradient(std::string("conv dw ") + c.name, w, dw, dy, [&](Vec &y) {
      conv2d_forward(s, x.data(), w.data(), (const double *)nullptr, y.data());
    });
  }
}

TEST(Conv, BackwardBiasFiniteDifferences) {
  uint64_t seed = 300;
  for (const ConvCase &c : cases()) {
    const Conv2dShape &s = c.s;
    Vec x = random_vec(s.n * s.c * s.h * s.w, seed++);
    Vec w = random_vec(s.o * (s.c / s.groups) * s.kh * s.kw, seed++);
    Vec b = random_vec(s.o, seed++);
    Vec dy = random_vec(s.n * s.o * s.oh * s.ow, seed++);
    Vec db(b.size(), 99.0);
    conv2d_backward_bias(s, dy.data(), db.data());
    check_gradient(std::string("conv db ") + c.name, b, db, dy, [&](Vec &y) {
      conv2d_forward(s, x.data(), w.data(), b.data(), y.data());
    });
  }
}

} // namespace
