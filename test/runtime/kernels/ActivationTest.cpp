//===- ActivationTest.cpp - Activations and softmax -----------------------===//
#include "runtime/kernels/Activation.h"
#include "TestUtil.h"
#include "runtime/kernels/Softmax.h"

using namespace tcc::rt::kernels;
using namespace tcc::rt::kernels::test;

namespace {

const Vec kPoints = {-2.5, -1.0, -0.3, 0.0, 0.4, 1.7};

void expect_values(const char *what, const Vec &got, const Vec &want,
                   double tol = 1e-15) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << what << " at x = " << kPoints[i];
}

// Reference values: PyTorch 1.13, float64.
TEST(Activation, ForwardMatchesPyTorch) {
  const int64_t n = kPoints.size();
  Vec y(n);
  gelu_forward(n, kPoints.data(), y.data());
  expect_values("gelu", y,
                {-0.015524163314440398, -0.15865525393145702,
                 -0.1146265733433142, 0.0, 0.2621686966441297,
                 1.6242387133104768});
  gelu_tanh_forward(n, kPoints.data(), y.data());
  expect_values("gelu_tanh", y,
                {-0.015084266089998577, -0.15880800939172324,
                 -0.11462907645724074, 0.0, 0.2621611694273562,
                 1.624105895551156});
  celu_forward(n, 0.5, kPoints.data(), y.data());
  expect_values("celu", y,
                {-0.49663102650045726, -0.43233235838169365,
                 -0.2255941819529868, 0.0, 0.4, 1.7});
  elu_forward(n, 1.3, kPoints.data(), y.data());
  expect_values("elu", y,
                {-1.1932895017889316, -0.8217567264771249, -0.33693631311376676,
                 0.0, 0.4, 1.7});
  silu_forward(n, kPoints.data(), y.data());
  expect_values("silu", y,
                {-0.18964545005310887, -0.2689414213699951, -0.1276672449565023,
                 0.0, 0.2394750640449808, 1.437409049357991});
  relu_forward(n, kPoints.data(), y.data());
  expect_values("relu", y, {0, 0, 0, 0, 0.4, 1.7});
  leaky_relu_forward(n, 0.1, kPoints.data(), y.data());
  expect_values("leaky_relu", y, {-0.25, -0.1, -0.03, 0, 0.4, 1.7}, 1e-16);
  sigmoid_forward(n, kPoints.data(), y.data());
  for (int64_t i = 0; i < n; ++i)
    EXPECT_NEAR(y[i], 1 / (1 + std::exp(-kPoints[i])), 1e-16);
  tanh_forward(n, kPoints.data(), y.data());
  for (int64_t i = 0; i < n; ++i)
    EXPECT_NEAR(y[i], std::tanh(kPoints[i]), 1e-16);
  Vec nan = {std::nan("")};
  relu_forward(1, nan.data(), nan.data());
  EXPECT_TRUE(std::isnan(nan[0]));
}

// Including x = 0, where PyTorch picks a side.
TEST(Activation, BackwardMatchesPyTorch) {
  const int64_t n = kPoints.size();
  const Vec ones(n, 1.0);
  Vec dx(n), y(n);
  gelu_backward(n, kPoints.data(), ones.data(), dx.data());
  expect_values("gelu'", dx,
                {-0.03761108590814519, -0.08331547058768635,
                 0.26767223317289013, 0.5, 0.8027297977316535,
                 1.1153179687821648});
  gelu_tanh_backward(n, kPoints.data(), ones.data(), dx.data());
  expect_values("gelu_tanh'", dx,
                {-0.03795157621266618, -0.08296408384578252,
                 0.26770454836119817, 0.5, 0.8026588344205614,
                 1.115914631452605});
  celu_backward(n, 0.5, kPoints.data(), ones.data(), dx.data());
  expect_values("celu'", dx,
                {0.006737946999085467, 0.1353352832366127, 0.5488116360940264,
                 1.0, 1.0, 1.0});
  elu_backward(n, 1.3, kPoints.data(), ones.data(), dx.data());
  expect_values("elu'", dx,
                {0.10671049821106844, 0.47824327352287505, 0.9630636868862332,
                 1.3, 1.0, 1.0});
  relu_forward(n, kPoints.data(), y.data());
  relu_backward(n, y.data(), ones.data(), dx.data());
  expect_values("relu'", dx, {0, 0, 0, 0, 1, 1});
  leaky_relu_backward(n, 0.1, kPoints.data(), ones.data(), dx.data());
  expect_values("leaky_relu'", dx, {0.1, 0.1, 0.1, 0.1, 1, 1});
}

using Fwd = std::function<void(int64_t, const double *, double *)>;
using Bwd = std::function<void(int64_t, const double *, const double *,
                               const double *, double *)>; // (n, x, y, dy, dx)

