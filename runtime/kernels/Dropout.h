//===- Dropout.h - Dropout with a recomputed mask ---------------*- C++ -*-===//
//
// torch.nn.functional.dropout(training=True) semantics with tcc's RNG
// (runtime/common/DropoutMask.h, shared with the device):
//   keep_i = random_uniform(seed, stream, i) >= float(p)
//   y_i    = keep_i ? x_i * T(1 / (1 - p)) : 0
// so P(keep) = 1 - p (up to the 2^-24 grid). The backward recomputes the
// same mask from (p, seed, stream): dx_i = keep_i ? dy_i * T(1 / (1 - p)) : 0.
// p = 0 copies; p = 1 gives zeros (as PyTorch). No mask is stored.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_DROPOUT_H
#define TCC_RUNTIME_KERNELS_DROPOUT_H

#include "runtime/common/DropoutMask.h"
#include "runtime/kernels/Random.h"

#include <array>
#include <cstdint>

namespace tcc::rt::kernels {

/// Whether element `index` is kept (runtime/common/DropoutMask.h).
inline bool dropout_keep(double p, uint64_t seed, uint64_t stream,
                         uint64_t index) {
  return dropout::keep(p, seed, stream, index);
}

namespace detail {
/// Element i takes the mask bit of element `first + i` of (seed, stream):
/// a rank's slice of the one-process tensor (docs/distributed.md).
template <class T>
void dropout_apply(int64_t n, double p, uint64_t seed, uint64_t stream,
                   uint64_t first, const T *x, T *y) {
  if (p >= 1.0) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = T(0);
    return;
  }
  const T scale = T(dropout::keptScale(p));
  const float pf = float(p);
  if (first % 4 != 0) { // blocks of 4 that straddle the slice: element by element
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      y[i] = dropout::keep(p, seed, stream, first + uint64_t(i)) ? x[i] * scale : T(0);
    return;
  }
  const int64_t blocks = (n + 3) / 4;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    const std::array<uint32_t, 4> r = random_block(seed, stream, first / 4 + uint64_t(b));
    for (int64_t j = 0; j < 4 && b * 4 + j < n; ++j) {
      const int64_t i = b * 4 + j;
      y[i] = dropout::keeps(r[j], pf) ? x[i] * scale : T(0);
    }
  }
}
} // namespace detail

/// y = dropout(x) over n elements.
template <class T>
void dropout_forward(int64_t n, double p, uint64_t seed, uint64_t stream,
                     const T *x, T *y) {
  detail::dropout_apply(n, p, seed, stream, 0, x, y);
}

/// dx = dy through the same mask and scale (same p, seed, stream).
template <class T>
void dropout_backward(int64_t n, double p, uint64_t seed, uint64_t stream,
                      const T *dy, T *dx) {
  detail::dropout_apply(n, p, seed, stream, 0, dy, dx);
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_DROPOUT_H
