//===- Activation.h - Activations, forward and backward ---------*- C++ -*-===//
//
// PyTorch's formulas (torch.nn.functional.*), elementwise over n elements.
// What each backward reads (x = forward input, y = forward output):
//   relu_backward       (y, dy)  dx = y > 0 ? dy : 0
//   leaky_relu_backward (x, dy)  dx = x > 0 ? dy : slope*dy
//   elu_backward        (x, dy)  dx = x > 0 ? dy : dy*alpha*exp(x)
//   celu_backward       (x, dy)  dx = x > 0 ? dy : dy*exp(x/alpha)
//   gelu_backward       (x, dy)  erf form: dy*(Phi(x) + x*phi(x))
//   gelu_tanh_backward  (x, dy)  tanh approximation
//   silu_backward       (x, dy)  dx = dy*s*(1 + x*(1-s)), s = sigmoid(x)
//   sigmoid_backward    (y, dy)  dx = dy*y*(1-y)
//   tanh_backward       (y, dy)  dx = dy*(1-y^2)
// At the kinks (x == 0) the backward takes PyTorch's side: relu 0, leaky_relu
// slope, elu/celu the negative branch.
// In place is allowed (y == x, dx == dy).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_ACTIVATION_H
#define TCC_RUNTIME_KERNELS_ACTIVATION_H

#include <cmath>
#include <cstdint>

namespace tcc::rt::kernels {

namespace detail {
constexpr double kSqrt1_2 = 0.70710678118654752440;     // 1/sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588; // sqrt(2/pi)
} // namespace detail

//--- relu ------------------------------------------------------------------//

/// y = max(x, 0) (NaN stays NaN, as torch.relu).
template <class T> void relu_forward(int64_t n, const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = (x[i] > T(0) || x[i] != x[i]) ? x[i] : T(0);
}

/// dx = y > 0 ? dy : 0, from the forward output y.
template <class T>
void relu_backward(int64_t n, const T *y, const T *dy, T *dx) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    dx[i] = y[i] > T(0) ? dy[i] : T(0);
}

//--- leaky_relu ------------------------------------------------------------//

/// y = x > 0 ? x : slope * x.
template <class T>
void leaky_relu_forward(int64_t n, double slope, const T *x, T *y) {
  const T a = T(slope);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] > T(0) ? x[i] : x[i] * a;
}

/// dx = x > 0 ? dy : slope * dy.
template <class T>
void leaky_relu_backward(int64_t n, double slope, const T *x, const T *dy,
                         T *dx) {
  const T a = T(slope);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    dx[i] = x[i] > T(0) ? dy[i] : dy[i] * a;
}

//--- elu / celu ------------------------------------------------------------//

/// y = x > 0 ? x : alpha * (exp(x) - 1).
template <class T> void elu_forward(int64_t n, double alpha, const T *x, T *y) {
  const T a = T(alpha);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] > T(0) ? x[i] : a * std::expm1(x[i]);
}

/// dx = x > 0 ? dy : dy * alpha * exp(x).
template <class T>
void elu_backward(int64_t n, double alpha, const T *x, const T *dy, T *dx) {
  const T a = T(alpha);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    dx[i] = x[i] > T(0) ? dy[i] : dy[i] * a * std::exp(x[i]);
}

/// y = max(0, x) + min(0, alpha * (exp(x/alpha) - 1)).
template <class T>
void celu_forward(int64_t n, double alpha, const T *x, T *y) {
  const T a = T(alpha), inv = T(1.0 / alpha);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] > T(0) ? x[i] : a * std::expm1(x[i] * inv);
}

/// dx = x > 0 ? dy : dy * exp(x/alpha).
template <class T>
void celu_backward(int64_t n, double alpha, const T *x, const T *dy, T *dx) {
  const T inv = T(1.0 / alpha);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    dx[i] = x[i] > T(0) ? dy[i] : dy[i] * std::exp(x[i] * inv);
}

//--- gelu ------------------------------------------------------------------//

/// Exact gelu: y = x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))).
template <class T> void gelu_forward(int64_t n, const T *x, T *y) {
  const T kAlpha = T(detail::kSqrt1_2);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] * T(0.5) * (T(1) + std::erf(x[i] * kAlpha));
}

/// dx = dy * (Phi(x) + x * phi(x)), phi(x) = exp(-x^2/2) / sqrt(2 pi).
template <class T>
void gelu_backward(int64_t n, const T *x, const T *dy, T *dx) {
  const T kAlpha = T(detail::kSqrt1_2);
  const T kBeta = T(detail::kInvSqrt2Pi);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const T cdf = T(0.5) * (T(1) + std::erf(x[i] * kAlpha));
    const T pdf = kBeta * std::exp(x[i] * x[i] * T(-0.5));
    dx[i] = dy[i] * (cdf + x[i] * pdf);
  }
}

/// gelu(approximate='tanh'):
/// y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
template <class T> void gelu_tanh_forward(int64_t n, const T *x, T *y) {
  const T kBeta = T(detail::kSqrt2OverPi), kKappa = T(0.044715);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const T v = x[i];
    const T inner = kBeta * (v + kKappa * v * v * v);
    y[i] = T(0.5) * v * (T(1) + std::tanh(inner));
  }
}

/// Derivative of gelu_tanh_forward (PyTorch's GeluBackward, tanh branch).
template <class T>
void gelu_tanh_backward(int64_t n, const T *x, const T *dy, T *dx) {
  const T kBeta = T(detail::kSqrt2OverPi), kKappa = T(0.044715);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const T v = x[i], sq = v * v;
    const T t = std::tanh(kBeta * (v + kKappa * sq * v));
    const T left = T(0.5) * v, right = T(1) + t;
    const T leftDerivative = T(0.5) * right;
    const T rightDerivative =
        (T(1) - t * t) * kBeta * (T(1) + T(3) * kKappa * sq);
    dx[i] = dy[i] * (leftDerivative + left * rightDerivative);
  }
}

//--- silu / sigmoid / tanh -------------------------------------------------//

/// y = x * sigmoid(x).
template <class T> void silu_forward(int64_t n, const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] / (T(1) + std::exp(-x[i]));
}

/// dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x).
template <class T>
void silu_backward(int64_t n, const T *x, const T *dy, T *dx) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const T s = T(1) / (T(1) + std::exp(-x[i]));
    dx[i] = dy[i] * s * (T(1) + x[i] * (T(1) - s));
  }
}

/// y = 1 / (1 + exp(-x)).
template <class T> void sigmoid_forward(int64_t n, const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = T(1) / (T(1) + std::exp(-x[i]));
}

/// dx = dy * y * (1 - y), from the forward output y.
template <class T>
void sigmoid_backward(int64_t n, const T *y, const T *dy, T *dx) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    dx[i] = dy[i] * (T(1) - y[i]) * y[i];
}

/// y = tanh(x).
template <class T> void tanh_forward(int64_t n, const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = std::tanh(x[i]);
}

/// dx = dy * (1 - y^2), from the forward output y.
template <class T>
void tanh_backward(int64_t n, const T *y, const T *dy, T *dx) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    dx[i] = dy[i] * (T(1) - y[i] * y[i]);
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_ACTIVATION_H
