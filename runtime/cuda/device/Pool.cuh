//===- Pool.cuh - Pooling on the device ----------------------------*- CUDA -*-===//
//
// The per-element functions of runtime/kernels/Pool.h, one thread per
// output element forward and per input element backward: the same windows,
// first-maximum rule and summation order as the cpu target's per-plane
// loops, so the same bits, and neighbouring threads read neighbouring
// elements. Max pools whose windows tile the input (kernels::windows_tile:
// a 2x2 pool of stride 2, say, the common case) run one thread per window
// instead, on kChunk neighbouring channels of an NHWC tensor (16-byte
// vectors): each window's maximum is found once, where the per-element
// backward found it again for each of the window's elements. Max pools
// also run on 16-bit tensors (T = half::F16 / BF16), comparing and summing
// in f32. The global pools run one thread per plane (their planes are the
// last layer's few elements). Each takes NCHW or NHWC (channelsLast:
// tcc-channels-last) tensors: the _nhwc_at functions, the same sums.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_POOL_CUH
#define TCC_RUNTIME_CUDA_DEVICE_POOL_CUH

#include "runtime/cuda/device/Chunk.cuh"
#include "runtime/cuda/device/Launch.cuh"
#include "runtime/kernels/Pool.h"

namespace tcc::rt::cuda {

using kernels::Pool2dShape;

/// The windows of a pool that tile its input (kernels::windows_tile), one
/// thread per window and kChunk neighbouring channels of an NHWC tensor
/// (an NCHW one is the NHWC tensor of n*C samples of one channel), in
/// 32-bit index math (fewer than 2^31 elements).
struct TiledWindows {
  int32_t c, groups, h, w, oh, ow, kh, kw;
  int64_t threads;

  static bool applies(const Pool2dShape &s) {
    return kernels::windows_tile(s) && s.n * s.c * s.h * s.w < (int64_t(1) << 31);
  }
  static TiledWindows of(const Pool2dShape &s, bool channelsLast) {
    const int64_t c = channelsLast ? s.c : 1, groups = (c + kChunk - 1) / kChunk;
    return {int32_t(c),    int32_t(groups), int32_t(s.h),  int32_t(s.w),
            int32_t(s.oh), int32_t(s.ow),   int32_t(s.kh), int32_t(s.kw),
            s.n * s.c / c * s.oh * s.ow * groups};
  }
  /// A thread's window: the index of its top left element at its first
  /// channel, of its output there, how many channels it takes, and the rows
  /// and columns it writes in a backward: the window's, and in the last
  /// window of a row or column those past it, in no window.
  struct Window {
    int32_t first, out, rows, cols;
    int count;
  };
  TCC_HOST_DEVICE Window locate(int32_t t) const {
    const int32_t group = t % groups, window = t / groups; // (sample * oh + oy) * ow + ox
    const int32_t ox = window % ow, row = window / ow, sample = row / oh, oy = row - sample * oh;
    const int32_t c0 = group * kChunk;
    return {((sample * h + oy * kh) * w + ox * kw) * c + c0, window * c + c0,
            oy == oh - 1 ? h - oy * kh : kh, ox == ow - 1 ? w - ox * kw : kw,
            c - c0 < kChunk ? int(c - c0) : kChunk};
  }
  /// Element (ky, kx) of a window, from its top left one.
  TCC_HOST_DEVICE int32_t offset(int32_t ky, int32_t kx) const { return (ky * w + kx) * c; }
};

namespace detail {
/// The first maximum of each of a window's channels (kernels::detail::
/// FirstMaximum: the cpu kernels' choice), as the window's element index
/// (row-major); `value` gets it as stored where given.
template <class T>
TCC_HOST_DEVICE void window_maxima(const TiledWindows &tiles, const TiledWindows::Window &win,
                                   const T *x,
                                   kernels::detail::FirstMaximum<T, int32_t> (&m)[kChunk],
                                   T *value) {
  int32_t e = 0;
  for (int32_t ky = 0; ky < tiles.kh; ++ky)
    for (int32_t kx = 0; kx < tiles.kw; ++kx, ++e) {
      alignas(16) T v[kChunk];
      load_chunk(x, win.first + tiles.offset(ky, kx), win.count, v);
#pragma unroll
      for (int k = 0; k < kChunk; ++k) {
        if (k < win.count) {
          m[k].offer(v[k], e);
          if (value && m[k].best == e)
            value[k] = v[k];
        }
      }
    }
}
} // namespace detail

// Each layout is its own kernel (one branch inside would keep both paths'
// registers: the backward's spill).

template <class T>
void max_pool2d_forward(cudaStream_t s, const Pool2dShape &shape, bool channelsLast, const T *x,
                        T *y) {
  if (TiledWindows::applies(shape)) {
    const TiledWindows tiles = TiledWindows::of(shape, channelsLast);
    for_each(s, tiles.threads, [=] __device__(int64_t t) {
      const TiledWindows::Window win = tiles.locate(int32_t(t));
      kernels::detail::FirstMaximum<T, int32_t> m[kChunk];
      alignas(16) T value[kChunk];
      detail::window_maxima(tiles, win, x, m, value);
      store_chunk(y, win.out, win.count, value);
    });
    return;
  }
  const int64_t n = shape.n * shape.c * shape.oh * shape.ow;
  if (channelsLast)
    for_each(s, n, [=] __device__(int64_t i) { kernels::max_pool2d_forward_nhwc_at(shape, x, y, i); });
  else
    for_each(s, n, [=] __device__(int64_t i) { kernels::max_pool2d_forward_at(shape, x, y, i); });
}

/// Its index math in 32 bits (a 64-bit division is a subroutine call,
/// whose registers spill around the window loop). On tiled windows, each
/// element of a window gets 0 + the window's dy at its maximum and 0
/// elsewhere: the per-element form's sum over the one window that holds it.
template <class T>
void max_pool2d_backward(cudaStream_t s, const Pool2dShape &shape, bool channelsLast,
                         const T *x, const T *dy, T *dx) {
  using C = kernels::ComputeOf<T>;
  if (TiledWindows::applies(shape)) {
    const TiledWindows tiles = TiledWindows::of(shape, channelsLast);
    for_each(s, tiles.threads, [=] __device__(int64_t t) {
      const TiledWindows::Window win = tiles.locate(int32_t(t));
      kernels::detail::FirstMaximum<T, int32_t> m[kChunk];
      detail::window_maxima<T>(tiles, win, x, m, nullptr);
      alignas(16) T g[kChunk];
      load_chunk(dy, win.out, win.count, g);
      for (int32_t ky = 0; ky < win.rows; ++ky)
        for (int32_t kx = 0; kx < win.cols; ++kx) {
          // Element e of the window; past it (no window), none.
          const int32_t e = ky < tiles.kh && kx < tiles.kw ? ky * tiles.kw + kx : -1;
          alignas(16) T d[kChunk];
#pragma unroll
          for (int k = 0; k < kChunk; ++k)
            d[k] = T(C(0) + (k < win.count && m[k].best == e ? kernels::widened<C>(g[k]) : C(0)));
          store_chunk(dx, win.first + tiles.offset(ky, kx), win.count, d);
        }
    });
    return;
  }
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
