//===- Pool.cuh - Pooling on the device ----------------------------*- CUDA -*-===//
//
// The per-element functions of runtime/kernels/Pool.h, one thread per
// output element forward and per input element backward: the same windows,
// first-maximum rule and summation order as the cpu target's per-plane
// loops, so the same bits, and neighbouring threads read neighbouring
// elements. Max pools also run on 16-bit tensors (T = half::F16 / BF16),
// comparing and summing in f32. The global pools run one thread per plane (their planes are the
// last layer's few elements). Each takes NCHW or NHWC (channelsLast:
// tcc-channels-last) tensors: the _nhwc_at functions, the same sums.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_POOL_CUH
#define TCC_RUNTIME_CUDA_DEVICE_POOL_CUH

#include "runtime/cuda/device/Launch.cuh"
#include "runtime/kernels/Pool.h"

namespace tcc::rt::cuda {

using kernels::Pool2dShape;

// Each layout is its own kernel (one branch inside would keep both paths'
// registers: the backward's spill).

template <class T>
void max_pool2d_forward(cudaStream_t s, const Pool2dShape &shape, bool channelsLast, const T *x,
                        T *y) {
  const int64_t n = shape.n * shape.c * shape.oh * shape.ow;
  if (channelsLast)
    for_each(s, n, [=] __device__(int64_t i) { kernels::max_pool2d_forward_nhwc_at(shape, x, y, i); });
  else
    for_each(s, n, [=] __device__(int64_t i) { kernels::max_pool2d_forward_at(shape, x, y, i); });
}

/// Its index math in 32 bits (a 64-bit division is a subroutine call,
/// whose registers spill around the window loop).
template <class T>
void max_pool2d_backward(cudaStream_t s, const Pool2dShape &shape, bool channelsLast,
                         const T *x, const T *dy, T *dx) {
  const int64_t n = shape.n * shape.c * shape.h * shape.w;
  if (n >= (int64_t(1) << 31))
    throw std::runtime_error("a max pool backward over 2^31 elements or more");
  if (channelsLast)
    for_each(s, n, [=] __device__(int64_t i) {
      kernels::max_pool2d_backward_nhwc_at<T, int32_t>(shape, x, dy, dx, i);
    });
  else
    for_each(s, n, [=] __device__(int64_t i) {
      kernels::max_pool2d_backward_at<T, int32_t>(shape, x, dy, dx, i);
    });
}

template <class T>
void avg_pool2d_forward(cudaStream_t s, const Pool2dShape &shape, bool channelsLast,
                        bool countIncludePad, const T *x, T *y) {
  const int64_t n = shape.n * shape.c * shape.oh * shape.ow;
  if (channelsLast)
    for_each(s, n, [=] __device__(int64_t i) {
      kernels::avg_pool2d_forward_nhwc_at(shape, countIncludePad, x, y, i);
    });
  else
    for_each(s, n, [=] __device__(int64_t i) {
      kernels::avg_pool2d_forward_at(shape, countIncludePad, x, y, i);
    });
}

template <class T>
void avg_pool2d_backward(cudaStream_t s, const Pool2dShape &shape, bool channelsLast,
                         bool countIncludePad, const T *dy, T *dx) {
  const int64_t n = shape.n * shape.c * shape.h * shape.w;
  if (channelsLast && n < (int64_t(1) << 31)) // 32-bit index math, as above
    for_each(s, n, [=] __device__(int64_t i) {
      kernels::avg_pool2d_backward_nhwc_at<T, int32_t>(shape, countIncludePad, dy, dx, i);
    });
  else if (channelsLast)
    for_each(s, n, [=] __device__(int64_t i) {
      kernels::avg_pool2d_backward_nhwc_at(shape, countIncludePad, dy, dx, i);
    });
  else
    for_each(s, n, [=] __device__(int64_t i) {
      kernels::avg_pool2d_backward_at(shape, countIncludePad, dy, dx, i);
    });
}

/// Plane p of x [n, c, hw], stored NCHW or NHWC.
template <class T> struct PlaneOf {
  T *x;
  int64_t c, hw;
  bool channelsLast;
  TCC_HOST_DEVICE T &at(int64_t p, int64_t j) const {
    return channelsLast ? kernels::channels_last_plane(x, c, hw, p)[j] : x[p * hw + j];
  }
  /// The first maximal element of plane p (kernels::detail::plane_argmax).
  TCC_HOST_DEVICE int64_t argmax(int64_t p) const {
    return channelsLast
               ? kernels::detail::plane_argmax(kernels::channels_last_plane(x, c, hw, p), hw)
               : kernels::detail::plane_argmax(x + p * hw, hw);
  }
};

/// y [n, c] = the mean of each plane of x [n, c, hw], in double.
template <class T>
void global_avg_pool_forward(cudaStream_t s, int64_t n, int64_t c, int64_t hw,
                             bool channelsLast, const T *x, T *y) {
  const PlaneOf<const T> planes{x, c, hw, channelsLast};
  for_each(s, n * c, [=] __device__(int64_t p) {
    double sum = 0;
    for (int64_t j = 0; j < hw; ++j)
      sum += planes.at(p, j);
    y[p] = T(sum / double(hw));
  });
}

/// dx (element i as stored) = dy of its plane / hw.
template <class T>
void global_avg_pool_backward(cudaStream_t s, int64_t n, int64_t c, int64_t hw,
                              bool channelsLast, const T *dy, T *dx) {
  for_each(s, n * c * hw, [=] __device__(int64_t i) {
    const int64_t plane = channelsLast ? i / (c * hw) * c + i % c : i / hw;
    dx[i] = dy[plane] / T(hw);
  });
}

template <class T>
void global_max_pool_forward(cudaStream_t s, int64_t n, int64_t c, int64_t hw,
                             bool channelsLast, const T *x, T *y) {
  const PlaneOf<const T> planes{x, c, hw, channelsLast};
  for_each(s, n * c, [=] __device__(int64_t p) { y[p] = planes.at(p, planes.argmax(p)); });
}

template <class T>
void global_max_pool_backward(cudaStream_t s, int64_t n, int64_t c, int64_t hw,
                              bool channelsLast, const T *x, const T *dy, T *dx) {
  const PlaneOf<const T> planes{x, c, hw, channelsLast};
  const PlaneOf<T> out{dx, c, hw, channelsLast};
  for_each(s, n * c, [=] __device__(int64_t p) {
    for (int64_t j = 0; j < hw; ++j)
      out.at(p, j) = T(0);
    out.at(p, planes.argmax(p)) = dy[p];
  });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_POOL_CUH
