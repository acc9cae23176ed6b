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
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_CONV_H
#define TCC_RUNTIME_KERNELS_CONV_H

#include "runtime/kernels/Common.h"
#include "runtime/kernels/Gemm.h"

#include <algorithm>
#include <cstdint>
#include <vector>

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

//===----------------------------------------------------------------------===//
// im2col + GEMM
//===----------------------------------------------------------------------===//

/// How conv2d_* compute a shape.
enum class ConvAlgo {
  /// The direct loops above: one output channel per group (depthwise), where
  /// a GEMM would have a single row.
  Direct,
  /// Stride 1: GEMMs read the column matrix in place from zero-padded copies
  /// of the input planes (see ConvPadded).
  Padded,
  /// Any other shape: GEMMs over explicit blocks of the column matrix.
  Im2col,
};

inline ConvAlgo conv_algo(const Conv2dShape &s) {
  if (s.o / s.groups < 2)
    return ConvAlgo::Direct;
  return s.sh == 1 && s.sw == 1 ? ConvAlgo::Padded : ConvAlgo::Im2col;
}

/// Rows of the column matrix: c/groups * kh * kw.
inline int64_t conv_col_rows(const Conv2dShape &s) {
  return s.c / s.groups * s.kh * s.kw;
}

/// Output positions per block of an explicit column matrix: blocks of about
/// kElements scratch elements (at least kMinCols positions), of equal length
/// rounded up to whole GEMM panels of `nr` columns.
inline int64_t conv_col_block(int64_t rows, int64_t plane, int64_t nr) {
  constexpr int64_t kElements = 64 * 1024, kMinCols = 128;
  const int64_t maxCols = std::max(kMinCols, kElements / rows / nr * nr);
  const int64_t blocks = ceil_div(plane, maxCols);
  return ceil_div(ceil_div(plane, blocks), nr) * nr;
}

/// W_g (opg x rows) of every group packed as GEMM A operands, or W_g^T
/// (rows x opg) if `transposed`; group g at the result + g * packed_a_size.
template <class T>
const T *conv_pack_weights(const Conv2dShape &s, const T *weight,
                           bool transposed) {
  const int64_t opg = s.o / s.groups, rows = conv_col_rows(s);
  const int64_t m = transposed ? rows : opg, k = transposed ? opg : rows;
  const int64_t size = packed_a_size<T>(m, k);
  T *packed = thread_scratch<T, 10>(s.groups * size);
  for (int64_t g = 0; g < s.groups; ++g)
    pack_a(m, k, weight + g * opg * rows, transposed ? 1 : rows,
           transposed ? rows : 1, packed + g * size);
  return packed;
}

/// The GEMM B operand dy_o^T for output channels [0, ocs) of one sample
/// (dyo: their planes) at positions q0 <= q < q1, where position
/// q = oy * pitch + ox holds dy[oy, ox] for ox < ow and 0 for ox >= ow (the
/// junk columns of the Padded algorithm; pitch = ow for plain positions).
template <class T>
void conv_pack_dy_transposed(const Conv2dShape &s, const T *dyo, int64_t ocs,
                             int64_t pitch, int64_t q0, int64_t q1, T *bp) {
  constexpr int64_t NR = GemmTile<T>::NR;
  const int64_t k = q1 - q0, plane = s.oh * s.ow;
  for (int64_t j0 = 0; j0 < ocs; j0 += NR, bp += NR * k) {
    const int64_t cols = std::min(NR, ocs - j0);
    const T *src = dyo + j0 * plane; // channel j0 + j at src[j * plane]
    int64_t oy = q0 / pitch, ox = q0 - oy * pitch;
    for (int64_t l = 0; l < k; ++l) { // B(l, j0 + j) at bp[l * NR + j]
      T *d = bp + l * NR;
      if (ox < s.ow && cols == NR) {
        const T *sp = src + oy * s.ow + ox;
        for (int64_t j = 0; j < NR; ++j)
          d[j] = sp[j * plane];
      } else {
        for (int64_t j = 0; j < NR; ++j)
          d[j] = ox < s.ow && j < cols ? src[j * plane + oy * s.ow + ox] : T(0);
      }
      if (++ox == pitch)
        ox = 0, ++oy;
    }
  }
}

