//===- Attention.cuh - Scaled dot-product attention on the device -*- CUDA -*-===//
//
// The cpu kernels' attention (runtime/kernels/Attention.h: shapes, the
// logsumexp saved for the backward, the dropout mask) as launches: the
// head products one thread per result element (its sum in f32, in order),
// the row softmax and its backward one thread per query row (statistics in
// double, as the cpu's), the [n*heads, tq, tk] scores and their gradients
// in f32 in the op's workspace (the memory plan's; attentionWorkspaceBytes),
// the causal mask and the dropout mask the cpu kernels' own functions.
// Correct, not fast: cuDNN's fused attention is the fast path to come
// (docs/performance.md). T is the tensors' storage type, read and written
// through double as the cpu's T is: float only so far (under 16-bit
// precision the op runs on f32 copies, docs/ir.md#attention).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_ATTENTION_CUH
#define TCC_RUNTIME_CUDA_DEVICE_ATTENTION_CUH

#include "runtime/CompiledModel.h"
#include "runtime/cpu/StepOps.h"
#include "runtime/cuda/AttentionWorkspace.h"
#include "runtime/cuda/device/Launch.cuh"
#include "runtime/kernels/Attention.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace tcc::rt::cuda {

using kernels::AttentionShape;

namespace attention {

/// Where head h's columns of a [n, rows, heads*width] tensor start for
/// sample b's row r.
TCC_HOST_DEVICE inline int64_t at(const AttentionShape &s, int64_t rows, int64_t width,
                                  int64_t b, int64_t r, int64_t h) {
  return (b * rows + r) * s.heads * width + h * width;
}

template <class T> TCC_HOST_DEVICE inline float value(T x) { return float(double(x)); }

// The causal mask's zeros are skipped: the products that would read or
// write them are not computed (half the work of a causal attention), which
// changes no sum of finite terms.

/// out[b*heads + h, i, j] = x_i . y_j over `width` columns of head h: x
/// [n, tq, heads*width], y [n, tk, heads*width] (Q K^T, dO V^T); 0 where
/// the causal mask hides key j from query i.
template <class T>
void scores(cudaStream_t stream, const AttentionShape &s, int64_t width, const T *x, const T *y,
            float *out) {
  for_each(stream, s.n * s.heads * s.tq * s.tk, [=] __device__(int64_t e) {
    const int64_t j = e % s.tk, i = e / s.tk % s.tq, bh = e / (s.tq * s.tk);
    const int64_t b = bh / s.heads, h = bh % s.heads;
    const T *xi = x + at(s, s.tq, width, b, i, h), *yj = y + at(s, s.tk, width, b, j, h);
    float sum = 0;
    if (j < kernels::detail::attention_keys(s, i))
      for (int64_t l = 0; l < width; ++l)
        sum += value(xi[l]) * value(yj[l]);
    out[e] = sum;
  });
}

/// out[b, i, h*width + c] = sum_j m[b*heads + h, i, j] y[b, j, h*width + c]
/// (P V, dS K): y [n, tk, heads*width], out [n, tq, heads*width].
template <class T>
void mix(cudaStream_t stream, const AttentionShape &s, int64_t width, const float *m,
         const T *y, T *out) {
  for_each(stream, s.n * s.tq * s.heads * width, [=] __device__(int64_t e) {
    const int64_t c = e % width, h = e / width % s.heads, i = e / (width * s.heads) % s.tq,
                  b = e / (width * s.heads * s.tq);
    const float *row = m + ((b * s.heads + h) * s.tq + i) * s.tk;
    const T *column = y + at(s, s.tk, width, b, 0, h) + c;
    const int64_t stride = s.heads * width, keys = kernels::detail::attention_keys(s, i);
    float sum = 0;
    for (int64_t j = 0; j < keys; ++j)
      sum += row[j] * value(column[j * stride]);
    out[e] = T(double(sum));
  });
}

/// out[b, j, h*width + c] = sum_i m[b*heads + h, i, j] y[b, i, h*width + c]
/// (P^T dO, dS^T Q): y [n, tq, heads*width], out [n, tk, heads*width].
template <class T>
void mix_transposed(cudaStream_t stream, const AttentionShape &s, int64_t width,
                    const float *m, const T *y, T *out) {
  for_each(stream, s.n * s.tk * s.heads * width, [=] __device__(int64_t e) {
    const int64_t c = e % width, h = e / width % s.heads, j = e / (width * s.heads) % s.tk,
                  b = e / (width * s.heads * s.tk);
    const float *column = m + (b * s.heads + h) * s.tq * s.tk + j;
    const T *rows = y + at(s, s.tq, width, b, 0, h) + c;
    const int64_t stride = s.heads * width;
    float sum = 0;
    // The queries that see key j: i >= j under the causal mask.
    for (int64_t i = s.causal ? j : 0; i < s.tq; ++i)
      sum += column[i * s.tk] * value(rows[i * stride]);
    out[e] = T(double(sum));
  });
}

/// The workspace's [n*heads, tq, tk] f32 matrices (`count` of them), after
/// checking that the memory plan gave it the bytes it needs.
inline float *matrices(const AttentionShape &s, int count, void *workspace, int64_t bytes) {
  const int64_t needed = tcc::cuda::attentionWorkspaceBytes(s, count == 2);
  if (!workspace || bytes < needed)
    throw std::runtime_error("an attention op was given " + std::to_string(bytes) +
                             " bytes of workspace, it needs " + std::to_string(needed) +
                             " (a trainer compiled by another tcc version?)");
  return static_cast<float *>(workspace);
}

} // namespace attention

