//===- NormTest.cpp - Batch norm (ghost) and layer norm -------------------===//
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Norm.h"
#include "TestUtil.h"

#include <cstring>

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

struct BnCase {
  const char *name;
  BatchNormShape s;
  bool weight, bias;
};
const BnCase kBnCases[] = {
    {"[n,C] whole batch", {6, 3, 1, 0}, true, true},
    {"[n,C,HW] whole batch", {4, 2, 5, 4}, true, true},
    {"ghost 2 groups", {6, 3, 4, 3}, true, true},
    {"ghost 3 groups [n,C]", {6, 2, 1, 2}, true, false},
    {"ghost no affine", {4, 2, 3, 2}, false, false},
    {"ghost strided 3 groups", {6, 3, 4, 2, true}, true, true},
};

TEST(BatchNorm, OutputIsNormalizedPerGroupAndChannel) {
  const BatchNormShape s{8, 3, 5, 4}; // two ghost batches of 4
  Vec x = random_vec(8 * 3 * 5, 1, -2.0, 3.0), y(x.size());
  Vec mean(2 * 3), invstd(2 * 3);
  batch_norm_forward_train(s, x.data(), (const double *)nullptr,
                           (const double *)nullptr, 1e-5, 0.1, y.data(),
                           mean.data(), invstd.data(), (double *)nullptr,
                           (double *)nullptr);
  for (int64_t g = 0; g < 2; ++g)
    for (int64_t c = 0; c < 3; ++c) {
      double m = 0, v = 0, xm = 0;
      for (int64_t i = g * 4; i < g * 4 + 4; ++i)
        for (int64_t j = 0; j < 5; ++j) {
          m += y[(i * 3 + c) * 5 + j];
          xm += x[(i * 3 + c) * 5 + j];
        }
      m /= 20;
      xm /= 20;
      double xv = 0;
      for (int64_t i = g * 4; i < g * 4 + 4; ++i)
        for (int64_t j = 0; j < 5; ++j) {
          v += std::pow(y[(i * 3 + c) * 5 + j] - m, 2);
          xv += std::pow(x[(i * 3 + c) * 5 + j] - xm, 2);
        }
      v /= 20;
      xv /= 20;
      EXPECT_NEAR(m, 0.0, 1e-12);
      EXPECT_NEAR(v, xv / (xv + 1e-5), 1e-12); // unit variance up to eps
      EXPECT_NEAR(mean[g * 3 + c], xm, 1e-12);
      EXPECT_NEAR(invstd[g * 3 + c], 1.0 / std::sqrt(xv + 1e-5), 1e-9);
    }
}

TEST(BatchNorm, AffineAndRunningStats) {
  // x [8, 3], two ghost batches of 4; values match PyTorch 1.13 (two
  // F.batch_norm calls on the halves, running stats averaged).
  Vec x(8 * 3);
  for (int i = 0; i < 8; ++i)
    for (int c = 0; c < 3; ++c)
      x[i * 3 + c] = std::cos(0.37 * i + 0.11 * c) * (1 + c);
  Vec rm = {0.1, 0.2, 0.3}, rv = {1.0, 2.0, 0.5};
  const Vec rm0 = rm, rv0 = rv;
  Vec w = {1.5, -0.5, 2.0}, b = {0.1, 0.2, -0.3};
  Vec y(x.size()), mean(6), invstd(6);
  const BatchNormShape s{8, 3, 1, 4};
  batch_norm_forward_train(s, x.data(), w.data(), b.data(), 1e-5, 0.1, y.data(),
                           mean.data(), invstd.data(), rm.data(), rv.data());
  const double torchMean[3] = {0.1084286943271579, 0.20233773732077162,
                               0.2813221076921338};
  const double torchVar[3] = {0.9114575741589334, 1.8461736334969823,
                              0.5542879439175656};
  for (int c = 0; c < 3; ++c) {
    // Hand formula: mean over groups of the batch means / unbiased variances.
    double mSum = 0, vSum = 0;
    for (int g = 0; g < 2; ++g) {
      double m = 0, v = 0;
      for (int i = g * 4; i < g * 4 + 4; ++i)
        m += x[i * 3 + c] / 4;
      for (int i = g * 4; i < g * 4 + 4; ++i)
        v += std::pow(x[i * 3 + c] - m, 2);
      mSum += m;
      vSum += v / 3; // unbiased: count - 1
      for (int i = g * 4; i < g * 4 + 4; ++i)
        EXPECT_NEAR(y[i * 3 + c],
                    (x[i * 3 + c] - m) / std::sqrt(v / 4 + 1e-5) * w[c] + b[c],
                    1e-12);
    }
    EXPECT_NEAR(rm[c], 0.9 * rm0[c] + 0.1 * mSum / 2, 1e-15);
    EXPECT_NEAR(rv[c], 0.9 * rv0[c] + 0.1 * vSum / 2, 1e-15);
    EXPECT_NEAR(rm[c], torchMean[c], 1e-15);
    EXPECT_NEAR(rv[c], torchVar[c], 1e-15);
  }
}