void check_activation(const char *name, const Fwd &fwd, const Bwd &bwd,
                      uint64_t seed) {
  const int64_t n = 40;
  // Spread over [-3, 3], away from the kink at 0.
  Vec x = random_vec_away_from_zero(n, seed, 0.05);
  for (double &v : x)
    v *= 3;
  Vec dy = random_vec(n, seed + 1), y(n), dx(n, 9.0);
  fwd(n, x.data(), y.data());
  bwd(n, x.data(), y.data(), dy.data(), dx.data());
  check_gradient(name, x, dx, dy,
                 [&](Vec &out) { fwd(n, x.data(), out.data()); });
}

TEST(Activation, BackwardFiniteDifferences) {
  using V = const double *;
  check_activation(
      "relu", relu_forward<double>,
      [](int64_t n, V, V y, V dy, double *dx) { relu_backward(n, y, dy, dx); },
      1);
  check_activation(
      "leaky_relu",
      [](int64_t n, V x, double *y) { leaky_relu_forward(n, 0.02, x, y); },
      [](int64_t n, V x, V, V dy, double *dx) {
        leaky_relu_backward(n, 0.02, x, dy, dx);
      },
      2);
  check_activation(
      "elu", [](int64_t n, V x, double *y) { elu_forward(n, 0.7, x, y); },
      [](int64_t n, V x, V, V dy, double *dx) {
        elu_backward(n, 0.7, x, dy, dx);
      },
      3);
  check_activation(
      "celu", [](int64_t n, V x, double *y) { celu_forward(n, 0.3, x, y); },
      [](int64_t n, V x, V, V dy, double *dx) {
        celu_backward(n, 0.3, x, dy, dx);
      },
      4);
  check_activation(
      "gelu", gelu_forward<double>,
      [](int64_t n, V x, V, V dy, double *dx) { gelu_backward(n, x, dy, dx); },
      5);
  check_activation(
      "gelu_tanh", gelu_tanh_forward<double>,
      [](int64_t n, V x, V, V dy, double *dx) {
        gelu_tanh_backward(n, x, dy, dx);
      },
      6);
  check_activation(
      "silu", silu_forward<double>,
      [](int64_t n, V x, V, V dy, double *dx) { silu_backward(n, x, dy, dx); },
      7);
  check_activation(
      "sigmoid", sigmoid_forward<double>,
      [](int64_t n, V, V y, V dy, double *dx) {
        sigmoid_backward(n, y, dy, dx);
      },
      8);
  check_activation(
      "tanh", tanh_forward<double>,
      [](int64_t n, V, V y, V dy, double *dx) { tanh_backward(n, y, dy, dx); },
      9);
}

TEST(Softmax, ForwardRowsSumToOneAndLogMatches) {
  const int64_t outer = 3, axis = 5, inner = 4;
  Vec x = random_vec(outer * axis * inner, 1, -5, 5), y(x.size()), ly(x.size());
  x[7] = 800; // would overflow exp() without the max shift
  softmax_forward(outer, axis, inner, x.data(), y.data());
  log_softmax_forward(outer, axis, inner, x.data(), ly.data());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double s = 0;
      for (int64_t a = 0; a < axis; ++a) {
        const int64_t k = (o * axis + a) * inner + i;
        s += y[k];
        if (y[k] > 1e-200)
          EXPECT_NEAR(std::log(y[k]), ly[k], 1e-12) << k;
        else
          EXPECT_LT(ly[k], -700) << k;
      }
      EXPECT_NEAR(s, 1.0, 1e-14);
    }
  EXPECT_NEAR(y[7], 1.0, 1e-15);
}

TEST(Softmax, BackwardFiniteDifferences) {
  for (auto [outer, axis, inner] :
       {std::tuple<int64_t, int64_t, int64_t>{3, 5, 4}, {4, 6, 1}, {1, 3, 7}}) {
    const int64_t n = outer * axis * inner;
    Vec x = random_vec(n, outer * 10 + inner, -2, 2),
        dy = random_vec(n, 77 + n);
    Vec y(n), dx(n, 9.0);
    softmax_forward(outer, axis, inner, x.data(), y.data());
    softmax_backward(outer, axis, inner, y.data(), dy.data(), dx.data());
    check_gradient("softmax", x, dx, dy, [&](Vec &out) {
      softmax_forward(outer, axis, inner, x.data(), out.data());
    });
    log_softmax_forward(outer, axis, inner, x.data(), y.data());
    log_softmax_backward(outer, axis, inner, y.data(), dy.data(), dx.data());
    check_gradient("log_softmax", x, dx, dy, [&](Vec &out) {
      log_softmax_forward(outer, axis, inner, x.data(), out.data());
    });
  }
}

} // namespace
