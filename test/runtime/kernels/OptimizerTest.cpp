//===- OptimizerTest.cpp - Optimizers against torch.optim -----------------===//
#include "runtime/kernels/Optimizer.h"
#include "TestUtil.h"
#include "runtime/kernels/Elementwise.h"

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

const Vec kP0 = {0.5, -1.2, 2.0};
const Vec kGrads[3] = {{0.1, -0.3, 0.7}, {-0.2, 0.05, 0.4}, {0.3, 0.3, -0.6}};

void expect_vec_near(const Vec &got, const Vec &want, double tol,
                     const std::string &what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << what << " element " << i;
}

// Reference trajectories: PyTorch 1.13 torch.optim, float64, the parameter
// after each of three steps with the gradients kGrads.
TEST(Sgd, MatchesPyTorchNesterov) {
  const Vec want[3] = {
      {0.4809525, -1.1428859999999998, 1.86681},
      {0.5107865595125, -1.1279288258299998, 1.73385165305},
      {0.46261033121309625, -1.166911645708546, 1.7641084313379602}};
  Vec p = kP0, buf(3, 123.0);
  for (int s = 0; s < 3; ++s) {
    sgd_step(3, p.data(), kGrads[s].data(), buf.data(), 0.1, 0.9, 0.0, 5e-4,
             /*nesterov=*/true, /*first_step=*/s == 0);
    expect_vec_near(p, want[s], 1e-15,
                    "nesterov step " + std::to_string(s + 1));
  }
}

TEST(Sgd, MatchesPyTorchDampening) {
  const Vec want[3] = {{0.49475, -1.1844, 1.964},
                       {0.4973768375, -1.1732554599999998, 1.9205126},
                       {0.488804225606875, -1.1744291885889997, 1.90605050059}};
  Vec p = kP0, buf(3, 123.0);
  for (int s = 0; s < 3; ++s) {
    sgd_step(3, p.data(), kGrads[s].data(), buf.data(), 0.05, 0.8, 0.3, 0.01,
             false, s == 0);
    expect_vec_near(p, want[s], 1e-15,
                    "dampening step " + std::to_string(s + 1));
  }
}

TEST(Sgd, HandComputedPlainAndMomentum) {
  // No momentum: p -= lr * (g + wd p); momentum_buf unused (nullptr).
  Vec p = kP0;
  sgd_step(3, p.data(), kGrads[0].data(), (double *)nullptr, 0.1, 0.0, 0.0,
           0.01, false, true);
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(p[i], kP0[i] - 0.1 * (kGrads[0][i] + 0.01 * kP0[i]), 1e-16);
  // Heavy ball, by hand for two steps.
  Vec q = kP0, buf(3);
  Vec hp = kP0, hb(3);
  for (int s = 0; s < 2; ++s) {
    sgd_step(3, q.data(), kGrads[s].data(), buf.data(), 0.2, 0.9, 0.0, 0.0,
             false, s == 0);
    for (int i = 0; i < 3; ++i) {
      hb[i] = s == 0 ? kGrads[s][i] : 0.9 * hb[i] + kGrads[s][i];
      hp[i] -= 0.2 * hb[i];
    }
    expect_vec_near(q, hp, 1e-15, "heavy ball");
    expect_vec_near(buf, hb, 1e-15, "heavy ball buffer");
  }
}

TEST(AdamW, MatchesPyTorch) {
  const Vec want[3] = {
      {0.4895000009999999, -1.1888000003333332, 1.988000000142857},
      {0.4926665779014659, -1.1822142569636147, 1.9764906917212406},
      {0.4887503403327124, -1.1825580497950379, 1.9724332706311196}};
  Vec p = kP0, m(3, 0.0), v(3, 0.0);
  for (int s = 0; s < 3; ++s) {
    adamw_step(3, p.data(), kGrads[s].data(), m.data(), v.data(), 0.01, 0.9,
               0.99, 1e-8, 0.1, s + 1);
    expect_vec_near(p, want[s], 1e-15, "adamw step " + std::to_string(s + 1));
  }
}