TEST(BatchNorm, StridedGroupsAreConsecutiveGroupsOfThePermutedBatch) {
  // Strided ghost batches of 3 in a batch of 6 (groups {0, 2, 4} and
  // {1, 3, 5}, myrtle.ai's split i mod 2) give, sample for sample, what
  // consecutive ghost batches give on the batch reordered 0, 2, 4, 1, 3, 5.
  const int64_t n = 6, c = 2, hw = 3, per = c * hw;
  const BatchNormShape strided{n, c, hw, 3, true}, consecutive{n, c, hw, 3};
  const int64_t order[n] = {0, 2, 4, 1, 3, 5};
  Vec x = random_vec(n * per, 7, -1.0, 2.0), xp(x.size());
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(&xp[i * per], &x[order[i] * per], per * sizeof(double));
  Vec w = {1.5, -0.5}, b = {0.1, 0.2};
  Vec y(x.size()), yp(x.size()), m(4), is(4), mp(4), isp(4);
  Vec rm = {0.1, 0.2}, rv = {1.0, 2.0}, rmp = rm, rvp = rv;
  batch_norm_forward_train(strided, x.data(), w.data(), b.data(), 1e-5, 0.1, y.data(), m.data(),
                           is.data(), rm.data(), rv.data());
  batch_norm_forward_train(consecutive, xp.data(), w.data(), b.data(), 1e-5, 0.1, yp.data(),
                           mp.data(), isp.data(), rmp.data(), rvp.data());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < per; ++k)
      EXPECT_EQ(y[order[i] * per + k], yp[i * per + k]);
  EXPECT_EQ(m, mp);
  EXPECT_EQ(is, isp);
  EXPECT_EQ(rm, rmp);
  EXPECT_EQ(rv, rvp);
  // The backward, the same way.
  Vec dy = random_vec(n * per, 8, -1.0, 1.0), dyp(dy.size());
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(&dyp[i * per], &dy[order[i] * per], per * sizeof(double));
  Vec dx(x.size()), dxp(x.size()), dw(2), dwp(2), db(2), dbp(2);
  batch_norm_backward(strided, dy.data(), x.data(), w.data(), m.data(), is.data(), dx.data(),
                      dw.data(), db.data());
  batch_norm_backward(consecutive, dyp.data(), xp.data(), w.data(), mp.data(), isp.data(),
                      dxp.data(), dwp.data(), dbp.data());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < per; ++k)
      EXPECT_EQ(dx[order[i] * per + k], dxp[i * per + k]);
  EXPECT_EQ(dw, dwp);
  EXPECT_EQ(db, dbp);
}

TEST(BatchNorm, Inference) {
  const BatchNormShape s{2, 3, 4};
  Vec x = random_vec(24, 3), y(24);
  Vec rm = {0.1, -0.2, 0.3}, rv = {1.0, 0.5, 2.0}, w = {1, 2, 3},
      b = {0, 1, -1};
  batch_norm_forward_inference(s, x.data(), w.data(), b.data(), rm.data(),
                               rv.data(), 1e-3, y.data());
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 3; ++c)
      for (int j = 0; j < 4; ++j) {
        const int k = (i * 3 + c) * 4 + j;
        EXPECT_NEAR(y[k],
                    (x[k] - rm[c]) / std::sqrt(rv[c] + 1e-3) * w[c] + b[c],
                    1e-12);
      }
}