/// out = dropout(softmax(scale q k^T + mask)) v and lse, each row's
/// logsumexp, as kernels::attention_forward; `p` > 0 draws the mask of
/// (*seed, stream) (in the rank's slice).
template <class T>
void attention_forward(cudaStream_t stream, void *workspace, int64_t bytes,
                       const AttentionShape &s, double p, const int64_t *seed, uint64_t mask,
                       const StepControl *control, const T *q, const T *k, const T *v, T *out,
                       T *lse) {
  float *probs = attention::matrices(s, 1, workspace, bytes);
  attention::scores(stream, s, s.d, q, k, probs);
  // Per row: the max, one exp per element, the logsumexp, the probabilities
  // with their dropout, zeros past the causal mask.
  for_each(stream, s.n * s.heads * s.tq, [=] __device__(int64_t r) {
    const int64_t i = r % s.tq, bh = r / s.tq, b = bh / s.heads, h = bh % s.heads;
    float *row = probs + r * s.tk;
    const int64_t keys = kernels::detail::attention_keys(s, i);
    const kernels::AttentionDropout drop = cpu::attention_dropout(s, p, seed, mask, control);
    double mx = -INFINITY;
    for (int64_t j = 0; j < keys; ++j)
      mx = fmax(mx, s.scale * double(row[j]));
    double sum = 0;
    for (int64_t j = 0; j < keys; ++j) {
      const double e = exp(s.scale * double(row[j]) - mx);
      row[j] = float(e);
      sum += e;
    }
    lse[r] = T(mx + log(sum));
    for (int64_t j = 0; j < keys; ++j)
      row[j] = float(double(row[j]) / sum * kernels::detail::attention_keep(s, drop, b, h, i, j));
    for (int64_t j = keys; j < s.tk; ++j)
      row[j] = 0;
  });
  attention::mix(stream, s, s.dv, probs, v, out);
}

/// dq, dk, dv from dout, the forward's operands, out and lse, as
/// kernels::attention_backward: P recomputed from lse, D_i = dout_i . out_i.
template <class T>
void attention_backward(cudaStream_t stream, void *workspace, int64_t bytes,
                        const AttentionShape &s, double p, const int64_t *seed, uint64_t mask,
                        const StepControl *control, const T *dout, const T *q, const T *k,
                        const T *v, const T *out, const T *lse, T *dq, T *dk, T *dv) {
  float *kept = attention::matrices(s, 2, workspace, bytes);
  float *grads = kept + s.n * s.heads * s.tq * s.tk;
  attention::scores(stream, s, s.d, q, k, kept);
  attention::scores(stream, s, s.dv, dout, v, grads);
  // Per row: P * keep into `kept`, dS = scale P (dP keep - D) into `grads`.
  for_each(stream, s.n * s.heads * s.tq, [=] __device__(int64_t r) {
    const int64_t i = r % s.tq, bh = r / s.tq, b = bh / s.heads, h = bh % s.heads;
    float *pRow = kept + r * s.tk, *gRow = grads + r * s.tk;
    const int64_t keys = kernels::detail::attention_keys(s, i);
    const kernels::AttentionDropout drop = cpu::attention_dropout(s, p, seed, mask, control);
    const T *dO = dout + attention::at(s, s.tq, s.dv, b, i, h),
            *O = out + attention::at(s, s.tq, s.dv, b, i, h);
    double rowTerm = 0;
    for (int64_t c = 0; c < s.dv; ++c)
      rowTerm += double(dO[c]) * double(O[c]);
    const double logSum = double(lse[r]);
    for (int64_t j = 0; j < keys; ++j) {
      const double prob = exp(s.scale * double(pRow[j]) - logSum);
      const double keep = kernels::detail::attention_keep(s, drop, b, h, i, j);
      pRow[j] = float(prob * keep);
      gRow[j] = float(s.scale * prob * (double(gRow[j]) * keep - rowTerm));
    }
    for (int64_t j = keys; j < s.tk; ++j)
      pRow[j] = gRow[j] = 0;
  });
  attention::mix_transposed(stream, s, s.dv, kept, dout, dv);
  attention::mix(stream, s, s.d, grads, k, dq);
  attention::mix_transposed(stream, s, s.d, grads, q, dk);
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_ATTENTION_CUH
