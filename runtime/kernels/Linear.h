//===- Linear.h - Fully connected layer: y = x W^T + b ----------*- C++ -*-===//
//
// torch.nn.functional.linear: x [m, k], weight [n, k] (PyTorch layout),
// bias [n] (optional), y [m, n].
//
// The three products are GEMMs (Gemm.h): the operands are packed into
// register-tile panels and the output tiles are shared out among threads; each
// output element is summed in an order fixed by the shape, so results do not
// depend on the number of threads.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_LINEAR_H
#define TCC_RUNTIME_KERNELS_LINEAR_H

#include "runtime/kernels/Common.h"
#include "runtime/kernels/Gemm.h"

#include <algorithm>
#include <cstdint>

namespace tcc::rt::kernels {

/// y[i,j] = sum_l x[i,l] * weight[j,l] + bias[j]. `bias` may be nullptr.
template <class T>
void linear_forward(int64_t m, int64_t k, int64_t n, const T *x,
                    const T *weight, const T *bias, T *y) {
  // y (m x n) = x (m x k) * weight^T (k x n).
  detail::gemm(m, n, k, x, k, 1, weight, 1, k, y, n);
  if (!bias)
    return;
#pragma omp parallel for schedule(static) if (m * n >= (int64_t(1) << 16))
  for (int64_t i = 0; i < m; ++i) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j)
      y[i * n + j] += bias[j];
  }
}

/// dx [m, k]: dx[i,l] = sum_j dy[i,j] * weight[j,l].
template <class T>
void linear_backward_data(int64_t m, int64_t k, int64_t n, const T *dy,
                          const T *weight, T *dx) {
  // dx (m x k) = dy (m x n) * weight (n x k).
  detail::gemm(m, k, n, dy, n, 1, weight, k, 1, dx, k);
}

/// dweight [n, k]: dweight[j,l] = sum_i dy[i,j] * x[i,l].
template <class T>
void linear_backward_weight(int64_t m, int64_t k, int64_t n, const T *dy,
                            const T *x, T *dweight) {
  // dweight (n x k) = dy^T (n x m) * x (m x k).
  detail::gemm(n, k, m, dy, 1, n, x, k, 1, dweight, k);
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
