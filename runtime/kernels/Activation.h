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

#include "runtime/common/HostDevice.h"

#include <cmath>
#include <cstdint>

namespace tcc::rt::kernels {

namespace detail {
constexpr double kSqrt1_2 = 0.70710678118654752440;     // 1/sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588; // sqrt(2/pi)
} // namespace detail

// Each activation is a functor on one element (`Celu<T>{alpha}(x)`,
// `CeluBackward<T>{alpha}(x, dy)`), which the array kernels below map over n
// elements and fused loop nests (codegen/common/ElementBody.cpp) call inline: both
// round the same operations in the same order, so fusing is exact.

//--- relu ------------------------------------------------------------------//

/// y = max(x, 0) (NaN stays NaN, as torch.relu).
template <class T> struct Relu {
  TCC_HOST_DEVICE T operator()(T x) const { return (x > T(0) || x != x) ? x : T(0); }
};

/// dx = y > 0 ? dy : 0, from the forward output y.
template <class T> struct ReluBackward {
  TCC_HOST_DEVICE T operator()(T y, T dy) const { return y > T(0) ? dy : T(0); }
};

//--- leaky_relu ------------------------------------------------------------//

/// y = x > 0 ? x : slope * x.
template <class T> struct LeakyRelu {
  T a;
  TCC_HOST_DEVICE explicit LeakyRelu(double slope) : a(T(slope)) {}
  TCC_HOST_DEVICE T operator()(T x) const { return x > T(0) ? x : x * a; }
};

/// dx = x > 0 ? dy : slope * dy.
template <class T> struct LeakyReluBackward {
  T a;
  TCC_HOST_DEVICE explicit LeakyReluBackward(double slope) : a(T(slope)) {}
  TCC_HOST_DEVICE T operator()(T x, T dy) const { return x > T(0) ? dy : dy * a; }
};

//--- elu / celu ------------------------------------------------------------//

/// y = x > 0 ? x : alpha * (exp(x) - 1).
template <class T> struct Elu {
  T a;
  TCC_HOST_DEVICE explicit Elu(double alpha) : a(T(alpha)) {}
  TCC_HOST_DEVICE T operator()(T x) const { return x > T(0) ? x : a * std::expm1(x); }
};

/// dx = x > 0 ? dy : dy * alpha * exp(x).
template <class T> struct EluBackward {
  T a;
  TCC_HOST_DEVICE explicit EluBackward(double alpha) : a(T(alpha)) {}
  TCC_HOST_DEVICE T operator()(T x, T dy) const { return x > T(0) ? dy : dy * a * std::exp(x); }
};

/// y = max(0, x) + min(0, alpha * (exp(x/alpha) - 1)).
template <class T> struct Celu {
  T a, inv;
  TCC_HOST_DEVICE explicit Celu(double alpha) : a(T(alpha)), inv(T(1.0 / alpha)) {}
  TCC_HOST_DEVICE T operator()(T x) const { return x > T(0) ? x : a * std::expm1(x * inv); }
};

/// dx = x > 0 ? dy : dy * exp(x/alpha).
template <class T> struct CeluBackward {
  T inv;
  TCC_HOST_DEVICE explicit CeluBackward(double alpha) : inv(T(1.0 / alpha)) {}
  TCC_HOST_DEVICE T operator()(T x, T dy) const { return x > T(0) ? dy : dy * std::exp(x * inv); }
};

//--- gelu ------------------------------------------------------------------//

/// Exact gelu: y = x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))).
template <class T> struct Gelu {
  TCC_HOST_DEVICE T operator()(T x) const {
    const T kAlpha = T(detail::kSqrt1_2);
    return x * T(0.5) * (T(1) + std::erf(x * kAlpha));
  }
};

/// dx = dy * (Phi(x) + x * phi(x)), phi(x) = exp(-x^2/2) / sqrt(2 pi).
template <class T> struct GeluBackward {
  TCC_HOST_DEVICE T operator()(T x, T dy) const {
    const T kAlpha = T(detail::kSqrt1_2);
    const T kBeta = T(detail::kInvSqrt2Pi);
    const T cdf = T(0.5) * (T(1) + std::erf(x * kAlpha));
    const T pdf = kBeta * std::exp(x * x * T(-0.5));
    return dy * (cdf + x * pdf);
  }
};

/// gelu(approximate='tanh'):
/// y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
template <class T> struct GeluTanh {
  TCC_HOST_DEVICE T operator()(T v) const {
    const T kBeta = T(detail::kSqrt2OverPi), kKappa = T(0.044715);
    const T inner = kBeta * (v + kKappa * v * v * v);
    return T(0.5) * v * (T(1) + std::tanh(inner));
  }
};

/// Derivative of GeluTanh (PyTorch's GeluBackward, tanh branch).
template <class T> struct GeluTanhBackward {
  TCC_HOST_DEVICE T operator()(T v, T dy) const {
    const T kBeta = T(detail::kSqrt2OverPi), kKappa = T(0.044715);
    const T sq = v * v;
    const T t = std::tanh(kBeta * (v + kKappa * sq * v));
    const T left = T(0.5) * v, right = T(1) + t;
    const T leftDerivative = T(0.5) * right;
    const T rightDerivative = (T(1) - t * t) * kBeta * (T(1) + T(3) * kKappa * sq);
    return dy * (leftDerivative + left * rightDerivative);
  }
};

//--- silu / sigmoid / tanh -------------------------------------------------//

/// y = x * sigmoid(x).
template <class T> struct Silu {
  TCC_HOST_DEVICE T operator()(T x) const { return x / (T(1) + std::exp(-x)); }
};

/// dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x).
template <class T> struct SiluBackward {
  TCC_HOST_DEVICE T operator()(T x, T dy) const {
    const T s = T(1) / (T(1) + std::exp(-x));
    return dy * s * (T(1) + x * (T(1) - s));
  }
};

/// y = 1 / (1 + exp(-x)).
template <class T> struct Sigmoid {
  TCC_HOST_DEVICE T operator()(T x) const { return T(1) / (T(1) + std::exp(-x)); }
};

/// dx = dy * y * (1 - y), from the forward output y.
template <class T> struct SigmoidBackward {
  TCC_HOST_DEVICE T operator()(T y, T dy) const { return dy * (T(1) - y) * y; }
};

/// y = tanh(x).
template <class T> struct Tanh {
  TCC_HOST_DEVICE T operator()(T x) const { return std::tanh(x); }
};

/// dx = dy * (1 - y^2), from the forward output y.
template <class T> struct TanhBackward {
  TCC_HOST_DEVICE T operator()(T y, T dy) const { return dy * (T(1) - y * y); }
};

//--- the array kernels -----------------------------------------------------//

/// y[i] = f(x[i]).
template <class T, class F> void map_unary(int64_t n, F f, const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = f(x[i]);
}

/// dx[i] = f(v[i], dy[i]).
template <class T, class F>
void map_backward(int64_t n, F f, const T *v, const T *dy, T *dx) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    dx[i] = f(v[i], dy[i]);
}

