//===- EmbeddingTest.cpp - embedding gather and scatter-add ---------------===//
//
// Against a naive double reference (rows copied; the gradient summed over
// the positions of each id, the padding row left at zero), and the float
// backward bit for bit on 1 to 4 threads (its sums cross positions that
// different threads would reach first in a naive parallel scatter).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Embedding.h"
#include "TestUtil.h"

#include <omp.h>

#include <cstring>
#include <random>

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

/// n ids in [0, rows), as the batch holds them (f32), with many repeats.
std::vector<float> randomIds(int64_t n, int64_t rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> id(0, rows - 1);
  std::vector<float> ids(n);
  for (float &x : ids)
    x = float(id(rng));
  return ids;
}

TEST(Embedding, MatchesNaiveReference) {
  const int64_t n = 40, rows = 7, d = 5, padding = 3;
  const std::vector<float> idsF = randomIds(n, rows, 1);
  const std::vector<double> ids(idsF.begin(), idsF.end());
  const Vec w = random_vec(rows * d, 2), dout = random_vec(n * d, 3);
  Vec out(n * d), dw(rows * d, -1.0);
  embedding_forward<double, double>(n, rows, d, ids.data(), w.data(), out.data());
  embedding_backward<double, double>(n, rows, d, padding, dout.data(), ids.data(), dw.data());
  Vec want(rows * d, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = int64_t(ids[i]);
    for (int64_t j = 0; j < d; ++j) {
      EXPECT_EQ(out[i * d + j], w[v * d + j]) << i << ", " << j;
      if (v != padding)
        want[v * d + j] += dout[i * d + j];
    }
  }
  bool sawPadding = false;
  for (double x : ids)
    sawPadding |= int64_t(x) == padding;
  ASSERT_TRUE(sawPadding) << "the ids must reach the padding row";
  for (int64_t k = 0; k < rows * d; ++k)
    EXPECT_NEAR(dw[k], want[k], 1e-12) << "row " << k / d;
}

TEST(Embedding, IdsOutOfRangeReadRowZero) {
  const double ids[] = {-1, 4, 1};
  const double w[] = {10, 20, 30, 40};
  double out[3], dw[4];
  const double dout[] = {1, 2, 3};
  embedding_forward<double, double>(3, 4, 1, ids, w, out);
  EXPECT_EQ(out[0], 10);
  EXPECT_EQ(out[1], 10);
  EXPECT_EQ(out[2], 20);
  embedding_backward<double, double>(3, 4, 1, -1, dout, ids, dw);
  EXPECT_EQ(dw[0], 3);
  EXPECT_EQ(dw[1], 3);
  EXPECT_EQ(dw[2], 0);
}

TEST(Embedding, BackwardDoesNotDependOnThreadCount) {
  // Few rows, many positions: each row sums hundreds of terms.
  const int64_t n = 4096, rows = 11, d = 24;
  const std::vector<float> ids = randomIds(n, rows, 4);
  const Vec doutD = random_vec(n * d, 5);
  const std::vector<float> dout(doutD.begin(), doutD.end());
  auto run = [&] {
    std::vector<float> dw(rows * d);
    embedding_backward<float, float>(n, rows, d, 2, dout.data(), ids.data(), dw.data());
    return dw;
  };
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<float> want = run();
  for (int threads : {2, 3, 4}) {
    omp_set_num_threads(threads);
    const std::vector<float> got = run();
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << threads << " threads";
  }
  omp_set_num_threads(saved);
}

} // namespace
