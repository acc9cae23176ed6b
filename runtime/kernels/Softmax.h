//===- Softmax.h - softmax / log_softmax along one axis ---------*- C++ -*-===//
//
// The tensor is viewed as [outer, axis, inner] (outer = product of the dims
// before the axis, inner = product of the dims after it); the op runs along
// the middle axis, as torch.softmax(x, dim) / torch.log_softmax(x, dim).
// Both backward kernels read the forward OUTPUT y:
//   softmax_backward:      dx = y * (dy - sum_axis(dy * y))
//   log_softmax_backward:  dx = dy - exp(y) * sum_axis(dy)
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_SOFTMAX_H
#define TCC_RUNTIME_KERNELS_SOFTMAX_H

#include "runtime/common/HostDevice.h"
#include "runtime/kernels/Common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tcc::rt::kernels {

/// Position (o, i) of softmax (Log: log_softmax) along the axis, the
/// per-position function of both targets (the cuda target runs one thread
/// per position).
template <class T, bool Log>
TCC_HOST_DEVICE void softmax_at(int64_t axis, int64_t inner, const T *x, T *y, int64_t o,
                                int64_t i) {
  const T *xp = x + o * axis * inner + i;
  T *yp = y + o * axis * inner + i;
  T mx = -std::numeric_limits<T>::infinity();
  for (int64_t a = 0; a < axis; ++a)
    mx = std::max(mx, xp[a * inner]);
  acc_t sum = 0;
  for (int64_t a = 0; a < axis; ++a)
    sum += std::exp(acc_t(xp[a * inner]) - acc_t(mx));
  if (Log) {
    const acc_t lse = acc_t(mx) + std::log(sum);
    for (int64_t a = 0; a < axis; ++a)
      yp[a * inner] = T(acc_t(xp[a * inner]) - lse);
  } else {
    for (int64_t a = 0; a < axis; ++a)
      yp[a * inner] = T(divide(std::exp(acc_t(xp[a * inner]) - acc_t(mx)), sum));
  }
}

/// Position (o, i) of softmax_backward.
template <class T>
TCC_HOST_DEVICE void softmax_backward_at(int64_t axis, int64_t inner, const T *y, const T *dy,
                                         T *dx, int64_t o, int64_t i) {
  const int64_t base = o * axis * inner + i;
  acc_t dot = 0;
  for (int64_t a = 0; a < axis; ++a)
    dot += acc_t(dy[base + a * inner]) * acc_t(y[base + a * inner]);
  for (int64_t a = 0; a < axis; ++a) {
    const int64_t k = base + a * inner;
    dx[k] = T(acc_t(y[k]) * (acc_t(dy[k]) - dot));
  }
}

/// Position (o, i) of log_softmax_backward.
template <class T>
TCC_HOST_DEVICE void log_softmax_backward_at(int64_t axis, int64_t inner, const T *y,
                                             const T *dy, T *dx, int64_t o, int64_t i) {
  const int64_t base = o * axis * inner + i;
  acc_t sum = 0;
  for (int64_t a = 0; a < axis; ++a)
    sum += dy[base + a * inner];
  for (int64_t a = 0; a < axis; ++a) {
    const int64_t k = base + a * inner;
    dx[k] = T(acc_t(dy[k]) - std::exp(acc_t(y[k])) * sum);
  }
}

/// y = exp(x - max) / sum_axis exp(x - max).
template <class T>
void softmax_forward(int64_t outer, int64_t axis, int64_t inner, const T *x,
                     T *y) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      softmax_at<T, false>(axis, inner, x, y, o, i);
}

/// y = x - max - log(sum_axis exp(x - max)).
template <class T>
void log_softmax_forward(int64_t outer, int64_t axis, int64_t inner, const T *x,
                         T *y) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      softmax_at<T, true>(axis, inner, x, y, o, i);
}

/// dx = y * (dy - sum_axis(dy * y)), y = softmax output.
template <class T>
void softmax_backward(int64_t outer, int64_t axis, int64_t inner, const T *y,
                      const T *dy, T *dx) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      softmax_backward_at(axis, inner, y, dy, dx, o, i);
}

/// dx = dy - exp(y) * sum_axis(dy), y = log_softmax output.
template <class T>
void log_softmax_backward(int64_t outer, int64_t axis, int64_t inner,
                          const T *y, const T *dy, T *dx) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      log_softmax_backward_at(axis, inner, y, dy, dx, o, i);
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_SOFTMAX_H
