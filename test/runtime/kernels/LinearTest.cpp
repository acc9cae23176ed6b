//===- LinearTest.cpp - linear: definition, gradients ---------------------===//
#include "runtime/kernels/Linear.h"
#include "TestUtil.h"

#include <omp.h>

#include <cstring>

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

struct LinearCase {
  int64_t m, k, n;
};
// Sizes that are and are not multiples of the 4-row blocking.
const LinearCase kCases[] = {{4, 8, 4}, {7, 5, 6}, {1, 3, 2}, {9, 13, 5}};

TEST(Linear, ForwardMatchesDefinition) {
  uint64_t seed = 1;
  for (const LinearCase &c : kCases) {
    Vec x = random_vec(c.m * c.k, seed++), w = random_vec(c.n * c.k, seed++);
    Vec b = random_vec(c.n, seed++);
    for (bool withBias : {false, true}) {
      Vec y(c.m * c.n, 5.0);
      linear_forward(c.m, c.k, c.n, x.data(), w.data(),
                     withBias ? b.data() : nullptr, y.data());
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j) {
          double ref = withBias ? b[j] : 0.0;
          for (int64_t l = 0; l < c.k; ++l)
            ref += x[i * c.k + l] * w[j * c.k + l];
          ASSERT_NEAR(y[i * c.n + j], ref, 1e-12);
        }
    }
  }
}

TEST(Linear, BackwardFiniteDifferences) {
  uint64_t seed = 50;
  for (const LinearCase &c : kCases) {
    Vec x = random_vec(c.m * c.k, seed++), w = random_vec(c.n * c.k, seed++);
    Vec b = random_vec(c.n, seed++), dy = random_vec(c.m * c.n, seed++);
    auto f = [&](Vec &y) {
      linear_forward(c.m, c.k, c.n, x.data(), w.data(), b.data(), y.data());
    };
    Vec dx(x.size(), 9.0), dw(w.size(), 9.0), db(b.size(), 9.0);
    linear_backward_data(c.m, c.k, c.n, dy.data(), w.data(), dx.data());
    linear_backward_weight(c.m, c.k, c.n, dy.data(), x.data(), dw.data());
    linear_backward_bias(c.m, c.n, dy.data(), db.data());
    const std::string tag = "m" + std::to_string(c.m) + " k" +
                            std::to_string(c.k) + " n" + std::to_string(c.n);
    check_gradient("linear dx " + tag, x, dx, dy, f);
    check_gradient("linear dw " + tag, w, dw, dy, f);
    check_gradient("linear db " + tag, b, db, dy, f);
  }
}

TEST(Linear, BiasGradientManyColumns) {
  // More columns than one 64-column block of linear_backward_bias.
  const int64_t m = 3, n = 70;
  Vec dy = random_vec(m * n, 9), db(n);
  linear_backward_bias(m, n, dy.data(), db.data());
  for (int64_t j = 0; j < n; ++j)
    EXPECT_NEAR(db[j], dy[j] + dy[n + j] + dy[2 * n + j], 1e-14);
}

/// Sizes that span several register tiles and k blocks of the GEMM, none a
/// multiple of the tile sizes; and an empty k.
TEST(Linear, LargerShapesMatchDefinition) {
  const LinearCase cases[] = {
      {37, 300, 53}, {130, 17, 9}, {5, 600, 70}, {6, 0, 3}};
  uint64_t seed = 80;
  for (const LinearCase &c : cases) {
    Vec x = random_vec(c.m * c.k, seed++), w = random_vec(c.n * c.k, seed++);
    Vec b = random_vec(c.n, seed++), dy = random_vec(c.m * c.n, seed++);
    Vec y(c.m * c.n, 5.0), dx(c.m * c.k, 5.0), dw(c.n * c.k, 5.0);
    linear_forward(c.m, c.k, c.n, x.data(), w.data(), b.data(), y.data());
    linear_backward_data(c.m, c.k, c.n, dy.data(), w.data(), dx.data());
    linear_backward_weight(c.m, c.k, c.n, dy.data(), x.data(), dw.data());
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double ref = b[j];
        for (int64_t l = 0; l < c.k; ++l)
          ref += x[i * c.k + l] * w[j * c.k + l];
        ASSERT_NEAR(y[i * c.n + j], ref, 1e-11) << "y m" << c.m << " k" << c.k;
      }
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t l = 0; l < c.k; ++l) {
        double ref = 0;
        for (int64_t j = 0; j < c.n; ++j)
          ref += dy[i * c.n + j] * w[j * c.k + l];
        ASSERT_NEAR(dx[i * c.k + l], ref, 1e-11) << "dx m" << c.m;
      }
    for (int64_t j = 0; j < c.n; ++j)
      for (int64_t l = 0; l < c.k; ++l) {
        double ref = 0;
        for (int64_t i = 0; i < c.m; ++i)
          ref += dy[i * c.n + j] * x[i * c.k + l];
        ASSERT_NEAR(dw[j * c.k + l], ref, 1e-11) << "dw m" << c.m;
      }
  }
}

TEST(Linear, ResultsDoNotDependOnThreadCount) {
  const int64_t m = 37, k = 300, n = 53;
  auto floats = [](size_t size, uint64_t seed) {
    const Vec v = random_vec(size, seed);
    return std::vector<float>(v.begin(), v.end());
  };
  const auto x = floats(m * k, 1), w = floats(n * k, 2), b = floats(n, 3);
  const auto dy = floats(m * n, 4);
  auto run = [&](int threads) {
    omp_set_num_threads(threads);
    std::vector<float> out(m * n + m * k + n * k + n);
    float *y = out.data(), *dx = y + m * n, *dw = dx + m * k, *db = dw + n * k;
    linear_forward(m, k, n, x.data(), w.data(), b.data(), y);
    linear_backward_data(m, k, n, dy.data(), w.data(), dx);
    linear_backward_weight(m, k, n, dy.data(), x.data(), dw);
    linear_backward_bias(m, n, dy.data(), db);
    return out;
  };
  const int saved = omp_get_max_threads();
  const std::vector<float> want = run(1);
  for (int threads : {2, 3, 4}) {
    const std::vector<float> got = run(threads);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)),
              0)
        << threads << " threads";
  }
  omp_set_num_threads(saved);
}

} // namespace
