//===- ConvPadded.h - conv2d on zero-padded planes --------------*- C++ -*-===//
//
// Algorithm Padded of Conv.h (stride 1): GEMMs read the column matrix in
// place from zero-padded copies of the input planes.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_CONVPADDED_H
#define TCC_RUNTIME_KERNELS_CONVPADDED_H

#include "runtime/kernels/ConvIm2col.h"

namespace tcc::rt::kernels::detail {

//===----------------------------------------------------------------------===//
// Algorithm Padded (stride 1)
//===----------------------------------------------------------------------===//

/// Geometry of the Padded algorithm. The c/groups input planes of a sample
/// are copied into zero-padded planes of hp x wp (one buffer of `size`
/// elements). Over "wide" output positions q = oy * wp + ox, ox < wp (the
/// columns ox >= ow are junk: computed and dropped, or multiplied by zeros),
/// row k = (ci*kh + ki)*kw + kj of the column matrix is then the contiguous
/// run of that buffer at koff[k] = ci*hp*wp + ki*dh*wp + kj*dw.
struct ConvPadded {
  int64_t hp, wp;            ///< padded plane
  int64_t width;             ///< wide positions: oh * wp
  int64_t size;              ///< buffer elements, with room to read past
  std::vector<int64_t> koff; ///< start of each row of the column matrix

  ConvPadded(const Conv2dShape &s, int64_t nr)
      : hp(s.h + 2 * s.ph), wp(s.w + 2 * s.pw), width(s.oh * wp) {
    for (int64_t ci = 0; ci < s.c / s.groups; ++ci)
      for (int64_t ki = 0; ki < s.kh; ++ki)
        for (int64_t kj = 0; kj < s.kw; ++kj)
          koff.push_back(ci * hp * wp + ki * s.dh * wp + kj * s.dw);
    // GEMMs read rows up to whole panels of nr positions.
    size = std::max(koff.back() + ceil_div(width, nr) * nr,
                    s.c / s.groups * hp * wp);
  }

  /// xp = the planes xg, zero-padded. (Short rows: plain loops rather than
  /// calls to memcpy / memset.)
  template <class T> void pad(const Conv2dShape &s, const T *xg, T *xp) const {
    const int64_t planes = s.c / s.groups;
    for (int64_t i = 0; i < planes * hp; ++i) {
      const int64_t ci = i / hp, iy = i % hp - s.ph;
      T *d = xp + i * wp;
      if (iy < 0 || iy >= s.h) {
        for (int64_t j = 0; j < wp; ++j)
          d[j] = T(0);
        continue;
      }
      const T *src = xg + (ci * s.h + iy) * s.w;
      for (int64_t j = 0; j < s.pw; ++j)
        d[j] = T(0);
#pragma omp simd
      for (int64_t j = 0; j < s.w; ++j)
        d[s.pw + j] = src[j];
      for (int64_t j = s.pw + s.w; j < wp; ++j)
        d[j] = T(0);
    }
    std::fill(xp + planes * hp * wp, xp + size, T(0));
  }
};

/// conv2d_forward: y_g = W_g * col, col read in place.
template <class T>
void conv2d_forward_padded(const Conv2dShape &s, const T *x, const T *weight,
                           const T *bias, T *y) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  const int64_t rows = conv_col_rows(s), plane = s.oh * s.ow;
  const int64_t aSize = packed_a_size<T>(opg, rows);
  const ConvPadded geo(s, GemmTile<T>::NR);
  const T *wp = conv_pack_weights(s, weight, false);
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t g = 0; g < s.groups; ++g) {
      T *xp = thread_scratch<T, 0>(geo.size);
      T *yw = thread_scratch<T, 1>(opg * geo.width); // y_g at wide positions
      geo.pad(s, x + (n * s.c + g * cpg) * s.h * s.w, xp);
      gemm_serial(opg, geo.width, rows, PackedA<T>{wp + g * aSize},
                  RowsB<T>{xp, geo.koff.data()}, yw, geo.width, false);
      for (int64_t oc = 0; oc < opg; ++oc) {
        const T b = bias ? bias[g * opg + oc] : T(0);
        T *yp = y + (n * s.o + g * opg + oc) * plane;
        for (int64_t oy = 0; oy < s.oh; ++oy) {
          const T *src = yw + oc * geo.width + oy * geo.wp;
#pragma omp simd
          for (int64_t ox = 0; ox < s.ow; ++ox)
            yp[oy * s.ow + ox] = src[ox] + b;
        }
      }
    }
  }
}