/// Chunks of samples of conv2d_backward_filter: each chunk sums its samples
/// into its own copy of dweight (at most kBudget elements in all); the copies
/// are then added in chunk order. Depends on the shape only.
inline int64_t conv_filter_chunks(const Conv2dShape &s) {
  constexpr int64_t kMaxChunks = 16, kBudget = int64_t(1) << 22;
  const int64_t weights = s.o * conv_col_rows(s);
  return std::max<int64_t>(
      1, std::min({kMaxChunks, s.n, kBudget / std::max<int64_t>(1, weights)}));
}

/// The loops of conv2d_backward_filter around a GEMM per sample: parallel over
/// (chunk of samples, group, block of output channels). For each item,
///   add(n, g, oc0, ocs, dwT, first)
/// adds the gradient of output channels [oc0, oc0 + ocs) of group g from
/// sample n to the transposed gradient dwT[k * opg + oc - oc0] (k < rows,
/// written, not added to, when `first`). Then dweight = the sum of the chunks
/// in chunk order.
template <class T, class AddSample>
void conv_backward_filter_chunks(const Conv2dShape &s, T *dweight,
                                 AddSample &&add) {
  const int64_t opg = s.o / s.groups, rows = conv_col_rows(s);
  const int64_t weights = s.o * rows, chunks = conv_filter_chunks(s);
  // Output channels per item: more items for big layers with few chunks; a
  // whole group for small ones (the column matrix is built once per item).
  const int64_t ocBlock = 16 * GemmTile<T>::MR;
  const int64_t ocBlocks = ceil_div(opg, ocBlock);
  T *partial = thread_scratch<T, 11>(chunks * weights); // [chunk][g][k][oc]
#pragma omp parallel for collapse(3) schedule(static)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    for (int64_t g = 0; g < s.groups; ++g) {
      for (int64_t ob = 0; ob < ocBlocks; ++ob) {
        const int64_t oc0 = ob * ocBlock, ocs = std::min(ocBlock, opg - oc0);
        T *dwT = partial + ch * weights + g * rows * opg + oc0;
        const int64_t n0 = s.n * ch / chunks, n1 = s.n * (ch + 1) / chunks;
        for (int64_t n = n0; n < n1; ++n)
          add(n, g, oc0, ocs, dwT, n == n0);
      }
    }
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < weights; ++i) {
    const int64_t oc = i / rows, k = i % rows, g = oc / opg;
    const T *p = partial + g * rows * opg + k * opg + oc % opg;
    acc_t acc = 0;
    for (int64_t ch = 0; ch < chunks; ++ch)
      acc += p[ch * weights];
    dweight[i] = T(acc);
  }
}

//===----------------------------------------------------------------------===//
// Algorithm Im2col (any stride)
//===----------------------------------------------------------------------===//

