//===- RandomTest.cpp - Philox4x32-10 and dropout -------------------------===//
#include "runtime/kernels/Random.h"
#include "TestUtil.h"
#include "runtime/kernels/Dropout.h"

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

// Random123's kat_vectors, the three "philox4x32 10" lines.
TEST(Random, PhiloxKnownAnswers) {
  using A4 = std::array<uint32_t, 4>;
  using A2 = std::array<uint32_t, 2>;
  EXPECT_EQ(philox4x32_10(A4{0, 0, 0, 0}, A2{0, 0}),
            (A4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10(A4{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          A2{0xffffffff, 0xffffffff}),
            (A4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10(A4{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          A2{0xa4093822, 0x299f31d0}),
            (A4{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Random, CounterLayout) {
  // index -> (block = index/4, word = index%4); seed is the key, stream the
  // counter's high half.
  const uint64_t seed = 0x0123456789abcdefull, stream = 0xfedcba9876543210ull;
  const auto blk = philox4x32_10({5, 0, 0x76543210u, 0xfedcba98u},
                                 {0x89abcdefu, 0x01234567u});
  for (int j = 0; j < 4; ++j)
    EXPECT_EQ(random_u32(seed, stream, 20 + j), blk[j]);
  EXPECT_EQ(random_uniform(seed, stream, 22), float(blk[2] >> 8) * 0x1p-24f);
}

TEST(Random, UniformIsUniformAndStreamsDiffer) {
  const int64_t n = 100000;
  std::vector<float> u(n), v(n);
  uniform_fill(n, 42, 0, 0.0, 1.0, u.data());
  uniform_fill(n, 42, 1, 0.0, 1.0, v.data());
  double mean = 0, var = 0;
  int64_t same = 0, bins[10] = {};
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_GE(u[i], 0.0f);
    ASSERT_LT(u[i], 1.0f);
    ASSERT_EQ(u[i], random_uniform(42, 0, i));
    mean += u[i];
    var += (u[i] - 0.5) * (u[i] - 0.5);
    same += u[i] == v[i];
    ++bins[int(u[i] * 10)];
  }
  mean /= n;
  var /= n;
  EXPECT_NEAR(mean, 0.5, 0.005);
  EXPECT_NEAR(var, 1.0 / 12, 0.002);
  EXPECT_LT(same, 10);
  for (int64_t b : bins)
    EXPECT_NEAR(double(b), n / 10.0, 600.0);
}

TEST(Dropout, MaskRateScaleAndDeterminism) {
  const int64_t n = 50001; // not a multiple of 4
  const double p = 0.3;
  Vec x(n, 2.0), y(n), y2(n);
  dropout_forward(n, p, 7, 3, x.data(), y.data());
  dropout_forward(n, p, 7, 3, x.data(), y2.data());
  EXPECT_EQ(y, y2);
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    const bool keep = dropout_keep(p, 7, 3, i);
    ASSERT_EQ(y[i], keep ? 2.0 / 0.7 : 0.0) << i;
    kept += keep;
  }
  EXPECT_NEAR(double(kept) / n, 0.7, 0.01);
  // A different stream gives a different mask.
  dropout_forward(n, p, 7, 4, x.data(), y2.data());
  EXPECT_NE(y, y2);
  // p = 0: identity; p = 1: zeros.
  dropout_forward(n, 0.0, 7, 3, x.data(), y2.data());
  EXPECT_EQ(y2, x);
  dropout_forward(n, 1.0, 7, 3, x.data(), y2.data());
  EXPECT_EQ(y2, Vec(n, 0.0));
}

TEST(Dropout, BackwardFiniteDifferences) {
  const int64_t n = 37;
  Vec x = random_vec(n, 1), dy = random_vec(n, 2), dx(n, 9.0);
  dropout_backward(n, 0.4, 11, 5, dy.data(), dx.data());
  check_gradient("dropout", x, dx, dy, [&](Vec &out) {
    dropout_forward(n, 0.4, 11, 5, x.data(), out.data());
  });
  int64_t zeros = 0;
  for (double v : dx)
    zeros += v == 0.0;
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, n);
}

} // namespace
