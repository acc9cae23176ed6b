//===- Linear.h - Fully connected layer: y = x W^T + b ----------*- C++ -*-===//
//
// torch.nn.functional.linear: x [m, k], weight [n, k] (PyTorch layout),
// bias [n] (optional), y [m, n].
//
// The loops are register-blocked over 4 rows so that each weight/input row read
// from memory is used 4 times, and every innermost loop runs over contiguous
// memory (dot products with `omp simd` reductions, or axpy updates).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_LINEAR_H
#define TCC_RUNTIME_KERNELS_LINEAR_H

#include "runtime/kernels/Common.h"

#include <algorithm>
#include <cstdint>

namespace tcc::rt::kernels {

namespace detail {
constexpr int64_t kLinearBlock = 4;
} // namespace detail

/// y[i,j] = sum_l x[i,l] * weight[j,l] + bias[j]. `bias` may be nullptr.
template <class T>
void linear_forward(int64_t m, int64_t k, int64_t n, const T *x,
                    const T *weight, const T *bias, T *y) {
  constexpr int64_t B = detail::kLinearBlock;
  const int64_t blocks = (m + B - 1) / B;
#pragma omp parallel for schedule(static)
  for (int64_t ib = 0; ib < blocks; ++ib) {
    const int64_t i0 = ib * B, rows = std::min(B, m - i0);
    for (int64_t j = 0; j < n; ++j) {
      const T *wr = weight + j * k;
      const T b = bias ? bias[j] : T(0);
      if (rows == B) {
        const T *x0 = x + i0 * k, *x1 = x0 + k, *x2 = x1 + k, *x3 = x2 + k;
        T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#pragma omp simd reduction(+ : a0, a1, a2, a3)
        for (int64_t l = 0; l < k; ++l) {
          const T wv = wr[l];
          a0 += x0[l] * wv;
          a1 += x1[l] * wv;
          a2 += x2[l] * wv;
          a3 += x3[l] * wv;
        }
        y[(i0 + 0) * n + j] = a0 + b;
        y[(i0 + 1) * n + j] = a1 + b;
        y[(i0 + 2) * n + j] = a2 + b;
        y[(i0 + 3) * n + j] = a3 + b;
      } else {
        for (int64_t r = 0; r < rows; ++r) {
          const T *xr = x + (i0 + r) * k;
          T a = 0;
#pragma omp simd reduction(+ : a)
          for (int64_t l = 0; l < k; ++l)
            a += xr[l] * wr[l];
          y[(i0 + r) * n + j] = a + b;
        }
      }
    }
  }
}

/// dx [m, k]: dx[i,l] = sum_j dy[i,j] * weight[j,l].
template <class T>
void linear_backward_data(int64_t m, int64_t k, int64_t n, const T *dy,
                          const T *weight, T *dx) {
  constexpr int64_t B = detail::kLinearBlock;
  const int64_t blocks = (m + B - 1) / B;
#pragma omp parallel for schedule(static)
  for (int64_t ib = 0; ib < blocks; ++ib) {
    const int64_t i0 = ib * B, rows = std::min(B, m - i0);
    std::fill(dx + i0 * k, dx + (i0 + rows) * k, T(0));
    for (int64_t j = 0; j < n; ++j) {
      const T *wr = weight + j * k;
      if (rows == B) {
        const T g0 = dy[(i0 + 0) * n + j], g1 = dy[(i0 + 1) * n + j];
        const T g2 = dy[(i0 + 2) * n + j], g3 = dy[(i0 + 3) * n + j];
        T *d0 = dx + i0 * k, *d1 = d0 + k, *d2 = d1 + k, *d3 = d2 + k;
#pragma omp simd
        for (int64_t l = 0; l < k; ++l) {
          const T wv = wr[l];
          d0[l] += g0 * wv;
          d1[l] += g1 * wv;
          d2[l] += g2 * wv;
          d3[l] += g3 * wv;
        }
      } else {
        for (int64_t r = 0; r < rows; ++r) {
          const T g = dy[(i0 + r) * n + j];
          T *d = dx + (i0 + r) * k;
#pragma omp simd
          for (int64_t l = 0; l < k; ++l)
            d[l] += g * wr[l];
        }
      }
    }
  }
}

/// dweight [n, k]: dweight[j,l] = sum_i dy[i,j] * x[i,l].
template <class T>
void linear_backward_weight(int64_t m, int64_t k, int64_t n, const T *dy,
                            const T *x, T *dweight) {
  constexpr int64_t B = detail::kLinearBlock;
  const int64_t blocks = (n + B - 1) / B;
#pragma omp parallel for schedule(static)
  for (int64_t jb = 0; jb < blocks; ++jb) {
    const int64_t j0 = jb * B, cols = std::min(B, n - j0);
    std::fill(dweight + j0 * k, dweight + (j0 + cols) * k, T(0));
    for (int64_t i = 0; i < m; ++i) {
      const T *xr = x + i * k;
      const T *g = dy + i * n + j0;
      if (cols == B) {
        T *d0 = dweight + j0 * k, *d1 = d0 + k, *d2 = d1 + k, *d3 = d2 + k;
        const T g0 = g[0], g1 = g[1], g2 = g[2], g3 = g[3];
#pragma omp simd
        for (int64_t l = 0; l < k; ++l) {
          const T xv = xr[l];
          d0[l] += g0 * xv;
          d1[l] += g1 * xv;
          d2[l] += g2 * xv;
          d3[l] += g3 * xv;
        }
      } else {
        for (int64_t c = 0; c < cols; ++c) {
          T *d = dweight + (j0 + c) * k;
          const T gv = g[c];
#pragma omp simd
          for (int64_t l = 0; l < k; ++l)
            d[l] += gv * xr[l];
        }
      }
    }
  }
}

/// dbias [n]: dbias[j] = sum_i dy[i,j].
template <class T>
void linear_backward_bias(int64_t m, int64_t n, const T *dy, T *dbias) {
  constexpr int64_t kCols = 64;
  const int64_t blocks = (n + kCols - 1) / kCols;
#pragma omp parallel for schedule(static)
  for (int64_t jb = 0; jb < blocks; ++jb) {
    const int64_t j0 = jb * kCols, cols = std::min(kCols, n - j0);
    acc_t acc[kCols] = {};
    for (int64_t i = 0; i < m; ++i)
      for (int64_t c = 0; c < cols; ++c)
        acc[c] += dy[i * n + j0 + c];
    for (int64_t c = 0; c < cols; ++c)
      dbias[j0 + c] = T(acc[c]);
  }
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_LINEAR_H