/// Walks the column matrix of one sample and group, restricted to the output
/// positions [p0, p1), in runs along output rows: calls
///   inside(k, q, i, len)  for the entries (k, q + t), t < len, whose taps read
///                         element i + t * sw of the c/groups input planes,
///   outside(k, q, len)    for entries (k, q + t) in the zero padding,
/// where q is a position minus p0. Rows k are walked in order.
template <class Inside, class Outside>
void conv_col_walk(const Conv2dShape &s, int64_t p0, int64_t p1,
                   Inside &&inside, Outside &&outside) {
  const int64_t cpg = s.c / s.groups, inPlane = s.h * s.w;
  const int64_t oyFirst = p0 / s.ow, oxFirst = p0 - oyFirst * s.ow;
  int64_t k = 0;
  for (int64_t ci = 0; ci < cpg; ++ci)
    for (int64_t ki = 0; ki < s.kh; ++ki)
      for (int64_t kj = 0; kj < s.kw; ++kj, ++k) {
        int64_t ox0, ox1; // the output columns of this tap inside the input
        conv_valid_range(s.ow, s.w, s.sw, s.pw, kj * s.dw, ox0, ox1);
        // Output row oy, columns [a, b), i.e. entries q0 + ox.
        for (int64_t oy = oyFirst, a = oxFirst, q = 0; q < p1 - p0;
             ++oy, a = 0) {
          const int64_t b = std::min(s.ow, a + (p1 - p0 - q)), q0 = q - a;
          const int64_t iy = oy * s.sh - s.ph + ki * s.dh;
          q += b - a;
          if (iy < 0 || iy >= s.h) {
            outside(k, q0 + a, b - a);
            continue;
          }
          const int64_t lo = std::clamp(ox0, a, b), hi = std::clamp(ox1, lo, b);
          if (lo > a)
            outside(k, q0 + a, lo - a);
          // Input index of column ox: ox * sw + (iy * w - pw + kj * dw).
          if (hi > lo)
            inside(k, q0 + lo,
                   ci * inPlane + iy * s.w + lo * s.sw - s.pw + kj * s.dw,
                   hi - lo);
          if (b > hi)
            outside(k, q0 + hi, b - hi);
        }
      }
}

/// Columns [p0, p1) of the column matrix of the input planes xg, row-major
/// with row stride ld (>= p1 - p0; the columns up to ld are zeroed).
template <class T>
void conv_im2col(const Conv2dShape &s, const T *xg, int64_t p0, int64_t p1,
                 T *col, int64_t ld) {
  const int64_t sw = s.sw;
  conv_col_walk(
      s, p0, p1,
      [&](int64_t k, int64_t q, int64_t i, int64_t len) {
        T *d = col + k * ld + q;
        for (int64_t t = 0; t < len; ++t)
          d[t] = xg[i + t * sw];
      },
      [&](int64_t k, int64_t q, int64_t len) {
        std::fill(col + k * ld + q, col + k * ld + q + len, T(0));
      });
  for (int64_t k = 0; k < conv_col_rows(s) && p1 - p0 < ld; ++k)
    std::fill(col + k * ld + (p1 - p0), col + (k + 1) * ld, T(0));
}

/// dxg (the c/groups input planes) += col2im of the columns [p0, p1) of a
/// column matrix stored row-major in dcol (row stride ld).
template <class T>
void conv_col2im_add(const Conv2dShape &s, const T *dcol, int64_t ld,
                     int64_t p0, int64_t p1, T *dxg) {
  const int64_t sw = s.sw;
  conv_col_walk(
      s, p0, p1,
      [&](int64_t k, int64_t q, int64_t i, int64_t len) {
        const T *src = dcol + k * ld + q;
        for (int64_t t = 0; t < len; ++t)
          dxg[i + t * sw] += src[t];
      },
      [](int64_t, int64_t, int64_t) {});
}

/// conv2d_forward: y_g = W_g * col, by blocks of output positions.
template <class T>
void conv2d_forward_im2col(const Conv2dShape &s, const T *x, const T *weight,
                           const T *bias, T *y) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  const int64_t rows = conv_col_rows(s), plane = s.oh * s.ow;
  const int64_t aSize = packed_a_size<T>(opg, rows);
  const int64_t cols = conv_col_block(rows, plane, GemmTile<T>::NR);
  const T *wp = conv_pack_weights(s, weight, false);
  std::vector<int64_t> colOff(rows);
  for (int64_t k = 0; k < rows; ++k)
    colOff[k] = k * cols;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t g = 0; g < s.groups; ++g) {
      T *col = thread_scratch<T, 0>(rows * cols);
      const T *xg = x + (n * s.c + g * cpg) * s.h * s.w;
      T *yg = y + (n * s.o + g * opg) * plane;
      for (int64_t p0 = 0; p0 < plane; p0 += cols) {
        const int64_t p1 = std::min(plane, p0 + cols);
        conv_im2col(s, xg, p0, p1, col, cols);
        gemm_serial(opg, p1 - p0, rows, PackedA<T>{wp + g * aSize},
                    RowsB<T>{col, colOff.data()}, yg + p0, plane, false);
      }
      for (int64_t oc = 0; bias && oc < opg; ++oc) {
        const T b = bias[g * opg + oc];
        T *yp = yg + oc * plane;
#pragma omp simd
        for (int64_t i = 0; i < plane; ++i)
          yp[i] += b;
      }
    }
  }
}

