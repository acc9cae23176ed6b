//===- Matmul.h - Batched product of two activations ------------*- C++ -*-===//
//
// torch.matmul of [batch, m, k] and [batch, k, n] (either transposed in its
// last two dims): one GEMM (Gemm.h) per batch entry, the transposes as
// strides, so each element's sum order is fixed by the shape and results do
// not depend on the number of threads.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_MATMUL_H
#define TCC_RUNTIME_KERNELS_MATMUL_H

#include "runtime/kernels/Gemm.h"

#include <cstdint>

namespace tcc::rt::kernels {

/// c[b] (m x n) = op(a[b]) (m x k) * op(b[b]) (k x n); op transposes when
/// asked: a[b] is stored [m, k], or [k, m] with `transposeA`; b[b] is
/// stored [k, n], or [n, k] with `transposeB`.
template <class T>
void batched_matmul(int64_t batch, int64_t m, int64_t k, int64_t n, bool transposeA,
                    bool transposeB, const T *a, const T *b, T *c) {
  const int64_t ars = transposeA ? 1 : k, acs = transposeA ? m : 1;
  const int64_t brs = transposeB ? 1 : n, bcs = transposeB ? k : 1;
  for (int64_t i = 0; i < batch; ++i)
    detail::gemm(m, n, k, a + i * m * k, ars, acs, b + i * k * n, brs, bcs, c + i * m * n, n);
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_MATMUL_H
