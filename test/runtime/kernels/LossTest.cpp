//===- LossTest.cpp - cross entropy, mse, one_hot -------------------------===//
#include "runtime/kernels/Loss.h"
#include "TestUtil.h"

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

// Reference values: PyTorch 1.13 F.cross_entropy(label_smoothing=0.1), float64,
// logits[i][j] = 2 sin(0.7 (5i + j)), labels {1, 4, 0}; gradient for an
// upstream gradient of 0.7.
TEST(CrossEntropy, MatchesPyTorchWithLabelSmoothing) {
  const int64_t n = 3, k = 5;
  Vec logits(n * k);
  for (int64_t i = 0; i < n * k; ++i)
    logits[i] = 2 * std::sin(0.7 * i);
  const int64_t labels[] = {1, 4, 0};
  const Vec gradMean = {
      0.00737391015969079,  -0.17099420557984676, 0.08175010797202027,
      0.06300726716923231,  0.018862920278903423, 0.04969617281365028,
      0.014517700421206592, 0.010702172868922687, 0.026355872254929736,
      -0.10127191835870936, -0.16857139327314175, 0.08472913194124357,
      0.06377179927042254,  0.018784821228872556, 0.0012856408326030382};
  for (Reduction r : {Reduction::Mean, Reduction::Sum}) {
    double loss = 0;
    Vec perSample(n), d(n * k);
    cross_entropy_forward(n, k, logits.data(), labels, 0.1, r, &loss,
                          perSample.data());
    EXPECT_NEAR(loss,
                r == Reduction::Mean ? 1.3947552058021322 : 4.184265617406396,
                1e-14);
    EXPECT_NEAR(perSample[0] + perSample[1] + perSample[2], 4.184265617406396,
                1e-14);
    // With `valid`, the first rows only (the evaluation's padded batch).
    for (int64_t valid : {int64_t(3), int64_t(2), int64_t(7)}) {
      double part = 0;
      cross_entropy_forward(n, k, logits.data(), labels, 0.1, r, &part,
                            (double *)nullptr, &valid);
      const int64_t rows = std::min(valid, n);
      const double sum = rows == 3 ? 4.184265617406396 : perSample[0] + perSample[1];
      EXPECT_NEAR(part, r == Reduction::Mean ? sum / rows : sum, 1e-14);
    }
    cross_entropy_backward(n, k, logits.data(), labels, 0.1, r, 0.7, d.data());
    for (int64_t i = 0; i < n * k; ++i)
      EXPECT_NEAR(d[i], gradMean[i] * (r == Reduction::Mean ? 1.0 : 3.0),
                  1e-15);
  }
}

// The first `valid` rows of 3 elements each; Mean over their elements.
TEST(MseLoss, ValidRowsOnly) {
  const Vec x = {1, 2, 3, 4, 5, 6}, target = {0, 0, 0, 0, 0, 0};
  for (int64_t valid : {int64_t(0), int64_t(1), int64_t(2)}) {
    double sum = 0, mean = 0;
    mse_loss_forward(6, x.data(), target.data(), Reduction::Sum, &sum, &valid, 3);
    mse_loss_forward(6, x.data(), target.data(), Reduction::Mean, &mean, &valid, 3);
    const double expected = valid == 0 ? 0.0 : valid == 1 ? 14.0 : 91.0;
    EXPECT_DOUBLE_EQ(sum, expected);
    EXPECT_DOUBLE_EQ(mean, valid == 0 ? 0.0 : expected / (3 * valid));
  }
}

TEST(CrossEntropy, NoSmoothingIsNegativeLogLikelihood) {
  const int64_t n = 2, k = 3;
  Vec logits = {1.0, 2.0, 3.0, 1000.0, 0.0, -1000.0};
  const int64_t labels[] = {0, 0};
  double loss = 0;
  cross_entropy_forward(n, k, logits.data(), labels, 0.0, Reduction::Sum, &loss,
                        (double *)nullptr);
  const double nll0 =
      std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 1.0;
  EXPECT_NEAR(loss, nll0 + 0.0, 1e-14); // row 1: logit 1000 wins, nll ~ 0
}

TEST(CrossEntropy, BackwardFiniteDifferences) {
  const int64_t n = 4, k = 6;
  const int64_t labels[] = {2, 0, 5, 2};
  uint64_t seed = 1;
  for (double smoothing : {0.0, 0.1, 0.3})
    for (Reduction r : {Reduction::Mean, Reduction::Sum}) {
      Vec logits = random_vec(n * k, seed++, -3, 3), d(n * k, 9.0);
      const Vec dloss = {1.7};
      cross_entropy_backward(n, k, logits.data(), labels, smoothing, r,
                             dloss[0], d.data());
      check_gradient("cross_entropy s=" + std::to_string(smoothing) +
                         (r == Reduction::Mean ? " mean" : " sum"),
                     logits, d, dloss, [&](Vec &out) {
                       cross_entropy_forward(n, k, logits.data(), labels,
                                             smoothing, r, out.data(),
                                             (double *)nullptr);
                     });
    }
}

TEST(MseLoss, ForwardAndBackward) {
  const int64_t n = 7;
  Vec x = random_vec(n, 1), t = random_vec(n, 2);
  for (Reduction r : {Reduction::Mean, Reduction::Sum}) {
    double loss = 0, ref = 0;
    for (int64_t i = 0; i < n; ++i)
      ref += (x[i] - t[i]) * (x[i] - t[i]);
    if (r == Reduction::Mean)
      ref /= n;
    mse_loss_forward(n, x.data(), t.data(), r, &loss);
    EXPECT_NEAR(loss, ref, 1e-15);
    const Vec dloss = {0.6};
    Vec dx(n, 9.0);
    mse_loss_backward(n, x.data(), t.data(), r, dloss[0], dx.data());
    check_gradient(r == Reduction::Mean ? "mse mean" : "mse sum", x, dx, dloss,
                   [&](Vec &out) {
                     mse_loss_forward(n, x.data(), t.data(), r, out.data());
                   });
  }
}

TEST(OneHot, Values) {
  const int64_t labels[] = {2, 0, 3};
  Vec y(12, 7.0);
  one_hot(3, 4, labels, y.data());
  EXPECT_EQ(y, (Vec{0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1}));
}

} // namespace
