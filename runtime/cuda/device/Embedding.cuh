//===- Embedding.cuh - Token embedding on the device --------------*- CUDA
//-*-===//
//
// The cpu kernels' embedding (runtime/kernels/Embedding.h) as launches. The
// forward gathers one element per thread. The backward is deterministic
// without atomics, and gives the cpu kernel's bits: the positions are
// grouped by id (a stable counting sort into the op's workspace,
// TokenWorkspace.h), then each element (v, j) of the table's gradient is
// one thread's sum, in double, of column j of the rows whose id is v in
// increasing position, rounded once: the cpu's sum in the cpu's order, so
// the same bits on every run and GPU. Row padding_idx gets zeros. The sort
// is one thread's O(n + rows) pass (a batch's few thousand ids): correct
// first, a parallel sort is issue 11's.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_EMBEDDING_CUH
#define TCC_RUNTIME_CUDA_DEVICE_EMBEDDING_CUH

#include "runtime/cuda/TokenWorkspace.h"
#include "runtime/cuda/device/Launch.cuh"
#include "runtime/kernels/Embedding.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tcc::rt::cuda {

/// out[i, :] = weight[ids[i], :] for the n ids (an id outside [0, rows)
/// reads row 0, as the cpu kernel's).
template <class T, class I>
void embedding_forward(cudaStream_t s, int64_t n, int64_t rows, int64_t d,
                       const I *ids, const T *weight, T *out) {
  for_each(s, n * d, [=] __device__(int64_t e) {
    const int64_t i = e / d, j = e - i * d;
    out[e] = weight[kernels::detail::embedding_row(ids[i], rows) * d + j];
  });
}

/// dweight [rows, d] from dout [n, d]: row v the sum of the rows of dout
/// whose id is v, in increasing position, in double; row paddingIdx (-1:
/// none) and rows no id picks zero.
template <class T, class I>
void embedding_backward(cudaStream_t s, char *workspace, int64_t workspaceBytes,
                        int64_t n, int64_t rows, int64_t d, int64_t paddingIdx,
                        const T *dout, const I *ids, T *dweight) {
  if (n >= (int64_t(1) << 31) ||
      workspaceBytes < tcc::cuda::embeddingWorkspaceBytes(n, rows))
    throw std::runtime_error(
        "the embedding backward of " + std::to_string(n) + " ids into " +
        std::to_string(rows) + " rows was given " +
        std::to_string(workspaceBytes) + " bytes of workspace");
  int32_t *start = reinterpret_cast<int32_t *>(workspace),
          *order = start + rows + 1;
  // A stable counting sort: start[v] the first of id v's positions in
  // `order`, which lists them in increasing order.
  single(s, [=] __device__() {
    for (int64_t v = 0; v <= rows; ++v)
      start[v] = 0;
    for (int64_t i = 0; i < n; ++i)
      ++start[kernels::detail::embedding_row(ids[i], rows) + 1];
    for (int64_t v = 0; v < rows; ++v)
      start[v + 1] += start[v];
    // start[v] serves as v's cursor, ending at v + 1's start; then shifted.
    for (int64_t i = 0; i < n; ++i)
      order[start[kernels::detail::embedding_row(ids[i], rows)]++] = int32_t(i);
    for (int64_t v = rows; v > 0; --v)
      start[v] = start[v - 1];
    start[0] = 0;
  });
  for_each(s, rows * d, [=] __device__(int64_t e) {
    const int64_t v = e / d, j = e - v * d;
    double sum = 0;
    if (v != paddingIdx)
      for (int32_t k = start[v]; k < start[v + 1]; ++k)
        sum += double(dout[int64_t(order[k]) * d + j]);
    dweight[e] = T(sum);
  });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_EMBEDDING_CUH
