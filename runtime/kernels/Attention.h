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
// Products over the head dims run in T (vectorised: a GEMM's precision);
// the row statistics (max, sum, lse, D) and p in double.
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

/// The keys query row i sees: [0, attention_keys(s, i)).
inline int64_t attention_keys(const AttentionShape &s, int64_t i) {
  return s.causal ? std::min(i + 1, s.tk) : s.tk;
}

/// The scores s_j = scale * q_i . k_j of row i of (sample b, head h) into
/// `scores` (acc_t, length attention_keys).
template <class T>
void attention_scores(const AttentionShape &s, const T *q, const T *k, int64_t b,
                      int64_t h, int64_t i, acc_t *scores) {
  const int64_t width = s.heads * s.d;
  const T *qi = q + (b * s.tq + i) * width + h * s.d;
  for (int64_t j = 0, keys = attention_keys(s, i); j < keys; ++j) {
    const T *kj = k + (b * s.tk + j) * width + h * s.d;
    T dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int64_t c = 0; c < s.d; ++c)
      dot += qi[c] * kj[c];
    scores[j] = s.scale * acc_t(dot);
  }
}

/// The dropout factor of probability (b, h, i, j): 0 or 1/(1-p).
inline acc_t attention_keep(const AttentionShape &s, const AttentionDropout &drop, int64_t b,
                            int64_t h, int64_t i, int64_t j) {
  if (drop.p <= 0)
    return 1;
  const uint64_t index = drop.first + uint64_t(((b * s.heads + h) * s.tq + i) * s.tk + j);
  return dropout::keep(drop.p, drop.seed, drop.stream, index) ? dropout::keptScale(drop.p)
                                                               : 0;
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
    std::vector<acc_t> scores(size_t(s.tk));
    std::vector<T> row(size_t(s.dv));
    for (int64_t i = 0; i < s.tq; ++i) {
      const int64_t keys = detail::attention_keys(s, i);
      detail::attention_scores(s, q, k, b, h, i, scores.data());
      acc_t mx = -std::numeric_limits<acc_t>::infinity();
      for (int64_t j = 0; j < keys; ++j)
        mx = std::max(mx, scores[j]);
      acc_t sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        scores[j] = std::exp(scores[j] - mx); // one exp per element: the kernel's cost
        sum += scores[j];
      }
      lse[bh * s.tq + i] = T(mx + std::log(sum));
      std::fill(row.begin(), row.end(), T(0));
      for (int64_t j = 0; j < keys; ++j) {
        const T p = T(scores[j] / sum * detail::attention_keep(s, drop, b, h, i, j));
        if (p == 0)
          continue;
        const T *vj = v + (b * s.tk + j) * vwidth + h * s.dv;
#pragma omp simd
        for (int64_t c = 0; c < s.dv; ++c)
          row[c] += p * vj[c];
      }
      T *oi = out + (b * s.tq + i) * vwidth + h * s.dv;
      for (int64_t c = 0; c < s.dv; ++c)
        oi[c] = row[c];
    }
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
    std::vector<acc_t> scores(size_t(s.tk));
    std::vector<T> dqi(size_t(s.d)), dkh(size_t(s.tk * s.d), T(0)), dvh(size_t(s.tk * s.dv), T(0));
    for (int64_t i = 0; i < s.tq; ++i) {
      const int64_t keys = detail::attention_keys(s, i);
      detail::attention_scores(s, q, k, b, h, i, scores.data());
      const T *doi = dout + (b * s.tq + i) * vwidth + h * s.dv;
      const T *oi = out + (b * s.tq + i) * vwidth + h * s.dv;
      const T *qi = q + (b * s.tq + i) * width + h * s.d;
      acc_t rowTerm = 0; // D_i
      for (int64_t c = 0; c < s.dv; ++c)
        rowTerm += acc_t(doi[c]) * acc_t(oi[c]);
      const acc_t logSum = acc_t(lse[bh * s.tq + i]);
      std::fill(dqi.begin(), dqi.end(), T(0));
      for (int64_t j = 0; j < keys; ++j) {
        const acc_t p = std::exp(scores[j] - logSum);
        const acc_t keep = detail::attention_keep(s, drop, b, h, i, j);
        const T *vj = v + (b * s.tk + j) * vwidth + h * s.dv;
        const T *kj = k + (b * s.tk + j) * width + h * s.d;
        const T kept = T(p * keep);
        T dp = 0;
#pragma omp simd reduction(+ : dp)
        for (int64_t c = 0; c < s.dv; ++c) {
          dvh[j * s.dv + c] += kept * doi[c];
          dp += doi[c] * vj[c];
        }
        const T ds = T(s.scale * p * (acc_t(dp) * keep - rowTerm));
#pragma omp simd
        for (int64_t c = 0; c < s.d; ++c) {
          dqi[c] += ds * kj[c];
          dkh[j * s.d + c] += ds * qi[c];
        }
      }
      T *dq_i = dq + (b * s.tq + i) * width + h * s.d;
      for (int64_t c = 0; c < s.d; ++c)
        dq_i[c] = dqi[c];
    }
    for (int64_t j = 0; j < s.tk; ++j) {
      T *dkj = dk + (b * s.tk + j) * width + h * s.d;
      T *dvj = dv + (b * s.tk + j) * vwidth + h * s.dv;
      for (int64_t c = 0; c < s.d; ++c)
        dkj[c] = dkh[j * s.d + c];
      for (int64_t c = 0; c < s.dv; ++c)
        dvj[c] = dvh[j * s.dv + c];
    }
  }
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_ATTENTION_H
