//===- AttentionProducts.h - An attention's head products as matmuls -*- C++ -*-===//
//
// The cuda target's attention (runtime/cuda/device/Attention.cuh) runs its
// head products (Q K^T, P V; backward Q K^T again, dO V^T, P^T dO, dS K,
// dS^T Q) as cuBLASLt strided batched matmuls in f32. q, k, v, out and their
// gradients are [n, t, heads*width]: head h of sample b is a row-major
// [t, width] matrix at (b*t*heads + h)*width with row stride heads*width;
// the scores are [n*heads, tq, tk]. Every operand has a uniform stride over
// the samples of one head (t*heads*width; heads*tq*tk for the scores) and
// over the heads of one sample (width, the heads' matrices interleaved;
// tq*tk), but none over both: cuBLASLt has one batch level. So a product is
// a batch over the larger of the two, one launch per entry of the other
// (heads <= n in most models: `heads` launches of a batch of n). The
// compiler (codegen/cuda/StepProblems.cpp: what `tcc tune` times), the
// tuner and the trainer pose them through these functions. Plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_ATTENTIONPRODUCTS_H
#define TCC_RUNTIME_CUDA_ATTENTIONPRODUCTS_H

#include "runtime/cuda/MatmulProblem.h"
#include "runtime/kernels/Attention.h"

#include <cstdint>
#include <vector>

namespace tcc::cuda {

/// One head product: its problem (column-major, batched over the samples
/// or over the heads), run `count` times, launch i with A, B and C moved on
/// by i times stepA, stepB, stepC elements.
struct AttentionProduct {
  MatmulProblem problem;
  int64_t count, stepA, stepB, stepC;
};

namespace detail {

/// `p` batched over the samples or the heads, whichever are more, given
/// each operand's offset from one sample to the next ([0]) and from one
/// head to the next ([1]).
inline AttentionProduct arrange(const rt::kernels::AttentionShape &s, const MatmulProblem &p,
                                const int64_t a[2], const int64_t b[2], const int64_t c[2]) {
  const int batched = s.n >= s.heads ? 0 : 1, looped = 1 - batched;
  const int64_t sizes[2] = {s.n, s.heads};
  return {p.batched(sizes[batched], a[batched], b[batched], c[batched]), sizes[looped],
          a[looped], b[looped], c[looped]};
}

} // namespace detail

/// S[h, i, j] = x_i . y_j over head h's `width` columns (Q K^T, dO V^T): x
/// [n, tq, heads*width], y [n, tk, heads*width], S [n*heads, tq, tk]. Posed
/// as S^T = y x^T: A = y (transposed), B = x, C = S.
inline AttentionProduct attentionScores(const rt::kernels::AttentionShape &s, int64_t width) {
  const int64_t row = s.heads * width;
  const MatmulProblem p{MatmulType::f32, true, false, s.tk, s.tq, width, row, row, s.tk,
                        false, MatmulActivation::none};
  const int64_t a[2] = {s.tk * row, width}, b[2] = {s.tq * row, width},
                c[2] = {s.heads * s.tq * s.tk, s.tq * s.tk};
  return detail::arrange(s, p, a, b, c);
}

/// out[i, h*width + c] = sum_j M[h, i, j] y[j, h*width + c] (P V, dS K): y
/// [n, tk, heads*width], out [n, tq, heads*width]. out_h^T = y_h^T M_h^T:
/// A = y, B = M, C = out.
inline AttentionProduct attentionMix(const rt::kernels::AttentionShape &s, int64_t width) {
  const int64_t row = s.heads * width;
  const MatmulProblem p{MatmulType::f32, false, false, width, s.tq, s.tk, row, s.tk, row,
                        false, MatmulActivation::none};
  const int64_t a[2] = {s.tk * row, width}, b[2] = {s.heads * s.tq * s.tk, s.tq * s.tk},
                c[2] = {s.tq * row, width};
  return detail::arrange(s, p, a, b, c);
}

/// out[j, h*width + c] = sum_i M[h, i, j] y[i, h*width + c] (P^T dO, dS^T
/// Q): y [n, tq, heads*width], out [n, tk, heads*width]. out_h^T = y_h^T
/// M_h: A = y, B = M (transposed), C = out.
inline AttentionProduct attentionMixTransposed(const rt::kernels::AttentionShape &s,
                                               int64_t width) {
  const int64_t row = s.heads * width;
  const MatmulProblem p{MatmulType::f32, false, true, width, s.tk, s.tq, row, s.tk, row,
                        false, MatmulActivation::none};
  const int64_t a[2] = {s.tq * row, width}, b[2] = {s.heads * s.tq * s.tk, s.tq * s.tk},
                c[2] = {s.tk * row, width};
  return detail::arrange(s, p, a, b, c);
}

/// The problems the forward (Q K^T, P V) or the backward (Q K^T, dO V^T,
/// P^T dO, dS K, dS^T Q) poses, in that order (some may be equal).
inline std::vector<MatmulProblem> attentionProblems(const rt::kernels::AttentionShape &s,
                                                    bool backward) {
  if (!backward)
    return {attentionScores(s, s.d).problem, attentionMix(s, s.dv).problem};
  return {attentionScores(s, s.d).problem, attentionScores(s, s.dv).problem,
          attentionMixTransposed(s, s.dv).problem, attentionMix(s, s.d).problem,
          attentionMixTransposed(s, s.d).problem};
}

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_ATTENTIONPRODUCTS_H