TEST(AdamW, HandComputedBiasCorrectedForm) {
  const double lr = 0.003, b1 = 0.8, b2 = 0.95, eps = 1e-6, wd = 0.05;
  Vec p = kP0, m(3, 0.0), v(3, 0.0);
  Vec hp = kP0, hm(3, 0.0), hv(3, 0.0);
  for (int t = 1; t <= 3; ++t) {
    adamw_step(3, p.data(), kGrads[t - 1].data(), m.data(), v.data(), lr, b1,
               b2, eps, wd, t);
    for (int i = 0; i < 3; ++i) {
      const double g = kGrads[t - 1][i];
      hp[i] *= 1 - lr * wd;
      hm[i] = b1 * hm[i] + (1 - b1) * g;
      hv[i] = b2 * hv[i] + (1 - b2) * g * g;
      const double mhat = hm[i] / (1 - std::pow(b1, t));
      const double vhat = hv[i] / (1 - std::pow(b2, t));
      hp[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
    expect_vec_near(p, hp, 1e-14, "adamw t=" + std::to_string(t));
    expect_vec_near(m, hm, 1e-16, "exp_avg");
    expect_vec_near(v, hv, 1e-16, "exp_avg_sq");
  }
}

TEST(Lamb, HandComputed) {
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-6, wd = 0.01;
  Vec p = kP0, m(3, 0.0), v(3, 0.0), u(3);
  Vec hp = kP0, hm(3, 0.0), hv(3, 0.0);
  for (int t = 1; t <= 3; ++t) {
    double pSq = -1, uSq = -1;
    lamb_compute_update(3, p.data(), kGrads[t - 1].data(), m.data(), v.data(),
                        b1, b2, eps, wd, t, u.data(), &pSq, &uSq);
    lamb_apply(3, p.data(), u.data(), lr, pSq, uSq);
    Vec hu(3);
    double hpn = 0, hun = 0;
    for (int i = 0; i < 3; ++i) {
      const double g = kGrads[t - 1][i];
      hm[i] = b1 * hm[i] + (1 - b1) * g;
      hv[i] = b2 * hv[i] + (1 - b2) * g * g;
      const double mhat = hm[i] / (1 - std::pow(b1, t));
      const double vhat = hv[i] / (1 - std::pow(b2, t));
      hu[i] = mhat / (std::sqrt(vhat) + eps) + wd * hp[i];
      hpn += hp[i] * hp[i];
      hun += hu[i] * hu[i];
    }
    EXPECT_NEAR(pSq, hpn, 1e-14);
    EXPECT_NEAR(uSq, hun, 1e-13);
    const double r = std::sqrt(hpn) / std::sqrt(hun);
    for (int i = 0; i < 3; ++i)
      hp[i] -= lr * r * hu[i];
    expect_vec_near(u, hu, 1e-14, "lamb update t=" + std::to_string(t));
    expect_vec_near(p, hp, 1e-14, "lamb param t=" + std::to_string(t));
  }
}

TEST(Lamb, TrustRatioIsOneForZeroParameter) {
  Vec p(3, 0.0), m(3, 0.0), v(3, 0.0), g = {0.1, -0.2, 0.3}, u(3);
  double pSq = -1, uSq = -1;
  // The update may overwrite the gradient buffer.
  lamb_compute_update(3, p.data(), g.data(), m.data(), v.data(), 0.9, 0.999,
                      1e-6, 0.01, 1, g.data(), &pSq, &uSq);
  EXPECT_EQ(pSq, 0.0);
  lamb_apply(3, p.data(), g.data(), 0.5, pSq, uSq);
  // Step 1: mhat = g, vhat = g^2, u = sign(g) * |g| / (|g| + eps).
  EXPECT_NEAR(p[0], -0.5 * 0.1 / (0.1 + 1e-6), 1e-15);
  EXPECT_NEAR(p[1], 0.5 * 0.2 / (0.2 + 1e-6), 1e-15);
}

TEST(GradClip, GlobalNormCoefficient) {
  Vec g1 = {3.0, 4.0}, g2 = {12.0};
  double sq[2];
  sum_of_squares(2, g1.data(), &sq[0]);
  sum_of_squares(1, g2.data(), &sq[1]);
  EXPECT_EQ(sq[0], 25.0);
  EXPECT_EQ(sq[1], 144.0);
  double coef = 0, total = 0;
  clip_grad_norm_coefficient(2, sq, 6.5, &coef, &total);
  EXPECT_DOUBLE_EQ(total, 13.0);
  EXPECT_DOUBLE_EQ(coef, 6.5 / (13.0 + 1e-6));
  scale_inplace(2, coef, g1.data());
  EXPECT_NEAR(g1[0], 1.5, 1e-6);
  clip_grad_norm_coefficient(2, sq, 100.0, &coef, (double *)nullptr);
  EXPECT_EQ(coef, 1.0); // never scales up
  // Long vectors use the chunked, order-fixed sum.
  Vec big = random_vec(10000, 3);
  double s = 0, ref = 0;
  sum_of_squares(10000, big.data(), &s);
  for (double x : big)
    ref += x * x;
  EXPECT_NEAR(s, ref, 1e-10);
}

TEST(Ema, UpdateFormula) {
  Vec ema = {1.0, 2.0}, p = {3.0, -2.0};
  ema_update(2, 0.9, p.data(), ema.data());
  EXPECT_NEAR(ema[0], 0.9 * 1.0 + 0.1 * 3.0, 1e-15);
  EXPECT_NEAR(ema[1], 0.9 * 2.0 + 0.1 * -2.0, 1e-15);
}

TEST(Lookahead, UpdateFormula) {
  Vec fast = {1.0, 4.0}, slow = {0.0, 2.0};
  lookahead_update(2, 0.5, fast.data(), slow.data());
  EXPECT_EQ(slow, (Vec{0.5, 3.0}));
  EXPECT_EQ(fast, slow);
}

} // namespace
