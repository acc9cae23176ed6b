//===- ConvTest.cpp - conv2d: definition, dirac, gradients ----------------===//
#include "runtime/kernels/Conv.h"
#include "TestUtil.h"

#include <omp.h>

#include <cstring>

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

/// dx straight from the definition: the adjoint of conv_reference.
Vec conv_backward_data_reference(const Conv2dShape &s, const Vec &dy,
                                 const Vec &w) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  Vec dx(s.n * s.c * s.h * s.w, 0.0);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oc = 0; oc < s.o; ++oc)
      for (int64_t oy = 0; oy < s.oh; ++oy)
        for (int64_t ox = 0; ox < s.ow; ++ox)
          for (int64_t ci = 0; ci < cpg; ++ci)
            for (int64_t ki = 0; ki < s.kh; ++ki)
              for (int64_t kj = 0; kj < s.kw; ++kj) {
                const int64_t iy = oy * s.sh - s.ph + ki * s.dh;
                const int64_t ix = ox * s.sw - s.pw + kj * s.dw;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
                  continue;
                const int64_t c = (oc / opg) * cpg + ci;
                dx[((n * s.c + c) * s.h + iy) * s.w + ix] +=
                    w[((oc * cpg + ci) * s.kh + ki) * s.kw + kj] *
                    dy[((n * s.o + oc) * s.oh + oy) * s.ow + ox];
              }
  return dx;
}

/// dweight straight from the definition.
Vec conv_backward_filter_reference(const Conv2dShape &s, const Vec &x,
                                   const Vec &dy) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  Vec dw(s.o * cpg * s.kh * s.kw, 0.0);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oc = 0; oc < s.o; ++oc)
      for (int64_t oy = 0; oy < s.oh; ++oy)
        for (int64_t ox = 0; ox < s.ow; ++ox)
          for (int64_t ci = 0; ci < cpg; ++ci)
            for (int64_t ki = 0; ki < s.kh; ++ki)
              for (int64_t kj = 0; kj < s.kw; ++kj) {
                const int64_t iy = oy * s.sh - s.ph + ki * s.dh;
                const int64_t ix = ox * s.sw - s.pw + kj * s.dw;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
                  continue;
                const int64_t c = (oc / opg) * cpg + ci;
                dw[((oc * cpg + ci) * s.kh + ki) * s.kw + kj] +=
                    x[((n * s.c + c) * s.h + iy) * s.w + ix] *
                    dy[((n * s.o + oc) * s.oh + oy) * s.ow + ox];
              }
  return dw;
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

/// Shapes that are awkward for the GEMM paths: channel counts that are not
/// multiples of the register tiles, groups, strides, dilations, big padding,
/// more samples than filter-gradient chunks, more positions than one column
/// block, more output channels than one filter work item, long k; with few
/// and with enough input channels per group for the flipped-kernel
/// backward_data of Padded.
std::vector<ConvCase> odd_cases() {
  return {
      {"odd channels", make_conv2d_shape(3, 5, 9, 11, 7, 3, 3, 1, 1, 1, 1)},
      {"groups3 stride2",
       make_conv2d_shape(2, 6, 11, 10, 9, 3, 3, 2, 2, 1, 1, 1, 1, 3)},
      {"dilation2 pad2",
       make_conv2d_shape(2, 3, 10, 9, 5, 3, 3, 1, 1, 2, 2, 2, 2)},
      {"5x3 dil 1x2",
       make_conv2d_shape(2, 4, 12, 9, 6, 5, 3, 1, 1, 2, 0, 1, 2)},
      {"stride 3x2 dil 2x1",
       make_conv2d_shape(1, 3, 13, 12, 4, 3, 2, 3, 2, 1, 2, 2, 1)},
      {"depthwise x2",
       make_conv2d_shape(2, 4, 7, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4)},
      {"depthwise",
       make_conv2d_shape(2, 4, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4)},
      {"1x1", make_conv2d_shape(3, 10, 5, 6, 17, 1, 1)},
      {"pad > kernel", make_conv2d_shape(1, 2, 4, 5, 3, 3, 3, 1, 1, 3, 4)},
      {"kernel > input", make_conv2d_shape(2, 3, 2, 3, 4, 5, 5, 1, 1, 2, 2)},
      {"37 samples", make_conv2d_shape(37, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1)},
      {"70x70", make_conv2d_shape(1, 2, 70, 70, 3, 3, 3, 1, 1, 1, 1)},
      {"131x129 stride2",
       make_conv2d_shape(1, 2, 131, 129, 3, 3, 3, 2, 2, 1, 1)},
      {"130 channels", make_conv2d_shape(2, 3, 4, 4, 130, 3, 3, 1, 1, 1, 1)},
      {"k 360", make_conv2d_shape(2, 40, 6, 6, 5, 3, 3, 1, 1, 1, 1)},
      {"groups2 dilation 2x1 pad 1x2",
       make_conv2d_shape(2, 8, 9, 10, 6, 3, 3, 1, 1, 1, 2, 2, 1, 2)},
  };
}

