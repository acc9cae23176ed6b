//===- ConvDirect.h - conv2d by plain loops ---------------------*- C++ -*-===//
//
// Algorithm Direct of Conv.h: depthwise convolutions, and the reference
// the tests compare the other algorithms with.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_CONVDIRECT_H
#define TCC_RUNTIME_KERNELS_CONVDIRECT_H

#include "runtime/kernels/ConvShape.h"

namespace tcc::rt::kernels::detail {

//===----------------------------------------------------------------------===//
// Direct loops (depthwise convolutions, and the reference of the tests)
//===----------------------------------------------------------------------===//

/// conv2d_forward, one output plane at a time.
template <class T>
void conv2d_forward_direct(const Conv2dShape &s, const T *x, const T *weight,
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
          conv_valid_range(s.oh, s.h, s.sh, s.ph, ki * s.dh, oy0, oy1);
          for (int64_t kj = 0; kj < s.kw; ++kj) {
            int64_t ox0, ox1;
            conv_valid_range(s.ow, s.w, s.sw, s.pw, kj * s.dw, ox0, ox1);
            const T wv = wp[ki * s.kw + kj];
            for (int64_t oy = oy0; oy < oy1; ++oy) {
              const T *xr = xp + conv_in_index(s, oy, ox0, ki, kj);
              axpy_gather(ox1 - ox0, wv, xr, s.sw, yp + oy * s.ow + ox0);
            }
          }
        }
      }
    }
  }
}

/// conv2d_backward_data, one input plane at a time.
template <class T>
void conv2d_backward_data_direct(const Conv2dShape &s, const T *dy,
                                 const T *weight, T *dx) {
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
          conv_valid_range(s.oh, s.h, s.sh, s.ph, ki * s.dh, oy0, oy1);
          for (int64_t kj = 0; kj < s.kw; ++kj) {
            int64_t ox0, ox1;
            conv_valid_range(s.ow, s.w, s.sw, s.pw, kj * s.dw, ox0, ox1);
            const T wv = wp[ki * s.kw + kj];
            for (int64_t oy = oy0; oy < oy1; ++oy) {
              T *dxr = dxp + conv_in_index(s, oy, ox0, ki, kj);
              axpy_scatter(ox1 - ox0, wv, dyp + oy * s.ow + ox0, dxr, s.sw);
            }
          }
        }
      }
    }
  }
}

/// conv2d_backward_filter, one weight at a time.
template <class T>
void conv2d_backward_filter_direct(const Conv2dShape &s, const T *x,
                                   const T *dy, T *dweight) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  const int64_t plane = s.oh * s.ow, inPlane = s.h * s.w;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t oc = 0; oc < s.o; ++oc) {
    for (int64_t ci = 0; ci < cpg; ++ci) {
      const int64_t g = oc / opg;
      T *dwp = dweight + (oc * cpg + ci) * s.kh * s.kw;
      for (int64_t ki = 0; ki < s.kh; ++ki) {
        int64_t oy0, oy1;
        conv_valid_range(s.oh, s.h, s.sh, s.ph, ki * s.dh, oy0, oy1);
        for (int64_t kj = 0; kj < s.kw; ++kj) {
          int64_t ox0, ox1;
          conv_valid_range(s.ow, s.w, s.sw, s.pw, kj * s.dw, ox0, ox1);
          T acc = 0;
          for (int64_t n = 0; n < s.n; ++n) {
            const T *xp = x + (n * s.c + g * cpg + ci) * inPlane;
            const T *dyp = dy + (n * s.o + oc) * plane;
            for (int64_t oy = oy0; oy < oy1; ++oy) {
              const T *xr = xp + conv_in_index(s, oy, ox0, ki, kj);
              acc += dot_gather(ox1 - ox0, dyp + oy * s.ow + ox0, xr, s.sw);
            }
          }
          dwp[ki * s.kw + kj] = acc;
        }
      }
    }
  }
}

} // namespace tcc::rt::kernels::detail

#endif // TCC_RUNTIME_KERNELS_CONVDIRECT_H
