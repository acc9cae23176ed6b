//===- Softmax.cuh - softmax and log_softmax on the device ---------*- CUDA -*-===//
//
// The cpu kernels' per-position functions (runtime/kernels/Softmax.h), one
// thread per (outer, inner) position, each walking its axis: the same sums
// in the same order as the cpu target.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_SOFTMAX_CUH
#define TCC_RUNTIME_CUDA_DEVICE_SOFTMAX_CUH

#include "runtime/cuda/device/Launch.cuh"
#include "runtime/kernels/Softmax.h"

namespace tcc::rt::cuda {

/// softmax (Log: log_softmax) along the middle axis of [outer, axis, inner].
template <bool Log, class T>
void softmax_forward(cudaStream_t s, int64_t outer, int64_t axis, int64_t inner, const T *x,
                     T *y) {
  for_each(s, outer * inner, [=] __device__(int64_t p) {
    kernels::softmax_at<T, Log>(axis, inner, x, y, p / inner, p % inner);
  });
}

/// The backward of softmax (Log: log_softmax), from its output y.
template <bool Log, class T>
void softmax_backward(cudaStream_t s, int64_t outer, int64_t axis, int64_t inner, const T *y,
                      const T *dy, T *dx) {
  for_each(s, outer * inner, [=] __device__(int64_t p) {
    if (Log)
      kernels::log_softmax_backward_at(axis, inner, y, dy, dx, p / inner, p % inner);
    else
      kernels::softmax_backward_at(axis, inner, y, dy, dx, p / inner, p % inner);
  });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_SOFTMAX_CUH
