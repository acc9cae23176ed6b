//===- LinearTest.cpp - linear: definition, gradients ---------------------===//
#include "runtime/kernels/Linear.h"
#include "TestUtil.h"

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

} // namespace
