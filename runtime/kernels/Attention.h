//===- Attention.h - Multi-head scaled dot-product attention ----*- C++ -*-===//
//
// F.scaled_dot_product_attention after MultiheadAttention's head split: q
// [n, tq, heads*d], k [n, tk, heads*d], v [n, tk, heads*dv], out
// [n, tq, heads*dv]; head h is columns h*d .. h*d+d-1 of each row. Per
// (sample, head, query row i), over the keys j it may see (j <= i when
// causal, PyTorch's top-left tril):
//   s_j = scale * q_i . k_j       lse_i = log sum_j exp(s_j)
//   p_j = exp(s_j - lse_i)        out_i = sum_j dropout(p)_j v_j
// The forward stores lse [n, heads, tq], not p: the backward recomputes p
// from it (FlashAttention), with D_i = dout_i . out_i:
//   dv_j += dropout(p)_j dout_i   dp_j = dropout'(dout_i . v_j)
//   ds_j = p_j (dp_j - D_i)       dq_i = scale sum_j ds_j k_j
//   dk_j += scale ds_j q_i
// Dropout keeps p_j as kernels/Dropout.h keeps element
// first + ((sample*heads + h)*tq + i)*tk + j of (seed, stream) and scales it
// by 1/(1-p); `first` places a rank's samples in the one-process tensor.
//
// Per head the six products (Q K^T, P V; and in the backward Q K^T again,
// dO V^T, P^T dO, dS K, dS^T Q) are Gemm.h's, on strided views of the head's
// columns; the head's [tq, tk] scores live in per-thread scratch (never the
// whole batch's). The row statistics (max, sum, lse, D) are double; the
// probabilities are stored as T in the scratch.
//
// Parallel over sample*heads: each (sample, head) writes its own columns of
// out, lse, dq, dk and dv, summed in a fixed order, so the results do not
// depend on the number of threads.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_ATTENTION_H
#define TCC_RUNTIME_KERNELS_ATTENTION_H

#include "runtime/common/DropoutMask.h"
#include "runtime/kernels/Common.h"
#include "runtime/kernels/Gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace tcc::rt::kernels {

/// The geometry of one attention op (codegen/common/KernelArgs.h builds it).
struct AttentionShape {
  int64_t n, heads, tq, tk, d, dv;
  bool causal;
  double scale;
};

/// Dropout of the attention probabilities: drop probability p (0: none).
struct AttentionDropout {
  double p;
  uint64_t seed, stream, first;
};

namespace detail {

// (Both also run on the device: runtime/cuda/device/Attention.cuh.)

/// The keys query row i sees: [0, attention_keys(s, i)).
TCC_HOST_DEVICE inline int64_t attention_keys(const AttentionShape &s, int64_t i) {
  return s.causal && i + 1 < s.tk ? i + 1 : s.tk;
}

/// The dropout factor of probability (b, h, i, j): 0 or 1/(1-p).
TCC_HOST_DEVICE inline acc_t attention_keep(const AttentionShape &s,
                                            const AttentionDropout &drop, int64_t b, int64_t h,
                                            int64_t i, int64_t j) {
  if (drop.p <= 0)
    return 1;
  const uint64_t index = drop.first + uint64_t(((b * s.heads + h) * s.tq + i) * s.tk + j);
  return dropout::keep(drop.p, drop.seed, drop.stream, index) ? dropout::keptScale(drop.p)
                                                               : 0;
}

/// One (sample b, head h): its q, k, v, out rows, as strided matrices.
template <class T> struct AttentionHead {
  const T *q, *k, *v;
  int64_t width, vwidth;

  AttentionHead(const AttentionShape &s, const T *q, const T *k, const T *v, int64_t b,
                int64_t h)
      : q(q + b * s.tq * s.heads * s.d + h * s.d), k(k + b * s.tk * s.heads * s.d + h * s.d),
        v(v + b * s.tk * s.heads * s.dv + h * s.dv), width(s.heads * s.d),
        vwidth(s.heads * s.dv) {}
};

/// S = Q K^T of one head ([tq, tk], row stride tk).
template <class T>
void attention_scores(const AttentionShape &s, const AttentionHead<T> &a, T *scores) {
  gemm(s.tq, s.tk, s.d, a.q, a.width, 1, a.k, 1, a.width, scores, s.tk);
}

} // namespace detail

