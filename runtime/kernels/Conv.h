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
// Implementation: im2col + GEMM (Gemm.h). For one sample and group, the
// "column matrix" col[k, p] (k = (ci*kh + ki)*kw + kj < c/groups*kh*kw,
// p = oy*ow + ox) holds the input value under tap k of output position p, so
//   forward          y_g  [o/g x P] = W_g [o/g x K] * col [K x P]
//   backward_data    dcol [K x P]   = W_g^T * dy_g,  dx_g = col2im(dcol)
//   backward_filter  dW_g^T [K x o/g] = sum over samples of col * dy_g^T
// Three algorithms (ConvAlgo) share this scheme:
//  - Padded (stride 1, the common case) never builds col: over zero-padded
//    copies of the input planes, each row of col is a contiguous run of memory
//    that the GEMM reads in place (see ConvPadded); backward_data is then the
//    forward convolution of dy with the flipped kernel;
//  - Im2col (other strides) builds blocks of col in thread-local scratch;
//  - Direct (one output channel per group, e.g. depthwise) keeps plain loops.
// The loops are parallel over samples (forward, backward_data), or over fixed
// chunks of samples whose partial filter gradients are then added in chunk
// order (backward_filter): results are bit-identical for any number of
// threads. Inputs with Inf/NaN may spread NaN to more entries of dweight than
// the definition would (Padded multiplies junk columns of x by zeros).
//
// Parts: ConvShape.h (geometry), ConvDirect.h, ConvIm2col.h, ConvPadded.h
// (the algorithms); this header chooses among them and is the one to
// include.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_CONV_H
#define TCC_RUNTIME_KERNELS_CONV_H

#include "runtime/kernels/ConvDirect.h"
#include "runtime/kernels/ConvIm2col.h"
#include "runtime/kernels/ConvPadded.h"
#include "runtime/kernels/ConvShape.h"

#include <algorithm>
#include <cstdint>

namespace tcc::rt::kernels {

namespace detail {

/// The implementations of conv2d_forward / backward_data / backward_filter
/// by algorithm (conv_algo chooses; the tests try them all). Padded requires
/// stride 1.
template <class T>
void conv2d_forward_with(ConvAlgo algo, const Conv2dShape &s, const T *x,
                         const T *weight, const T *bias, T *y) {
  if (s.n * s.o * s.oh * s.ow <= 0)
    return;
  switch (algo) {
  case ConvAlgo::Direct:
    return conv2d_forward_direct(s, x, weight, bias, y);
  case ConvAlgo::Padded:
    return conv2d_forward_padded(s, x, weight, bias, y);
  case ConvAlgo::Im2col:
    return conv2d_forward_im2col(s, x, weight, bias, y);
  }
}
template <class T>
void conv2d_backward_data_with(ConvAlgo algo, const Conv2dShape &s, const T *dy,
                               const T *weight, T *dx) {
  if (s.n * s.o * s.oh * s.ow <= 0) {
    std::fill(dx, dx + s.n * s.c * s.h * s.w, T(0));
    return;
  }
  switch (algo) {
  case ConvAlgo::Direct:
    return conv2d_backward_data_direct(s, dy, weight, dx);
  case ConvAlgo::Padded:
    return conv2d_backward_data_padded(s, dy, weight, dx);
  case ConvAlgo::Im2col:
    return conv2d_backward_data_im2col(s, dy, weight, dx);
  }
}
template <class T>
void conv2d_backward_filter_with(ConvAlgo algo, const Conv2dShape &s,
                                 const T *x, const T *dy, T *dweight) {
  if (s.n * s.o * s.oh * s.ow <= 0) {
    std::fill(dweight, dweight + s.o * conv_col_rows(s), T(0));
    return;
  }
  switch (algo) {
  case ConvAlgo::Direct:
    return conv2d_backward_filter_direct(s, x, dy, dweight);
  case ConvAlgo::Padded:
    return conv2d_backward_filter_padded(s, x, dy, dweight);
  case ConvAlgo::Im2col:
    return conv2d_backward_filter_im2col(s, x, dy, dweight);
  }
}

} // namespace detail

/// y = conv2d(x, weight, bias). `bias` may be nullptr.
template <class T>
void conv2d_forward(const Conv2dShape &s, const T *x, const T *weight,
                    const T *bias, T *y) {
  detail::conv2d_forward_with(detail::conv_algo(s), s, x, weight, bias, y);
}

/// dx = d(sum y*dy)/dx: the transposed convolution of dy with weight.
template <class T>
void conv2d_backward_data(const Conv2dShape &s, const T *dy, const T *weight,
                          T *dx) {
  detail::conv2d_backward_data_with(detail::conv_algo(s), s, dy, weight, dx);
}

/// dweight [o, c/groups, kh, kw] = d(sum y*dy)/dweight.
template <class T>
void conv2d_backward_filter(const Conv2dShape &s, const T *x, const T *dy,
                            T *dweight) {
  detail::conv2d_backward_filter_with(detail::conv_algo(s), s, x, dy, dweight);
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