TEST(BatchNorm, BackwardFiniteDifferences) {
  uint64_t seed = 10;
  for (const BnCase &c : kBnCases) {
    const BatchNormShape &s = c.s;
    const int64_t size = s.n * s.c * s.hw, stats = s.num_groups() * s.c;
    Vec x = random_vec(size, seed++, -1.0, 2.0), dy = random_vec(size, seed++);
    Vec w = random_vec(s.c, seed++, 0.5, 1.5), b = random_vec(s.c, seed++);
    const double *wp = c.weight ? w.data() : nullptr;
    const double *bp = c.bias ? b.data() : nullptr;
    Vec y(size), mean(stats), invstd(stats);
    auto f = [&](Vec &out) {
      Vec m(stats), is(stats);
      batch_norm_forward_train(s, x.data(), c.weight ? w.data() : nullptr,
                               c.bias ? b.data() : nullptr, 1e-5, 0.1,
                               out.data(), m.data(), is.data(),
                               (double *)nullptr, (double *)nullptr);
    };
    batch_norm_forward_train(s, x.data(), wp, bp, 1e-5, 0.1, y.data(),
                             mean.data(), invstd.data(), (double *)nullptr,
                             (double *)nullptr);
    Vec dx(size, 9.0), dw(s.c, 9.0), db(s.c, 9.0);
    batch_norm_backward(s, dy.data(), x.data(), wp, mean.data(), invstd.data(),
                        dx.data(), dw.data(), db.data());
    check_gradient(std::string("bn dx ") + c.name, x, dx, dy, f);
    if (c.weight)
      check_gradient(std::string("bn dweight ") + c.name, w, dw, dy, f);
    if (c.bias)
      check_gradient(std::string("bn dbias ") + c.name, b, db, dy, f);
  }
}

TEST(BatchNorm, BackwardOptionalOutputs) {
  const BatchNormShape s{4, 2, 3, 2};
  Vec x = random_vec(24, 1), dy = random_vec(24, 2), w = {1.5, 0.5};
  Vec y(24), mean(4), invstd(4);
  batch_norm_forward_train(s, x.data(), w.data(), (const double *)nullptr, 1e-5,
                           0.1, y.data(), mean.data(), invstd.data(),
                           (double *)nullptr, (double *)nullptr);
  Vec dxAll(24), dwAll(2), dbAll(2), dxOnly(24), dwOnly(2);
  batch_norm_backward(s, dy.data(), x.data(), w.data(), mean.data(),
                      invstd.data(), dxAll.data(), dwAll.data(), dbAll.data());
  batch_norm_backward(s, dy.data(), x.data(), w.data(), mean.data(),
                      invstd.data(), dxOnly.data(), (double *)nullptr,
                      (double *)nullptr);
  batch_norm_backward(s, dy.data(), x.data(), w.data(), mean.data(),
                      invstd.data(), (double *)nullptr, dwOnly.data(),
                      (double *)nullptr);
  EXPECT_EQ(dxAll, dxOnly);
  EXPECT_EQ(dwAll, dwOnly);
}

// dx stored in 16 bits (a norm_backward_prologue that takes the cast
// narrowing it): each element the f32 dx rounded as the cast rounds it, and
// the same parameter gradients.
TEST(BatchNorm, NarrowedDxIsTheF32DxRounded) {
  const BatchNormShape s{6, 3, 4, 3};
  const int64_t size = s.n * s.c * s.hw, stats = s.num_groups() * s.c;
  std::vector<float> x(size), dy(size), w = {1.5f, 0.5f, -2.0f}, b = {0.0f, 1.0f, 2.0f};
  const Vec xd = random_vec(size, 3, -1.0, 2.0), dyd = random_vec(size, 4);
  std::copy(xd.begin(), xd.end(), x.begin());
  std::copy(dyd.begin(), dyd.end(), dy.begin());
  std::vector<float> y(size), mean(stats), invstd(stats);
  batch_norm_forward_train(s, x.data(), w.data(), b.data(), 1e-5, 0.1, y.data(), mean.data(),
                           invstd.data(), (float *)nullptr, (float *)nullptr);
  auto dyAt = [&](int64_t k, int64_t) { return dy[k]; };
  std::vector<float> dx(size), dw(s.c), db(s.c), dwNarrow(s.c), dbNarrow(s.c);
  std::vector<tcc::rt::half::F16> dxNarrow(size);
  batch_norm_backward_with(s, dyAt, x.data(), w.data(), mean.data(), invstd.data(), dx.data(),
                           dw.data(), db.data());
  batch_norm_backward_with(s, dyAt, x.data(), w.data(), mean.data(), invstd.data(),
                           dxNarrow.data(), dwNarrow.data(), dbNarrow.data());
  for (int64_t k = 0; k < size; ++k)
    ASSERT_EQ(dxNarrow[k].bits, float_to_f16(dx[k])) << "dx[" << k << "]";
  EXPECT_EQ(dw, dwNarrow);
  EXPECT_EQ(db, dbNarrow);
}

