//===- Embedding.h - Token embedding: gather and scatter-add ----*- C++ -*-===//
//
// embedding: torch.nn.functional.embedding(ids, weight, padding_idx) with
// ids [n] (token ids stored as exact integers in T, as the batch holds
// them) and weight [rows, d]: out[i, :] = weight[ids[i], :].
// backward: dweight[v, :] = sum over i with ids[i] == v of dout[i, :], in
// increasing i, summed in double; row padding_idx (-1: none) stays zero.
// The positions are grouped by id with a counting sort first, so each row is
// one thread's ordered sum: the same bits on any thread count.
// An id outside [0, rows) (which the trainer's data check refuses before
// the first step) reads and receives as row 0 would, never out of bounds.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_EMBEDDING_H
#define TCC_RUNTIME_KERNELS_EMBEDDING_H

#include "runtime/kernels/Common.h"

#include <cstdint>
#include <vector>

namespace tcc::rt::kernels {

namespace detail {
/// Row of the table that id `x` reads.
template <class I>
TCC_HOST_DEVICE inline int64_t embedding_row(I x, int64_t rows) {
  const int64_t v = static_cast<int64_t>(x);
  return v >= 0 && v < rows ? v : 0;
}
} // namespace detail

template <class T, class I>
void embedding_forward(int64_t n, int64_t rows, int64_t d, const I *ids, const T *weight,
                       T *out) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const T *src = weight + detail::embedding_row(ids[i], rows) * d;
    T *dst = out + i * d;
    for (int64_t j = 0; j < d; ++j)
      dst[j] = src[j];
  }
}

template <class T, class I>
void embedding_backward(int64_t n, int64_t rows, int64_t d, int64_t paddingIdx,
                        const T *dout, const I *ids, T *dweight) {
  // Positions by id, each id's in increasing order (a stable counting sort).
  std::vector<int64_t> start(rows + 1, 0), order(n);
  for (int64_t i = 0; i < n; ++i)
    ++start[detail::embedding_row(ids[i], rows) + 1];
  for (int64_t v = 0; v < rows; ++v)
    start[v + 1] += start[v];
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < n; ++i)
    order[next[detail::embedding_row(ids[i], rows)]++] = i;
#pragma omp parallel
  {
    std::vector<acc_t> sum(d);
#pragma omp for schedule(static)
    for (int64_t v = 0; v < rows; ++v) {
      T *dst = dweight + v * d;
      std::fill(sum.begin(), sum.end(), acc_t(0));
      if (v != paddingIdx)
        for (int64_t k = start[v]; k < start[v + 1]; ++k) {
          const T *src = dout + order[k] * d;
          for (int64_t j = 0; j < d; ++j)
            sum[j] += acc_t(src[j]);
        }
      for (int64_t j = 0; j < d; ++j)
        dst[j] = T(sum[j]);
    }
  }
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_EMBEDDING_H
