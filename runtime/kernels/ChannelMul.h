//===- ChannelMul.h - A per-(sample, channel) gate times a tensor -*- C++ -*-===//
//
// tcc.channel_mul: y[n, c, j] = x[n, c, j] * gate[n, c] for x [n, c, hw] and
// gate [n, c] (model.json's `mul` of a [N, C, H, W] tensor and a [N, C]
// gate: squeeze-and-excitation's channel gates). Its gradient with respect
// to the gate, tcc.channel_mul_backward_gate, sums dy * x over each plane in
// acc_t; the gradient with respect to x is channel_mul(dy, gate). Per-element
// and per-plane functions for the cpu loops and the cuda target's threads.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_CHANNELMUL_H
#define TCC_RUNTIME_KERNELS_CHANNELMUL_H

#include "runtime/common/HostDevice.h"
#include "runtime/kernels/Common.h"

#include <cstdint>

namespace tcc::rt::kernels {

/// Element k of channel_mul (k the flat index into [n, c, hw]).
template <class T>
TCC_HOST_DEVICE inline T channel_mul_at(int64_t hw, const T *x, const T *gate, int64_t k) {
  return x[k] * gate[k / hw];
}

/// The gate gradient of plane p (p = n * C + c): sum over j of dy * x.
template <class T>
TCC_HOST_DEVICE inline T channel_mul_gate_grad_at(int64_t hw, const T *dy, const T *x,
                                                  int64_t p) {
  acc_t sum = 0;
  for (int64_t j = 0; j < hw; ++j)
    sum += acc_t(dy[p * hw + j]) * acc_t(x[p * hw + j]);
  return T(sum);
}

/// y [planes, hw] = x * gate, gate [planes] broadcast over each plane.
template <class T>
void channel_mul(int64_t planes, int64_t hw, const T *x, const T *gate, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < planes * hw; ++k)
    y[k] = channel_mul_at(hw, x, gate, k);
}

/// dgate [planes] = sum over each plane of dy * x.
template <class T>
void channel_mul_backward_gate(int64_t planes, int64_t hw, const T *dy, const T *x,
                               T *dgate) {
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < planes; ++p)
    dgate[p] = channel_mul_gate_grad_at(hw, dy, x, p);
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_CHANNELMUL_H
