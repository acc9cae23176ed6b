//===- Pool.cuh - Pooling on the device ----------------------------*- CUDA -*-===//
//
// The cpu kernels' per-plane functions (runtime/kernels/Pool.h), one thread
// per plane of [n, C, H, W]: the same windows, the same first-maximum rule
// and summation order as the cpu target.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_POOL_CUH
#define TCC_RUNTIME_CUDA_DEVICE_POOL_CUH

#include "runtime/cuda/device/Launch.cuh"
#include "runtime/kernels/Pool.h"

namespace tcc::rt::cuda {

using kernels::Pool2dShape;

template <class T>
void max_pool2d_forward(cudaStream_t s, const Pool2dShape &shape, const T *x, T *y) {
  for_each(s, shape.n * shape.c,
           [=] __device__(int64_t p) { kernels::max_pool2d_forward_plane(shape, x, y, p); });
}

template <class T>
void max_pool2d_backward(cudaStream_t s, const Pool2dShape &shape, const T *x, const T *dy,
                         T *dx) {
  for_each(s, shape.n * shape.c, [=] __device__(int64_t p) {
    kernels::max_pool2d_backward_plane(shape, x, dy, dx, p);
  });
}

template <class T>
void avg_pool2d_forward(cudaStream_t s, const Pool2dShape &shape, bool countIncludePad,
                        const T *x, T *y) {
  for_each(s, shape.n * shape.c, [=] __device__(int64_t p) {
    kernels::avg_pool2d_forward_plane(shape, countIncludePad, x, y, p);
  });
}

template <class T>
void avg_pool2d_backward(cudaStream_t s, const Pool2dShape &shape, bool countIncludePad,
                         const T *dy, T *dx) {
  for_each(s, shape.n * shape.c, [=] __device__(int64_t p) {
    kernels::avg_pool2d_backward_plane(shape, countIncludePad, dy, dx, p);
  });
}

/// y [n, c] = the mean of each plane of x [n, c, hw], in double.
template <class T>
void global_avg_pool_forward(cudaStream_t s, int64_t n, int64_t c, int64_t hw, const T *x,
                             T *y) {
  for_each(s, n * c, [=] __device__(int64_t p) {
    double sum = 0;
    for (int64_t j = 0; j < hw; ++j)
      sum += x[p * hw + j];
    y[p] = T(sum / double(hw));
  });
}

template <class T>
void global_avg_pool_backward(cudaStream_t s, int64_t n, int64_t c, int64_t hw, const T *dy,
                              T *dx) {
  for_each(s, n * c * hw, [=] __device__(int64_t i) { dx[i] = dy[i / hw] / T(hw); });
}

template <class T>
void global_max_pool_forward(cudaStream_t s, int64_t n, int64_t c, int64_t hw, const T *x,
                             T *y) {
  for_each(s, n * c, [=] __device__(int64_t p) {
    y[p] = x[p * hw + kernels::detail::plane_argmax(x + p * hw, hw)];
  });
}

template <class T>
void global_max_pool_backward(cudaStream_t s, int64_t n, int64_t c, int64_t hw, const T *x,
                              const T *dy, T *dx) {
  for_each(s, n * c, [=] __device__(int64_t p) {
    for (int64_t j = 0; j < hw; ++j)
      dx[p * hw + j] = T(0);
    dx[p * hw + kernels::detail::plane_argmax(x + p * hw, hw)] = dy[p];
  });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_POOL_CUH
