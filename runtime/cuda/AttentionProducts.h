//===- AttentionProducts.h - An attention's head products as matmuls -*- C++ -*-===//
//
// The cuda target's attention (runtime/cuda/device/Attention.cuh) runs its
// head products (Q K^T, P V; backward Q K^T again, dO V^T, P^T dO, dS K,
// dS^T Q) as cuBLASLt strided batched matmuls in f32. q, k, v, out and their
// gradients are [n, t, heads*width]: head h of sample b is a row-major
// [t, width] matrix at (b*t*heads + h)*width with row stride heads*width.
// Over the heads of one sample that is a uniform batch stride (width);
// over the samples it is not (t*heads*width between samples, width between
// heads), so each product is one launch per sample with a batch of `heads`
// (the scores [n*heads, tq, tk] are contiguous, stride tq*tk). The compiler
// (codegen/cuda/StepProblems.cpp: what `tcc tune` times), the tuner and the
// trainer pose them through these functions. Plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_ATTENTIONPRODUCTS_H
#define TCC_RUNTIME_CUDA_ATTENTIONPRODUCTS_H

#include "runtime/cuda/MatmulProblem.h"
#include "runtime/kernels/Attention.h"

#include <cstdint>
#include <vector>

namespace tcc::cuda {

/// One head product of one sample: its problem (column-major, a batch over
/// the heads) and how far sample b's A, B and C start from sample 0's
/// (b times these, in elements).
struct AttentionProduct {
  MatmulProblem problem;
  int64_t sampleA, sampleB, sampleC;
};

/// S[h, i, j] = x_i . y_j over head h's `width` columns (Q K^T, dO V^T): x
/// [n, tq, heads*width], y [n, tk, heads*width], S [n*heads, tq, tk]. Posed
/// as S^T = y x^T: A = y (transposed), B = x, C = S.
inline AttentionProduct attentionScores(const rt::kernels::AttentionShape &s, int64_t width) {
  const int64_t row = s.heads * width;
  MatmulProblem p{MatmulType::f32, true, false, s.tk, s.tq, width, row, row, s.tk,
                  false, MatmulActivation::none};
  return {p.batched(s.heads, width, width, s.tq * s.tk), s.tk * row, s.tq * row,
          s.heads * s.tq * s.tk};
}

/// out[i, h*width + c] = sum_j M[h, i, j] y[j, h*width + c] (P V, dS K): y
/// [n, tk, heads*width], out [n, tq, heads*width]. out_h^T = y_h^T M_h^T:
/// A = y, B = M, C = out.
inline AttentionProduct attentionMix(const rt::kernels::AttentionShape &s, int64_t width) {
  const int64_t row = s.heads * width;
  MatmulProblem p{MatmulType::f32, false, false, width, s.tq, s.tk, row, s.tk, row,
                  false, MatmulActivation::none};
  return {p.batched(s.heads, width, s.tq * s.tk, width), s.tk * row, s.heads * s.tq * s.tk,
          s.tq * row};
}

/// out[j, h*width + c] = sum_i M[h, i, j] y[i, h*width + c] (P^T dO, dS^T
/// Q): y [n, tq, heads*width], out [n, tk, heads*width]. out_h^T = y_h^T
/// M_h: A = y, B = M (transposed), C = out.
inline AttentionProduct attentionMixTransposed(const rt::kernels::AttentionShape &s,
                                               int64_t width) {
  const int64_t row = s.heads * width;
  MatmulProblem p{MatmulType::f32, false, true, width, s.tk, s.tq, row, s.tk, row,
                  false, MatmulActivation::none};
  return {p.batched(s.heads, width, s.tq * s.tk, width), s.tq * row, s.heads * s.tq * s.tk,
          s.tk * row};
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
