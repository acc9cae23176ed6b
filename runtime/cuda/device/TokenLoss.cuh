//===- TokenLoss.cuh - Cross entropy at every position, on the device -*- CUDA
//-*-===//
//
// The cpu kernels' per-token loss (runtime/kernels/TokenLoss.h) as
// launches, in f32 whatever the precision (16-bit logits reach it as f32
// copies, as on the cpu target): the loss and the positions it counts (not
// ignore_index) summed by one block in a fixed order (block sums in double,
// as cross_entropy's: the same bits on every run); the backward one thread
// per position, with the scale (the upstream gradient over the positions
// counted, for "mean") computed once into the op's workspace
// (TokenWorkspace.h); the correct count one block's sum.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_TOKENLOSS_CUH
#define TCC_RUNTIME_CUDA_DEVICE_TOKENLOSS_CUH

#include "runtime/cuda/TokenWorkspace.h"
#include "runtime/cuda/device/Launch.cuh"
#include "runtime/kernels/TokenLoss.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tcc::rt::cuda {

/// *loss = the cross entropy of the n rows of logits [n, k] whose label is
/// not ignoreIndex, summed ("sum") or over those rows ("mean"; 0 when
/// there is none).
inline void token_cross_entropy_forward(cudaStream_t s, int64_t n, int64_t k,
                                        const float *logits,
                                        const int64_t *labels,
                                        int64_t ignoreIndex, double smoothing,
                                        kernels::Reduction reduction,
                                        float *loss) {
  const bool mean = reduction == kernels::Reduction::Mean;
  per_block(s, 1, 1, [=] __device__(int64_t, const BlockSums &sums) {
    const kernels::Sums total = sums.over(n, [&](int64_t i, int64_t) {
      if (labels[i] == ignoreIndex)
        return kernels::Sums{0, 0};
      return kernels::Sums{kernels::detail::cross_entropy_row(
                               logits + i * k, k,
                               kernels::detail::token_class(labels[i], k),
                               smoothing),
                           1};
    });
    if (sums.leader())
      *loss =
          float(mean ? (total.second != 0 ? total.first / total.second : 0.0)
                     : total.first);
  });
}

/// dlogits: zero at ignored rows, *dloss * c * (softmax - target) at the
/// others, c = 1 / (rows counted) for "mean", 1 for "sum".
inline void token_cross_entropy_backward(cudaStream_t s, char *workspace,
                                         int64_t workspaceBytes, int64_t n,
                                         int64_t k, const float *logits,
                                         const int64_t *labels,
                                         int64_t ignoreIndex, double smoothing,
                                         kernels::Reduction reduction,
                                         const float *dloss, float *dlogits) {
  if (workspaceBytes < tcc::cuda::tokenLossWorkspaceBytes())
    throw std::runtime_error("the token cross entropy's backward was given " +
                             std::to_string(workspaceBytes) +
                             " bytes of workspace");
  double *scale = reinterpret_cast<double *>(workspace);
  const bool mean = reduction == kernels::Reduction::Mean;
  // The cpu kernel's scale, divided once (a division in the rows' loop
  // would be a subroutine call that spills).
  block_sum(
      s, n,
      [=] __device__(int64_t i) {
        return labels[i] != ignoreIndex ? 1.0 : 0.0;
      },
      [=] __device__(double counted) {
        *scale = double(*dloss) / (mean && counted != 0 ? counted : 1.0);
      });
  const double off = smoothing / double(k);
  // One loop for ignored rows too (a second loop, of zeros, spilled
  // registers around the exp calls on sm_90a).
  for_each(s, n, [=] __device__(int64_t i) {
    const float *row = logits + i * k;
    float *drow = dlogits + i * k;
    const bool ignored = labels[i] == ignoreIndex;
    const int64_t label = kernels::detail::token_class(labels[i], k);
    const double c = *scale;
    double mx, lse;
    kernels::detail::row_logsumexp(row, k, mx, lse);
    for (int64_t j = 0; j < k; ++j) {
      double g = exp(double(row[j]) - mx - lse) - off;
      if (j == label)
        g -= 1.0 - smoothing;
      drow[j] = ignored ? 0.0f : float(c * g);
    }
  });
}

/// *correct = rows not ignored whose argmax (the first maximal logit) is
/// their label.
inline void count_correct_tokens(cudaStream_t s, int64_t n, int64_t k,
                                 const float *logits, const int64_t *labels,
                                 int64_t ignoreIndex, int64_t *correct) {
  block_sum(
      s, n,
      [=] __device__(int64_t i) {
        return labels[i] != ignoreIndex &&
                       kernels::argmax_row(logits + i * k, k) == labels[i]
                   ? 1.0
                   : 0.0;
      },
      [=] __device__(double total) { *correct = int64_t(total); });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_TOKENLOSS_CUH
