//===- ConvIm2col.h - conv2d as im2col + GEMM -------------------*- C++ -*-===//
//
// The GEMM formulation of Conv.h (the choice of algorithm, packing, the
// chunked filter gradient) and algorithm Im2col (any stride).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_CONVIM2COL_H
#define TCC_RUNTIME_KERNELS_CONVIM2COL_H

#include "runtime/kernels/ConvShape.h"
#include "runtime/kernels/Gemm.h"

#include <vector>

namespace tcc::rt::kernels::detail {

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

} // namespace tcc::rt::kernels::detail

#endif // TCC_RUNTIME_KERNELS_CONVIM2COL_H