// batch_norm_apply (tcc-recompute) computes the training forward's output
// again from the statistics it saved: equal bit for bit, in float as the
// trainer runs it, for every case (ghost batches, no affine), whole and one
// element at a time (batch_norm_apply_at, a backward prologue's form).
TEST(BatchNorm, ApplyRecomputesTheTrainingOutputExactly) {
  uint64_t seed = 31;
  for (const BnCase &c : kBnCases) {
    SCOPED_TRACE(c.name);
    const BatchNormShape &s = c.s;
    const size_t size = s.n * s.c * s.hw, stats = s.num_groups() * s.c;
    auto floats = [](const Vec &v) { return std::vector<float>(v.begin(), v.end()); };
    std::vector<float> x = floats(random_vec(size, seed++, -3.0, 5.0));
    std::vector<float> w = floats(random_vec(s.c, seed++, 0.5, 1.5));
    std::vector<float> b = floats(random_vec(s.c, seed++));
    const float *wp = c.weight ? w.data() : nullptr, *bp = c.bias ? b.data() : nullptr;
    std::vector<float> y(size), mean(stats), invstd(stats), again(size, -1.0f);
    batch_norm_forward_train<float>(s, x.data(), wp, bp, 1e-5, 0.1, y.data(), mean.data(),
                                    invstd.data(), nullptr, nullptr);
    batch_norm_apply<float>(s, x.data(), wp, bp, mean.data(), invstd.data(), again.data());
    EXPECT_EQ(0, std::memcmp(y.data(), again.data(), size * sizeof(float)));
    for (int64_t i = 0; i < s.n; ++i)
      for (int64_t ch = 0; ch < s.c; ++ch)
        for (int64_t j = 0; j < s.hw; ++j) {
          const int64_t k = (i * s.c + ch) * s.hw + j, gc = s.group_of(i) * s.c + ch;
          const float at = batch_norm_apply_at<float>(x[k], mean[gc], invstd[gc], wp, bp, ch);
          EXPECT_EQ(0, std::memcmp(&at, &y[k], sizeof(float))) << "element " << k;
        }
  }
}

TEST(LayerNorm, ForwardKnownValues) {
  Vec x = {1, 2, 3, 4, -1, 0, 1, 6}, y(8), mean(2), invstd(2);
  Vec w = {1, 2, 1, 0.5}, b = {0, 0, 1, 0};
  layer_norm_forward(2, 4, x.data(), w.data(), b.data(), 1e-5, y.data(),
                     mean.data(), invstd.data());
  EXPECT_DOUBLE_EQ(mean[0], 2.5);
  EXPECT_DOUBLE_EQ(mean[1], 1.5);
  EXPECT_NEAR(invstd[0], 1 / std::sqrt(1.25 + 1e-5), 1e-15);
  EXPECT_NEAR(invstd[1], 1 / std::sqrt(7.25 + 1e-5), 1e-15);
  EXPECT_NEAR(y[1], (2 - 2.5) * invstd[0] * 2, 1e-15);
  EXPECT_NEAR(y[6], (1 - 1.5) * invstd[1] + 1, 1e-15);
}

TEST(LayerNorm, BackwardFiniteDifferences) {
  uint64_t seed = 40;
  for (bool affine : {true, false}) {
    const int64_t outer = 5, inner = 7;
    Vec x = random_vec(outer * inner, seed++, -1, 2),
        dy = random_vec(outer * inner, seed++);
    Vec w = random_vec(inner, seed++, 0.5, 1.5), b = random_vec(inner, seed++);
    const double *wp = affine ? w.data() : nullptr;
    Vec y(x.size()), mean(outer), invstd(outer);
    auto f = [&](Vec &out) {
      Vec m(outer), is(outer);
      layer_norm_forward(outer, inner, x.data(), affine ? w.data() : nullptr,
                         affine ? b.data() : nullptr, 1e-5, out.data(),
                         m.data(), is.data());
    };
    layer_norm_forward(outer, inner, x.data(), wp, affine ? b.data() : nullptr,
                       1e-5, y.data(), mean.data(), invstd.data());
    Vec dx(x.size(), 9.0), dw(inner, 9.0), db(inner, 9.0);
    layer_norm_backward(outer, inner, dy.data(), x.data(), wp, mean.data(),
                        invstd.data(), dx.data(), dw.data(), db.data());
    check_gradient(affine ? "ln dx affine" : "ln dx", x, dx, dy, f);
    if (affine) {
      check_gradient("ln dweight", w, dw, dy, f);
      check_gradient("ln dbias", b, db, dy, f);
    }
  }
}

} // namespace