/// out = dropout(softmax(scale q k^T + mask)) v; lse = the rows' logsumexp.
template <class T>
void attention_forward(const AttentionShape &s, const AttentionDropout &drop, const T *q,
                       const T *k, const T *v, T *out, T *lse) {
  const int64_t vwidth = s.heads * s.dv;
#pragma omp parallel for schedule(static)
  for (int64_t bh = 0; bh < s.n * s.heads; ++bh) {
    const int64_t b = bh / s.heads, h = bh % s.heads;
    const detail::AttentionHead<T> head(s, q, k, v, b, h);
    T *probs = detail::thread_scratch<T, 0>(s.tq * s.tk);
    detail::attention_scores(s, head, probs);
    for (int64_t i = 0; i < s.tq; ++i) {
      T *row = probs + i * s.tk;
      const int64_t keys = detail::attention_keys(s, i);
      acc_t mx = -std::numeric_limits<acc_t>::infinity();
      for (int64_t j = 0; j < keys; ++j)
        mx = std::max(mx, s.scale * acc_t(row[j]));
      // One exp per element (the kernel's cost besides the products).
      acc_t sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        const acc_t e = std::exp(s.scale * acc_t(row[j]) - mx);
        row[j] = T(e);
        sum += e;
      }
      lse[bh * s.tq + i] = T(mx + std::log(sum));
      for (int64_t j = 0; j < keys; ++j)
        row[j] = T(acc_t(row[j]) / sum * detail::attention_keep(s, drop, b, h, i, j));
      std::fill(row + keys, row + s.tk, T(0));
    }
    // out_h = dropout(P) V_h, into the head's columns of out.
    detail::gemm(s.tq, s.dv, s.tk, probs, s.tk, 1, head.v, vwidth, 1,
                 out + b * s.tq * vwidth + h * s.dv, vwidth);
  }
}

/// dq, dk, dv from dout, the forward's operands, its out and its lse (each
/// gradient written whole).
template <class T>
void attention_backward(const AttentionShape &s, const AttentionDropout &drop, const T *dout,
                        const T *q, const T *k, const T *v, const T *out, const T *lse, T *dq,
                        T *dk, T *dv) {
  const int64_t width = s.heads * s.d, vwidth = s.heads * s.dv;
#pragma omp parallel for schedule(static)
  for (int64_t bh = 0; bh < s.n * s.heads; ++bh) {
    const int64_t b = bh / s.heads, h = bh % s.heads;
    const detail::AttentionHead<T> head(s, q, k, v, b, h);
    const T *dO = dout + b * s.tq * vwidth + h * s.dv;
    const T *O = out + b * s.tq * vwidth + h * s.dv;
    // P (kept, after dropout) in `kept`, dP' = dO V^T then dS in `grads`.
    T *kept = detail::thread_scratch<T, 0>(s.tq * s.tk);
    T *grads = detail::thread_scratch<T, 1>(s.tq * s.tk);
    detail::attention_scores(s, head, kept);
    detail::gemm(s.tq, s.tk, s.dv, dO, vwidth, 1, head.v, 1, vwidth, grads, s.tk);
    for (int64_t i = 0; i < s.tq; ++i) {
      T *pRow = kept + i * s.tk, *gRow = grads + i * s.tk;
      const int64_t keys = detail::attention_keys(s, i);
      acc_t rowTerm = 0; // D_i = dO_i . O_i
      for (int64_t c = 0; c < s.dv; ++c)
        rowTerm += acc_t(dO[i * vwidth + c]) * acc_t(O[i * vwidth + c]);
      const acc_t logSum = acc_t(lse[bh * s.tq + i]);
      for (int64_t j = 0; j < keys; ++j) {
        const acc_t p = std::exp(s.scale * acc_t(pRow[j]) - logSum);
        const acc_t keep = detail::attention_keep(s, drop, b, h, i, j);
        pRow[j] = T(p * keep);
        gRow[j] = T(s.scale * p * (acc_t(gRow[j]) * keep - rowTerm));
      }
      std::fill(pRow + keys, pRow + s.tk, T(0));
      std::fill(gRow + keys, gRow + s.tk, T(0));
    }
    // dV_h = dropout(P)^T dO_h, dQ_h = dS K_h, dK_h = dS^T Q_h.
    detail::gemm(s.tk, s.dv, s.tq, kept, 1, s.tk, dO, vwidth, 1,
                 dv + b * s.tk * vwidth + h * s.dv, vwidth);
    detail::gemm(s.tq, s.d, s.tk, grads, s.tk, 1, head.k, width, 1,
                 dq + b * s.tq * width + h * s.d, width);
    detail::gemm(s.tk, s.d, s.tq, grads, 1, s.tk, head.q, width, 1,
                 dk + b * s.tk * width + h * s.d, width);
  }
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_ATTENTION_H