/// Every algorithm that can compute the shape.
std::vector<detail::ConvAlgo> algos_for(const Conv2dShape &s) {
  std::vector<detail::ConvAlgo> algos{detail::ConvAlgo::Direct,
                                      detail::ConvAlgo::Im2col};
  if (s.sh == 1 && s.sw == 1)
    algos.push_back(detail::ConvAlgo::Padded);
  return algos;
}

const char *algo_name(detail::ConvAlgo a) {
  switch (a) {
  case detail::ConvAlgo::Direct:
    return "direct";
  case detail::ConvAlgo::Padded:
    return "padded";
  case detail::ConvAlgo::Im2col:
    return "im2col";
  }
  return "?";
}

void expect_near_all(const Vec &got, const Vec &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-11) << what << " element " << i;
}

TEST(Conv, AlgorithmsMatchDefinition) {
  uint64_t seed = 400;
  for (const ConvCase &c : odd_cases()) {
    const Conv2dShape &s = c.s;
    Vec x = random_vec(s.n * s.c * s.h * s.w, seed++);
    Vec w = random_vec(s.o * (s.c / s.groups) * s.kh * s.kw, seed++);
    Vec b = random_vec(s.o, seed++);
    Vec dy = random_vec(s.n * s.o * s.oh * s.ow, seed++);
    const Vec y = conv_reference(s, x, w, b.data());
    const Vec dx = conv_backward_data_reference(s, dy, w);
    const Vec dw = conv_backward_filter_reference(s, x, dy);
    for (detail::ConvAlgo algo : algos_for(s)) {
      const std::string tag = std::string(c.name) + " " + algo_name(algo);
      Vec got(y.size(), 77.0);
      detail::conv2d_forward_with(algo, s, x.data(), w.data(), b.data(),
                                  got.data());
      expect_near_all(got, y, tag + " forward");
      got.assign(dx.size(), 77.0);
      detail::conv2d_backward_data_with(algo, s, dy.data(), w.data(),
                                        got.data());
      expect_near_all(got, dx, tag + " backward_data");
      got.assign(dw.size(), 77.0);
      detail::conv2d_backward_filter_with(algo, s, x.data(), dy.data(),
                                          got.data());
      expect_near_all(got, dw, tag + " backward_filter");
    }
  }
}

/// Runs f with 1, 2, 3 and 4 OpenMP threads; every run must produce the bits
/// of the first.
void expect_thread_count_independent(
    const std::string &what, const std::function<std::vector<float>()> &f) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<float> want = f();
  for (int threads : {2, 3, 4}) {
    omp_set_num_threads(threads);
    const std::vector<float> got = f();
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)),
              0)
        << what << " differs with " << threads << " threads";
  }
  omp_set_num_threads(saved);
}

std::vector<float> random_floats(size_t n, uint64_t seed) {
  const Vec v = random_vec(n, seed);
  return std::vector<float>(v.begin(), v.end());
}

TEST(Conv, ResultsDoNotDependOnThreadCount) {
  const Conv2dShape shapes[] = {
      make_conv2d_shape(37, 8, 9, 8, 10, 3, 3, 1, 1, 1, 1, 1, 1, 2),
      make_conv2d_shape(19, 5, 11, 10, 7, 3, 3, 2, 2, 1, 1),
      make_conv2d_shape(5, 3, 6, 6, 130, 3, 3, 1, 1, 1, 1),
      make_conv2d_shape(6, 4, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4),
  };
  uint64_t seed = 500;
  for (const Conv2dShape &s : shapes) {
    const auto x = random_floats(s.n * s.c * s.h * s.w, seed++);
    const auto w = random_floats(s.o * (s.c / s.groups) * s.kh * s.kw, seed++);
    const auto b = random_floats(s.o, seed++);
    const auto dy = random_floats(s.n * s.o * s.oh * s.ow, seed++);
    std::vector<detail::ConvAlgo> algos = algos_for(s);
    for (detail::ConvAlgo algo : algos) {
      const std::string tag = std::string(algo_name(algo)) + " n" +
                              std::to_string(s.n) + " o" + std::to_string(s.o);
      expect_thread_count_independent(tag + " forward", [&] {
        std::vector<float> y(dy.size());
        detail::conv2d_forward_with(algo, s, x.data(), w.data(), b.data(),
                                    y.data());
        return y;
      });
      expect_thread_count_independent(tag + " backward_data", [&] {
        std::vector<float> dx(x.size());
        detail::conv2d_backward_data_with(algo, s, dy.data(), w.data(),
                                          dx.data());
        return dx;
      });
      expect_thread_count_independent(tag + " backward_filter", [&] {
        std::vector<float> dw(w.size());
        detail::conv2d_backward_filter_with(algo, s, x.data(), dy.data(),
                                            dw.data());
        return dw;
      });
    }
    expect_thread_count_independent("conv2d_backward_bias", [&] {
      std::vector<float> db(s.o);
      conv2d_backward_bias(s, dy.data(), db.data());
      return db;
    });
  }
}

} // namespace
