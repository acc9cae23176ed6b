//===- Attention.cuh - Scaled dot-product attention on the device -*- CUDA -*-===//
//
// The cpu kernels' attention (runtime/kernels/Attention.h: shapes, the
// logsumexp saved for the backward, the dropout mask) as launches: the
// head products cuBLASLt strided batched matmuls in f32 (a batch over the
// samples or the heads, a launch per entry of the other:
// runtime/cuda/AttentionProducts.h), the row
// softmax and its backward one block per query row (the max, the sum, the
// logsumexp and D = dO.O in double as the cpu's, BlockSums' fixed order),
// the [n*heads, tq, tk] scores and their gradients in f32 in the op's
// workspace, cuBLASLt's workspace after them (the memory plan's:
// attentionWorkspaceBytes), the causal mask and the dropout mask the cpu
// kernels' own functions. cuDNN's fused attention is the fast path to come
// (docs/performance.md). f32 tensors only (under 16-bit precision the op
// runs on f32 copies, docs/ir.md#attention): cuBLASLt takes the scores and
// the tensors in one type.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_ATTENTION_CUH
#define TCC_RUNTIME_CUDA_DEVICE_ATTENTION_CUH

#include "runtime/CompiledModel.h"
#include "runtime/cpu/StepOps.h"
#include "runtime/cuda/AttentionProducts.h"
#include "runtime/cuda/AttentionWorkspace.h"
#include "runtime/cuda/device/Launch.cuh"
#include "runtime/cuda/device/Matmul.cuh"
#include "runtime/kernels/Attention.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tcc::rt::cuda {

using kernels::AttentionShape;

namespace attention {

/// The op's workspace: the scores ([n*heads, tq, tk] f32, `count` of them)
/// and what follows them, cuBLASLt's, after checking that the memory plan
/// gave it at least the scores' bytes.
struct Workspace {
  float *scores;
  void *matmul;
  int64_t matmulBytes;
};

inline Workspace split(const AttentionShape &s, bool backward, void *workspace, int64_t bytes) {
  const int64_t scores = tcc::cuda::attentionScoresBytes(s, backward);
  if (!workspace || bytes < scores)
    throw std::runtime_error("an attention op was given " + std::to_string(bytes) +
                             " bytes of workspace, it needs " + std::to_string(scores) +
                             " for its scores (a trainer compiled by another tcc version?)");
  return {static_cast<float *>(workspace), static_cast<char *>(workspace) + scores,
          bytes - scores};
}

/// Runs `product` (AttentionProducts.h): A, B, C are sample 0's, head 0's.
inline void run(Matmul &matmul, cudaStream_t stream, const tcc::cuda::AttentionProduct &product,
                const float *A, const float *B, float *C, const Workspace &w) {
  matmul.products(stream, product.problem, product.count, product.stepA, product.stepB,
                  product.stepC, A, B, C, w.matmul, w.matmulBytes);
}

/// The query row r = (b*heads + h)*tq + i of the scores.
struct Row {
  int64_t i, b, h;
  TCC_HOST_DEVICE Row(const AttentionShape &s, int64_t r)
      : i(r % s.tq), b(r / s.tq / s.heads), h(r / s.tq % s.heads) {}
};

} // namespace attention

// The products compute the causal mask's hidden scores too (cuBLASLt has
// no mask); the row kernels overwrite them with zeros, so P V and the
// backward's products add exact zeros there, as the cpu's skip them.