template <class T> void relu_forward(int64_t n, const T *x, T *y) {
  map_unary(n, Relu<T>{}, x, y);
}
template <class T> void relu_backward(int64_t n, const T *y, const T *dy, T *dx) {
  map_backward(n, ReluBackward<T>{}, y, dy, dx);
}
template <class T>
void leaky_relu_forward(int64_t n, double slope, const T *x, T *y) {
  map_unary(n, LeakyRelu<T>(slope), x, y);
}
template <class T>
void leaky_relu_backward(int64_t n, double slope, const T *x, const T *dy, T *dx) {
  map_backward(n, LeakyReluBackward<T>(slope), x, dy, dx);
}
template <class T> void elu_forward(int64_t n, double alpha, const T *x, T *y) {
  map_unary(n, Elu<T>(alpha), x, y);
}
template <class T>
void elu_backward(int64_t n, double alpha, const T *x, const T *dy, T *dx) {
  map_backward(n, EluBackward<T>(alpha), x, dy, dx);
}
template <class T> void celu_forward(int64_t n, double alpha, const T *x, T *y) {
  map_unary(n, Celu<T>(alpha), x, y);
}
template <class T>
void celu_backward(int64_t n, double alpha, const T *x, const T *dy, T *dx) {
  map_backward(n, CeluBackward<T>(alpha), x, dy, dx);
}
template <class T> void gelu_forward(int64_t n, const T *x, T *y) {
  map_unary(n, Gelu<T>{}, x, y);
}
template <class T> void gelu_backward(int64_t n, const T *x, const T *dy, T *dx) {
  map_backward(n, GeluBackward<T>{}, x, dy, dx);
}
template <class T> void gelu_tanh_forward(int64_t n, const T *x, T *y) {
  map_unary(n, GeluTanh<T>{}, x, y);
}
template <class T>
void gelu_tanh_backward(int64_t n, const T *x, const T *dy, T *dx) {
  map_backward(n, GeluTanhBackward<T>{}, x, dy, dx);
}
template <class T> void silu_forward(int64_t n, const T *x, T *y) {
  map_unary(n, Silu<T>{}, x, y);
}
template <class T> void silu_backward(int64_t n, const T *x, const T *dy, T *dx) {
  map_backward(n, SiluBackward<T>{}, x, dy, dx);
}
template <class T> void sigmoid_forward(int64_t n, const T *x, T *y) {
  map_unary(n, Sigmoid<T>{}, x, y);
}
template <class T>
void sigmoid_backward(int64_t n, const T *y, const T *dy, T *dx) {
  map_backward(n, SigmoidBackward<T>{}, y, dy, dx);
}
template <class T> void tanh_forward(int64_t n, const T *x, T *y) {
  map_unary(n, Tanh<T>{}, x, y);
}
template <class T> void tanh_backward(int64_t n, const T *y, const T *dy, T *dx) {
  map_backward(n, TanhBackward<T>{}, y, dy, dx);
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_ACTIVATION_H
