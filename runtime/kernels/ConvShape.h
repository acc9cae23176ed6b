//===- ConvShape.h - conv2d geometry ----------------------------*- C++ -*-===//
//
// The shape of a conv2d (Conv2dShape) and the index arithmetic the
// algorithms of Conv.h share. Part of Conv.h, which users include.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_CONVSHAPE_H
#define TCC_RUNTIME_KERNELS_CONVSHAPE_H

#include "runtime/kernels/Common.h"

#include <algorithm>
#include <cstdint>

namespace tcc::rt::kernels {

struct Conv2dShape {
  int64_t n, c, h, w; ///< input
  int64_t o, kh, kw;  ///< output channels, kernel size
  int64_t sh, sw;     ///< stride
  int64_t ph, pw;     ///< zero padding (both sides)
  int64_t dh, dw;     ///< dilation
  int64_t groups;     ///< c and o are divisible by groups
  int64_t oh, ow;     ///< output size (see conv_out_size)
};

/// PyTorch's output size: floor((in + 2p - d(k-1) - 1) / s) + 1.
inline int64_t conv_out_size(int64_t in, int64_t k, int64_t s, int64_t p,
                             int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

/// A Conv2dShape with oh/ow computed.
inline Conv2dShape make_conv2d_shape(int64_t n, int64_t c, int64_t h, int64_t w,
                                     int64_t o, int64_t kh, int64_t kw,
                                     int64_t sh = 1, int64_t sw = 1,
                                     int64_t ph = 0, int64_t pw = 0,
                                     int64_t dh = 1, int64_t dw = 1,
                                     int64_t groups = 1) {
  Conv2dShape s{n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups, 0, 0};
  s.oh = conv_out_size(h, kh, sh, ph, dh);
  s.ow = conv_out_size(w, kw, sw, pw, dw);
  return s;
}


namespace detail {

/// The output positions [lo, hi) of a length-`out` axis whose input coordinate
/// o*s - p + off falls inside [0, in).
inline void conv_valid_range(int64_t out, int64_t in, int64_t s, int64_t p,
                             int64_t off, int64_t &lo, int64_t &hi) {
  const int64_t a = p - off;          // need o*s >= a
  const int64_t b = in - 1 + p - off; // need o*s <= b
  lo = a <= 0 ? 0 : (a + s - 1) / s;
  hi = b < 0 ? 0 : std::min(out, b / s + 1);
  if (hi < lo)
    hi = lo;
}

/// Index within an input plane of the tap (ki, kj) of output (oy, ox); valid
/// when the position is inside the input (see conv_valid_range).
inline int64_t conv_in_index(const Conv2dShape &s, int64_t oy, int64_t ox,
                             int64_t ki, int64_t kj) {
  return (oy * s.sh - s.ph + ki * s.dh) * s.w + (ox * s.sw - s.pw + kj * s.dw);
}

// Row primitives with a stride-1 fast path (the common case, vectorized).
/// y[i] += a * x[i * stride], i < len.
template <class T>
inline void axpy_gather(int64_t len, T a, const T *x, int64_t stride, T *y) {
  if (stride == 1) {
#pragma omp simd
    for (int64_t i = 0; i < len; ++i)
      y[i] += a * x[i];
  } else {
    for (int64_t i = 0; i < len; ++i)
      y[i] += a * x[i * stride];
  }
}
/// y[i * stride] += a * x[i], i < len.
template <class T>
inline void axpy_scatter(int64_t len, T a, const T *x, T *y, int64_t stride) {
  if (stride == 1) {
#pragma omp simd
    for (int64_t i = 0; i < len; ++i)
      y[i] += a * x[i];
  } else {
    for (int64_t i = 0; i < len; ++i)
      y[i * stride] += a * x[i];
  }
}
/// sum_i a[i] * b[i * stride], i < len.
template <class T>
inline T dot_gather(int64_t len, const T *a, const T *b, int64_t stride) {
  T acc = 0;
  if (stride == 1) {
#pragma omp simd reduction(+ : acc)
    for (int64_t i = 0; i < len; ++i)
      acc += a[i] * b[i];
  } else {
    for (int64_t i = 0; i < len; ++i)
      acc += a[i] * b[i * stride];
  }
  return acc;
}

} // namespace detail

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_CONVSHAPE_H