/// out = dropout(softmax(scale q k^T + mask)) v and lse, each row's
/// logsumexp, as kernels::attention_forward; `p` > 0 draws the mask of
/// (*seed, stream) (in the rank's slice).
template <class T>
void attention_forward(Matmul &matmul, cudaStream_t stream, void *workspace, int64_t bytes,
                       const AttentionShape &s, double p, const int64_t *seed, uint64_t mask,
                       const StepControl *control, const T *q, const T *k, const T *v, T *out,
                       T *lse) {
  static_assert(std::is_same_v<T, float>, "the head products are f32 matmuls");
  const attention::Workspace w = attention::split(s, false, workspace, bytes);
  float *probs = w.scores;
  attention::run(matmul, stream, tcc::cuda::attentionScores(s, s.d), k, q, probs, w);
  // One block per row: the max, one exp per element and their sum, the
  // logsumexp, the probabilities with their dropout, zeros past the mask.
  per_block(stream, s.n * s.heads * s.tq, 1, [=] __device__(int64_t r, const BlockSums &sums) {
    const attention::Row at(s, r);
    float *row = probs + r * s.tk;
    const int64_t keys = kernels::detail::attention_keys(s, at.i);
    const double mx = sums.max_over_range(
        0, keys, [&](int64_t j, int64_t) { return s.scale * double(row[j]); });
    const double sum = sums.over_range(0, keys, [&](int64_t j, int64_t) {
                             const double e = exp(s.scale * double(row[j]) - mx);
                             row[j] = float(e);
                             return kernels::Sums{e, 0};
                           }).first;
    if (sums.leader())
      lse[r] = T(mx + log(sum));
    const kernels::AttentionDropout drop = cpu::attention_dropout(s, p, seed, mask, control);
    sums.each_in(0, s.tk, [&](int64_t j, int64_t) {
      row[j] = j < keys ? float(double(row[j]) / sum *
                                kernels::detail::attention_keep(s, drop, at.b, at.h, at.i, j))
                        : 0.0f;
    });
  });
  attention::run(matmul, stream, tcc::cuda::attentionMix(s, s.dv), v, probs, out, w);
}

/// dq, dk, dv from dout, the forward's operands, out and lse, as
/// kernels::attention_backward: P recomputed from lse, D_i = dout_i . out_i.
template <class T>
void attention_backward(Matmul &matmul, cudaStream_t stream, void *workspace, int64_t bytes,
                        const AttentionShape &s, double p, const int64_t *seed, uint64_t mask,
                        const StepControl *control, const T *dout, const T *q, const T *k,
                        const T *v, const T *out, const T *lse, T *dq, T *dk, T *dv) {
  static_assert(std::is_same_v<T, float>, "the head products are f32 matmuls");
  const attention::Workspace w = attention::split(s, true, workspace, bytes);
  float *kept = w.scores, *grads = kept + s.n * s.heads * s.tq * s.tk;
  attention::run(matmul, stream, tcc::cuda::attentionScores(s, s.d), k, q, kept, w);
  attention::run(matmul, stream, tcc::cuda::attentionScores(s, s.dv), v, dout, grads, w);
  // One block per row: P * keep into `kept`, dS = scale P (dP keep - D)
  // into `grads`, zeros past the mask.
  per_block(stream, s.n * s.heads * s.tq, 1, [=] __device__(int64_t r, const BlockSums &sums) {
    const attention::Row at(s, r);
    float *pRow = kept + r * s.tk, *gRow = grads + r * s.tk;
    const int64_t keys = kernels::detail::attention_keys(s, at.i);
    const int64_t first = (at.b * s.tq + at.i) * s.heads * s.dv + at.h * s.dv;
    const T *dO = dout + first, *O = out + first;
    const double rowTerm = sums.over_range(0, s.dv, [&](int64_t c, int64_t) {
                                 return kernels::Sums{double(dO[c]) * double(O[c]), 0};
                               }).first;
    const double logSum = double(lse[r]);
    const kernels::AttentionDropout drop = cpu::attention_dropout(s, p, seed, mask, control);
    sums.each_in(0, s.tk, [&](int64_t j, int64_t) {
      if (j >= keys) {
        pRow[j] = gRow[j] = 0;
        return;
      }
      const double prob = exp(s.scale * double(pRow[j]) - logSum);
      const double keep = kernels::detail::attention_keep(s, drop, at.b, at.h, at.i, j);
      pRow[j] = float(prob * keep);
      gRow[j] = float(s.scale * prob * (double(gRow[j]) * keep - rowTerm));
    });
  });
  attention::run(matmul, stream, tcc::cuda::attentionMixTransposed(s, s.dv), dout, kept, dv,
                 w);
  attention::run(matmul, stream, tcc::cuda::attentionMix(s, s.d), k, grads, dq, w);
  attention::run(matmul, stream, tcc::cuda::attentionMixTransposed(s, s.d), q, grads, dk, w);
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_ATTENTION_CUH