/// conv2d_backward_data: dx_g = col2im(W_g^T * dy_g), by blocks of output
/// positions.
template <class T>
void conv2d_backward_data_im2col(const Conv2dShape &s, const T *dy,
                                 const T *weight, T *dx) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  const int64_t rows = conv_col_rows(s), plane = s.oh * s.ow;
  const int64_t inPlane = s.h * s.w, aSize = packed_a_size<T>(rows, opg);
  const int64_t cols = conv_col_block(rows, plane, GemmTile<T>::NR);
  const T *wt = conv_pack_weights(s, weight, true);
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t g = 0; g < s.groups; ++g) {
      T *dyb = thread_scratch<T, 0>(packed_b_size<T>(opg, cols));
      T *dcol = thread_scratch<T, 1>(rows * cols);
      const T *dyg = dy + (n * s.o + g * opg) * plane;
      T *dxg = dx + (n * s.c + g * cpg) * inPlane;
      std::fill(dxg, dxg + cpg * inPlane, T(0));
      for (int64_t p0 = 0; p0 < plane; p0 += cols) {
        const int64_t p1 = std::min(plane, p0 + cols);
        pack_b(opg, p1 - p0, dyg + p0, plane, 1, dyb);
        gemm_serial(rows, p1 - p0, opg, PackedA<T>{wt + g * aSize},
                    PackedB<T>{dyb}, dcol, cols, false);
        conv_col2im_add(s, dcol, cols, p0, p1, dxg);
      }
    }
  }
}

/// conv2d_backward_filter: dW_g^T = sum over samples of col * dy_g^T, by
/// blocks of output positions.
template <class T>
void conv2d_backward_filter_im2col(const Conv2dShape &s, const T *x,
                                   const T *dy, T *dweight) {
  const int64_t cpg = s.c / s.groups, opg = s.o / s.groups;
  const int64_t rows = conv_col_rows(s), plane = s.oh * s.ow;
  const int64_t cols = conv_col_block(rows, plane, GemmTile<T>::NR);
  std::vector<int64_t> colOff(rows);
  for (int64_t k = 0; k < rows; ++k)
    colOff[k] = k * cols;
  conv_backward_filter_chunks(
      s, dweight,
      [&](int64_t n, int64_t g, int64_t oc0, int64_t ocs, T *dwT, bool first) {
        T *col = thread_scratch<T, 0>(rows * cols);
        T *dyt = thread_scratch<T, 1>(packed_b_size<T>(cols, ocs));
        const T *xg = x + (n * s.c + g * cpg) * s.h * s.w;
        const T *dyo = dy + (n * s.o + g * opg + oc0) * plane;
        for (int64_t p0 = 0; p0 < plane; p0 += cols) {
          const int64_t p1 = std::min(plane, p0 + cols);
          conv_im2col(s, xg, p0, p1, col, cols);
          conv_pack_dy_transposed(s, dyo, ocs, s.ow, p0, p1, dyt);
          gemm_serial(rows, ocs, p1 - p0, RowsA<T>{col, colOff.data()},
                      PackedB<T>{dyt}, dwT, opg, !(first && p0 == 0));
        }
      });
}

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