/// conv2d_backward_data. With stride 1, dx is the forward convolution of dy
/// with the kernel flipped in space and its channel axes swapped, padded by
/// (k-1)*d - p: dx[ci, iy, ix] = sum over oc, ki, kj of
///   w[oc, ci, kh-1-ki, kw-1-kj] * dy[oc, iy - ph' + ki*dh, ix - pw' + kj*dw]
/// with ph' = (kh-1)*dh - ph (the same for pw'). Padding wider than the
/// kernel's reach (negative ph' or pw') takes Im2col, and so do few input
/// channels per group (the rows of that GEMM).
template <class T>
void conv2d_backward_data_padded(const Conv2dShape &s, const T *dy,
                                 const T *weight, T *dx) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  const int64_t ph = (s.kh - 1) * s.dh - s.ph, pw = (s.kw - 1) * s.dw - s.pw;
  if (ph < 0 || pw < 0 || cpg < 4)
    return conv2d_backward_data_im2col(s, dy, weight, dx);
  const Conv2dShape t = make_conv2d_shape(s.n, s.o, s.oh, s.ow, s.c, s.kh, s.kw,
                                          1, 1, ph, pw, s.dh, s.dw,
                                          s.groups); // t.oh = h, t.ow = w
  const int64_t taps = s.kh * s.kw;
  T *flipped = thread_scratch<T, 12>(s.c * opg * taps); // [c, o/groups, kh, kw]
  for (int64_t g = 0; g < s.groups; ++g)
    for (int64_t ci = 0; ci < cpg; ++ci)
      for (int64_t oc = 0; oc < opg; ++oc) {
        const T *src = weight + ((g * opg + oc) * cpg + ci) * taps;
        T *d = flipped + ((g * cpg + ci) * opg + oc) * taps;
        for (int64_t tap = 0; tap < taps; ++tap)
          d[tap] = src[taps - 1 - tap];
      }
  conv2d_forward_padded(t, dy, static_cast<const T *>(flipped),
                        static_cast<const T *>(nullptr), dx);
}

/// conv2d_backward_filter: dW_g^T = sum over samples of col * dy_g^T, col read
/// in place (its junk columns meet zeros of dy).
template <class T>
void conv2d_backward_filter_padded(const Conv2dShape &s, const T *x,
                                   const T *dy, T *dweight) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  const int64_t rows = conv_col_rows(s), plane = s.oh * s.ow;
  const ConvPadded geo(s, GemmTile<T>::NR);
  conv_backward_filter_chunks(
      s, dweight,
      [&](int64_t n, int64_t g, int64_t oc0, int64_t ocs, T *dwT, bool first) {
        T *xp = thread_scratch<T, 0>(geo.size);
        T *dyt = thread_scratch<T, 1>(packed_b_size<T>(geo.width, ocs));
        geo.pad(s, x + (n * s.c + g * cpg) * s.h * s.w, xp);
        conv_pack_dy_transposed(s, dy + (n * s.o + g * opg + oc0) * plane, ocs,
                                geo.wp, 0, geo.width, dyt);
        gemm_serial(rows, ocs, geo.width, RowsA<T>{xp, geo.koff.data()},
                    PackedB<T>{dyt}, dwT, opg, !first);
      });
}

} // namespace tcc::rt::kernels::detail

#endif // TCC_RUNTIME_KERNELS_CONVPADDED_H
