//===- Conv.h - conv2d: forward, backward data/filter/bias ------*- C++ -*-===//
//
// torch.nn.functional.conv2d semantics (cross-correlation), NCHW:
//   x [n, c, h, w], weight [o, c/groups, kh, kw], bias [o] (optional),
//   y [n, o, oh, ow] with
//   y[n,oc,oy,ox] = bias[oc] + sum_{ci<c/groups, ki, kj} weight[oc,ci,ki,kj] *
//                   x[n, g*c/groups + ci, oy*sh - ph + ki*dh, ox*sw - pw +
//                   kj*dw]
//   where g = oc / (o/groups) and out-of-range input positions are zero.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_CONV_H
#define TCC_RUNTIME_KERNELS_CONV_H

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

/// y = conv2d(x, weight, bias). `bias` may be nullptr.
template <class T>
void conv2d_forward(const Conv2dShape &s, const T *x, const T *weight,
                    const T *bias, T *y) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  const int64_t plane = s.oh * s.ow, inPlane = s.h * s.w;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t oc = 0; oc < s.o; ++oc) {
      T *yp = y + (n * s.o + oc) * plane;
      const T b0 = bias ? bias[oc] : T(0);
      for (int64_t i = 0; i < plane; ++i)
        yp[i] = b0;
      const int64_t g = oc / opg;
      for (int64_t ci = 0; ci < cpg; ++ci) {
        const T *xp = x + (n * s.c + g * cpg + ci) * inPlane;
        const T *wp = weight + (oc * cpg + ci) * s.kh * s.kw;
        for (int64_t ki = 0; ki < s.kh; ++ki) {
          int64_t oy0, oy1;
          detail::conv_valid_range(s.oh, s.h, s.sh, s.ph, ki * s.dh, oy0, oy1);
          for (int64_t kj = 0; kj < s.kw; ++kj) {
            int64_t ox0, ox1;
            detail::conv_valid_range(s.ow, s.w, s.sw, s.pw, kj * s.dw, ox0,
                                     ox1);
            const T wv = wp[ki * s.kw + kj];
            for (int64_t oy = oy0; oy < oy1; ++oy) {
              const T *xr = xp + detail::conv_in_index(s, oy, ox0, ki, kj);
              detail::axpy_gather(ox1 - ox0, wv, xr, s.sw,
                                  yp + oy * s.ow + ox0);
            }
          }
        }
      }
    }
  }
}

/// dx = d(sum y*dy)/dx: the transposed convolution of dy with weight.
template <class T>
void conv2d_backward_data(const Conv2dShape &s, const T *dy, const T *weight,
                          T *dx) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  const int64_t plane = s.oh * s.ow, inPlane = s.h * s.w;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t cg = 0; cg < s.c; ++cg) {
      T *dxp = dx + (n * s.c + cg) * inPlane;
      for (int64_t i = 0; i < inPlane; ++i)
        dxp[i] = T(0);
      const int64_t g = cg / cpg, ci = cg % cpg;
      for (int64_t oc = g * opg; oc < (g + 1) * opg; ++oc) {
        const T *dyp = dy + (n * s.o + oc) * plane;
        const T *wp = weight + (oc * cpg + ci) * s.kh * s.kw;
        for (int64_t ki = 0; ki < s.kh; ++ki) {
          int64_t oy0, oy1;
          detail::conv_valid_range(s.oh, s.h, s.sh, s.ph, ki * s.dh, oy0, oy1);
          for (int64_t kj = 0; kj < s.kw; ++kj) {
            int64_t ox0, ox1;
            detail::conv_valid_range(s.ow, s.w, s.sw, s.pw, kj * s.dw, ox0,
                                     ox1);
            const T wv = wp[ki * s.kw + kj];
            for (int64_t oy = oy0; oy < oy1; ++oy) {
              T *dxr = dxp + detail::conv_in_index(s, oy, ox0, ki, kj);
              detail::axpy_scatter(ox1 - ox0, wv, dyp + oy * s.ow + ox0, dxr,
                                   s.sw);
            }
          }
        }
      }
    }
  }
}

/// dweight [o, c/groups, kh, kw] = d(sum y*dy)/dweight.
template <class T>
void conv2d_backward_filter(const Conv2dShape &s, const T *x, const T *dy,
                            T *dweight) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  const int64_t plane = s.oh * s.ow, inPlane = s.h * s.w;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t oc = 0; oc < s.o; ++oc) {
    for (int64_t ci = 0; ci < cpg; ++ci) {
      const int64_t g = oc / opg;
      T *dwp = dweight + (oc * cpg + ci) * s.kh * s.kw;
      for (int64_t ki = 0; ki < s.kh; ++ki) {
        int64_t oy0, oy1;
        detail::conv_valid_range(s.oh, s.h, s.sh, s.ph, ki * s.dh, oy0, oy1);
        for (int64_t kj = 0; kj < s.kw; ++kj) {
          int64_t ox0, ox1;
          detail::conv_valid_range(s.ow, s.w, s.sw, s.pw, kj * s.dw, ox0, ox1);
          T acc = 0;
          for (int64_t n = 0; n < s.n; ++n) {
            const T *xp = x + (n * s.c + g * cpg + ci) * inPlane;
            const T *dyp = dy + (n * s.o + oc) * plane;
            for (int64_t oy = oy0; oy < oy1; ++oy) {
              const T *xr = xp + detail::conv_in_index(s, oy, ox0, ki, kj);
              acc += detail::dot_gather(ox1 - ox0, dyp + oy * s.ow + ox0, xr,
                                        s.sw);
            }
          }
          dwp[ki * s.kw + kj] = acc;
        }
      }
    }
  }
}

/// dbias [o] = sum over n, oy, ox of dy.
template <class T>
void conv2d_backward_bias(const Conv2dShape &s, const T *dy, T *dbias) {
  const int64_t plane = s.oh * s.ow;
#pragma omp parallel for schedule(static)
  for (int64_t oc = 0; oc < s.o; ++oc) {
    acc_t acc = 0;
    for (int64_t n = 0; n < s.n; ++n) {
      const T *dyp = dy + (n * s.o + oc) * plane;
      for (int64_t i = 0; i < plane; ++i)
        acc += dyp[i];
    }
    dbias[oc] = T(acc);
  }
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_CONV_H
