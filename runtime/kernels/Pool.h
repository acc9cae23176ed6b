//===- Pool.h - max / average pooling, 2-D and global -----------*- C++ -*-===//
//
// torch.nn.functional.max_pool2d / avg_pool2d (no dilation) on NCHW, and the
// global pools [n, C, H, W] -> [n, C] (adaptive_*_pool2d to 1x1, flattened).
// Each kernel is a loop over the n*C planes of a per-plane function
// (`*_plane`). The cuda target runs per-element functions instead, one
// thread per output element forward and per input element backward (`*_at`,
// host and device): the same windows, the same first-maximum rule and, in
// the backward, the same sums in the same order (a gather over the windows
// that contain an input element, in output order, where the plane function
// scatters each window in output order), so the same bits.
//
// Window of output (oy, ox): rows [oy*sh - ph, oy*sh - ph + kh), columns
// likewise, as PyTorch's CPU kernels compute it:
//  - max: padding counts as -inf (it never wins). The window's maximum is the
//    FIRST maximal element in row-major window order; a NaN wins over every
//    number (each NaN met replaces the current choice, as PyTorch does).
//    The backward recomputes that choice from x and routes the window's dy to
//    it; windows may overlap, so dx sums the contributions (it is zeroed
//    first).
//  - avg: end = min(start + k, in + p) per axis; pool_size = (hend-hstart) *
//    (wend-wstart) with that end; then the window is clipped to the input.
//    divisor = count_include_pad ? pool_size : (clipped rows * clipped cols).
//    An empty clipped window gives 0.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_POOL_H
#define TCC_RUNTIME_KERNELS_POOL_H

#include "runtime/common/HostDevice.h"
#include "runtime/kernels/Common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace tcc::rt::kernels {

struct Pool2dShape {
  int64_t n, c, h, w; ///< input
  int64_t kh, kw;     ///< kernel
  int64_t sh, sw;     ///< stride (PyTorch's default stride is the kernel size)
  int64_t ph, pw;     ///< padding
  int64_t oh, ow;     ///< output size (see pool_out_size)
};

/// PyTorch's pooling_output_shape (dilation 1).
inline int64_t pool_out_size(int64_t in, int64_t k, int64_t s, int64_t p,
                             bool ceil_mode = false) {
  int64_t out = (in + 2 * p - k + (ceil_mode ? s - 1 : 0)) / s + 1;
  if (ceil_mode && (out - 1) * s >= in + p)
    --out;
  return out;
}

/// A Pool2dShape with oh/ow computed (floor mode unless ceil_mode).
inline Pool2dShape make_pool2d_shape(int64_t n, int64_t c, int64_t h, int64_t w,
                                     int64_t kh, int64_t kw, int64_t sh,
                                     int64_t sw, int64_t ph = 0, int64_t pw = 0,
                                     bool ceil_mode = false) {
  Pool2dShape s{n, c, h, w, kh, kw, sh, sw, ph, pw, 0, 0};
  s.oh = pool_out_size(h, kh, sh, ph, ceil_mode);
  s.ow = pool_out_size(w, kw, sw, pw, ceil_mode);
  return s;
}

namespace detail {
/// The first maximal of the values offered in order, a NaN winning over
/// every number (the last NaN offered wins, as in PyTorch's kernels), and
/// its index. 16-bit stored values (half::F16 / BF16) are compared by their
/// order keys, without widening each one: the same choice as comparing them
/// widened. `best` starts at the first index (all values -inf: the first).
template <class S, class I, bool = std::is_floating_point_v<S>> struct FirstMaximum {
  I best{};
  S max = -std::numeric_limits<S>::infinity();
  FirstMaximum() = default;
  TCC_HOST_DEVICE explicit FirstMaximum(I first) : best(first) {}
  TCC_HOST_DEVICE void offer(S v, I index) {
    if (v > max || std::isnan(v)) {
      max = v;
      best = index;
    }
  }
};
template <class S, class I> struct FirstMaximum<S, I, false> {
  I best{};
  uint16_t key = S::kNegativeInfinityKey; ///< the maximum so far, as an order key
  bool nan = false;                       ///< a NaN seen: only another NaN is taken
  FirstMaximum() = default;
  TCC_HOST_DEVICE explicit FirstMaximum(I first) : best(first) {}
  TCC_HOST_DEVICE void offer(S v, I index) {
    if (v.isNan()) {
      nan = true;
      best = index;
    } else if (!nan && v.orderKey() > key) {
      key = v.orderKey();
      best = index;
    }
  }
};

/// Index (within the plane) of the first maximal element of the window of
/// output (oy, ox) in row-major window order, and its value.
template <class I = int64_t, class T, class Plane>
TCC_HOST_DEVICE I max_pool_argmax(const Pool2dShape &s, const Plane &xp, I oy, I ox, T &maxval) {
  using S = std::remove_cv_t<std::remove_reference_t<decltype(xp[0])>>;
  const I hs0 = oy * I(s.sh) - I(s.ph), ws0 = ox * I(s.sw) - I(s.pw);
  const I he = std::min<I>(hs0 + I(s.kh), I(s.h)), we = std::min<I>(ws0 + I(s.kw), I(s.w));
  const I hs = std::max<I>(hs0, 0), ws = std::max<I>(ws0, 0), w = I(s.w);
  FirstMaximum<S, I> m(hs * w + ws);
  for (I iy = hs; iy < he; ++iy)
    for (I ix = ws; ix < we; ++ix)
      m.offer(xp[iy * w + ix], iy * w + ix);
  maxval = widened<T>(xp[m.best]);
  return m.best;
}

struct AvgWindow {
  int64_t hs, he, ws, we, divisor;
};
TCC_HOST_DEVICE inline AvgWindow avg_pool_window(const Pool2dShape &s, int64_t oy, int64_t ox,
                                 bool count_include_pad) {
  int64_t hs = oy * s.sh - s.ph, ws = ox * s.sw - s.pw;
  int64_t he = std::min(hs + s.kh, s.h + s.ph);
  int64_t we = std::min(ws + s.kw, s.w + s.pw);
  const int64_t poolSize = (he - hs) * (we - ws);
  hs = std::max<int64_t>(hs, 0);
  ws = std::max<int64_t>(ws, 0);
  he = std::min(he, s.h);
  we = std::min(we, s.w);
  const int64_t divisor = count_include_pad ? poolSize : (he - hs) * (we - ws);
  return AvgWindow{hs, he, ws, we, divisor};
}
} // namespace detail

/// Whether the windows tile the input: stride = kernel, no padding, every
/// window inside the input. Each input element is then in one window at
/// most (the rows and columns past the last window, fewer than a kernel's:
/// in none, as a 2x2 pool leaves the last row of 31), so a max pool's
/// backward writes each window's dy to its maximum and zeros elsewhere (the
/// cuda target's pools run per window then, Pool.cuh).
TCC_HOST_DEVICE inline bool windows_tile(const Pool2dShape &s) {
  return s.sh == s.kh && s.sw == s.kw && s.ph == 0 && s.pw == 0 && s.oh * s.kh <= s.h &&
         s.ow * s.kw <= s.w && s.h - s.oh * s.kh < s.kh && s.w - s.ow * s.kw < s.kw;
}

namespace detail {
/// The outputs whose windows contain input row (or column) `i` of an axis
/// of kernel k, stride st, padding pad and `out` outputs: [first, last].
/// I: the index type (int32_t on a GPU, where a 64-bit division is a
/// subroutine call, for tensors of fewer than 2^31 elements).
template <class I>
TCC_HOST_DEVICE inline void windows_containing(I i, I k, I st, I pad, I out, I &first, I &last) {
  // o * st - pad <= i < o * st - pad + k
  const I lo = i + pad - k + 1;
  first = lo <= 0 ? 0 : (lo + st - 1) / st;
  last = std::min<I>((i + pad) / st, out - 1);
}
} // namespace detail

/// Output element i (of n*C*oh*ow) of max_pool2d_forward: the window's
/// first maximal element, copied (a 16-bit S as stored: the same bits as the
/// f32 maximum rounded back).
template <class S>
TCC_HOST_DEVICE void max_pool2d_forward_at(const Pool2dShape &s, const S *x, S *y, int64_t i) {
  const int64_t plane = i / (s.oh * s.ow), o = i % (s.oh * s.ow);
  ComputeOf<S> v;
  const S *xp = x + plane * s.h * s.w;
  y[i] = xp[detail::max_pool_argmax(s, xp, o / s.ow, o % s.ow, v)];
}

namespace detail {
/// Output (oy, ox) of the average pool of plane xp.
template <class T, class Plane>
TCC_HOST_DEVICE T avg_pool_output(const Pool2dShape &s, bool count_include_pad, const Plane &xp,
                                  int64_t oy, int64_t ox) {
  const AvgWindow win = avg_pool_window(s, oy, ox, count_include_pad);
  if (win.hs >= win.he || win.ws >= win.we)
    return T(0);
  acc_t sum = 0;
  for (int64_t iy = win.hs; iy < win.he; ++iy)
    for (int64_t ix = win.ws; ix < win.we; ++ix)
      sum += xp[iy * s.w + ix];
  return T(sum / acc_t(win.divisor));
}
} // namespace detail

namespace detail {
/// The sum from 0, in output order, of term(plane, j, oy, ox) over the
/// windows (oy, ox) that contain input element i (element j of its plane):
/// what a backward's per-plane scatter adds into dx[i], in its order. A
/// term of +0 leaves the sum's bits as they are (it never is -0).
template <class T, class I = int64_t, class Term>
TCC_HOST_DEVICE T sum_over_windows(const Pool2dShape &s, int64_t element, Term term) {
  const I hw = I(s.h * s.w), i = I(element), plane = i / hw, j = i - plane * hw;
  const I row = j / I(s.w), col = j - row * I(s.w);
  I oy0, oy1, ox0, ox1;
  windows_containing<I>(row, I(s.kh), I(s.sh), I(s.ph), I(s.oh), oy0, oy1);
  windows_containing<I>(col, I(s.kw), I(s.sw), I(s.pw), I(s.ow), ox0, ox1);
  T sum = T(0);
  for (I oy = oy0; oy <= oy1; ++oy)
    for (I ox = ox0; ox <= ox1; ++ox)
      sum += term(plane, j, oy, ox);
  return sum;
}
} // namespace detail

/// Input element i (of n*C*h*w) of max_pool2d_backward: the dy of every
/// window whose first maximum it is, summed in output order (in T; stored
/// as S, rounded once: a 16-bit S gives the f32 kernel's sum cast down).
template <class S, class I = int64_t>
TCC_HOST_DEVICE void max_pool2d_backward_at(const Pool2dShape &s, const S *x, const S *dy,
                                            S *dx, int64_t i) {
  using T = ComputeOf<S>;
  dx[i] = S(detail::sum_over_windows<T, I>(s, i, [&](I plane, I j, I oy, I ox) {
    T v;
    return detail::max_pool_argmax<I>(s, x + int64_t(plane) * s.h * s.w, oy, ox, v) == j
               ? widened<T>(dy[(int64_t(plane) * s.oh + oy) * s.ow + ox])
               : T(0);
  }));
}

/// Output element i of avg_pool2d_forward.
template <class T>
TCC_HOST_DEVICE void avg_pool2d_forward_at(const Pool2dShape &s, bool count_include_pad,
                                           const T *x, T *y, int64_t i) {
  const int64_t plane = i / (s.oh * s.ow), o = i % (s.oh * s.ow);
  y[i] = detail::avg_pool_output<T>(s, count_include_pad, x + plane * s.h * s.w, o / s.ow,
                                    o % s.ow);
}

/// Input element i of avg_pool2d_backward: dy / divisor of every window
/// that contains it, summed in output order.
template <class T>
TCC_HOST_DEVICE void avg_pool2d_backward_at(const Pool2dShape &s, bool count_include_pad,
                                            const T *dy, T *dx, int64_t i) {
  dx[i] = detail::sum_over_windows<T>(s, i, [&](int64_t plane, int64_t, int64_t oy,
                                                int64_t ox) {
    const detail::AvgWindow win = detail::avg_pool_window(s, oy, ox, count_include_pad);
    return dy[(plane * s.oh + oy) * s.ow + ox] / T(win.divisor);
  });
}

/// Plane p of max_pool2d_forward.
template <class T>
TCC_HOST_DEVICE void max_pool2d_forward_plane(const Pool2dShape &s, const T *x, T *y,
                                              int64_t p) {
  const T *xp = x + p * s.h * s.w;
  T *yp = y + p * s.oh * s.ow;
  for (int64_t oy = 0; oy < s.oh; ++oy)
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      T v;
      detail::max_pool_argmax(s, xp, oy, ox, v);
      yp[oy * s.ow + ox] = v;
    }
}

/// y [n, c, oh, ow] = max over each window.
template <class T>
void max_pool2d_forward(const Pool2dShape &s, const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < s.n * s.c; ++p)
    max_pool2d_forward_plane(s, x, y, p);
}

/// Plane p of max_pool2d_backward.
template <class T>
TCC_HOST_DEVICE void max_pool2d_backward_plane(const Pool2dShape &s, const T *x, const T *dy,
                                               T *dx, int64_t p) {
  const T *xp = x + p * s.h * s.w;
  const T *dyp = dy + p * s.oh * s.ow;
  T *dxp = dx + p * s.h * s.w;
  for (int64_t j = 0; j < s.h * s.w; ++j)
    dxp[j] = T(0);
  for (int64_t oy = 0; oy < s.oh; ++oy)
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      T v;
      dxp[detail::max_pool_argmax(s, xp, oy, ox, v)] += dyp[oy * s.ow + ox];
    }
}

/// dx [n, c, h, w]: each window's dy goes to its first maximal element of x.
template <class T>
void max_pool2d_backward(const Pool2dShape &s, const T *x, const T *dy, T *dx) {
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < s.n * s.c; ++p)
    max_pool2d_backward_plane(s, x, dy, dx, p);
}

/// Plane p of avg_pool2d_forward.
template <class T>
TCC_HOST_DEVICE void avg_pool2d_forward_plane(const Pool2dShape &s, bool count_include_pad,
                                              const T *x, T *y, int64_t p) {
  const T *xp = x + p * s.h * s.w;
  T *yp = y + p * s.oh * s.ow;
  for (int64_t oy = 0; oy < s.oh; ++oy)
    for (int64_t ox = 0; ox < s.ow; ++ox)
      yp[oy * s.ow + ox] = detail::avg_pool_output<T>(s, count_include_pad, xp, oy, ox);
}

/// y = window sum / divisor (see the header comment for the divisor).
template <class T>
void avg_pool2d_forward(const Pool2dShape &s, bool count_include_pad,
                        const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < s.n * s.c; ++p)
    avg_pool2d_forward_plane(s, count_include_pad, x, y, p);
}

/// Plane p of avg_pool2d_backward.
template <class T>
TCC_HOST_DEVICE void avg_pool2d_backward_plane(const Pool2dShape &s, bool count_include_pad,
                                               const T *dy, T *dx, int64_t p) {
  const T *dyp = dy + p * s.oh * s.ow;
  T *dxp = dx + p * s.h * s.w;
  for (int64_t j = 0; j < s.h * s.w; ++j)
    dxp[j] = T(0);
  for (int64_t oy = 0; oy < s.oh; ++oy)
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      const detail::AvgWindow win = detail::avg_pool_window(s, oy, ox, count_include_pad);
      if (win.hs >= win.he || win.ws >= win.we)
        continue;
      const T g = dyp[oy * s.ow + ox] / T(win.divisor);
      for (int64_t iy = win.hs; iy < win.he; ++iy)
        for (int64_t ix = win.ws; ix < win.we; ++ix)
          dxp[iy * s.w + ix] += g;
    }
}

/// dx: every input element of a window gets dy / divisor (summed over the
/// windows that contain it).
template <class T>
void avg_pool2d_backward(const Pool2dShape &s, bool count_include_pad,
                         const T *dy, T *dx) {
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < s.n * s.c; ++p)
    avg_pool2d_backward_plane(s, count_include_pad, dy, dx, p);
}

/// y [n, c] = mean over the hw elements of each plane of x [n, c, hw].
template <class T>
void global_avg_pool_forward(int64_t n, int64_t c, int64_t hw, const T *x,
                             T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < n * c; ++p) {
    acc_t sum = 0;
    for (int64_t j = 0; j < hw; ++j)
      sum += x[p * hw + j];
    y[p] = T(sum / acc_t(hw));
  }
}

/// dx [n, c, hw] = dy / hw broadcast over each plane.
template <class T>
void global_avg_pool_backward(int64_t n, int64_t c, int64_t hw, const T *dy,
                              T *dx) {
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < n * c; ++p) {
    const T g = dy[p] / T(hw);
    for (int64_t j = 0; j < hw; ++j)
      dx[p * hw + j] = g;
  }
}

namespace detail {
template <class Plane> TCC_HOST_DEVICE int64_t plane_argmax(const Plane &xp, int64_t hw) {
  using T = std::remove_cv_t<std::remove_reference_t<decltype(xp[0])>>;
  int64_t best = 0;
  T mx = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < hw; ++j)
    if (xp[j] > mx || std::isnan(xp[j])) {
      mx = xp[j];
      best = j;
    }
  return best;
}
} // namespace detail

/// y [n, c] = max over each plane of x [n, c, hw].
template <class T>
void global_max_pool_forward(int64_t n, int64_t c, int64_t hw, const T *x,
                             T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < n * c; ++p)
    y[p] = x[p * hw + detail::plane_argmax(x + p * hw, hw)];
}

/// dx [n, c, hw]: dy goes to the first maximal element of each plane, 0
/// elsewhere.
template <class T>
void global_max_pool_backward(int64_t n, int64_t c, int64_t hw, const T *x,
                              const T *dy, T *dx) {
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < n * c; ++p) {
    std::fill(dx + p * hw, dx + (p + 1) * hw, T(0));
    dx[p * hw + detail::plane_argmax(x + p * hw, hw)] = dy[p];
  }
}

//===----------------------------------------------------------------------===//
// NHWC (channels-last) tensors, for the cuda target (tcc-channels-last):
// the same windows, first-maximum rule and summation order as above, each
// plane read through its stride.
//===----------------------------------------------------------------------===//

/// Plane `plane` = (n, c) of a tensor [n, C, hw] stored NHWC ([n, hw, C]):
/// element j of the plane is base[j * C].
template <class T> struct ChannelsLastPlane {
  T *base;
  int64_t channels;
  TCC_HOST_DEVICE T &operator[](int64_t j) const { return base[j * channels]; }
};
template <class T>
TCC_HOST_DEVICE ChannelsLastPlane<T> channels_last_plane(T *x, int64_t c, int64_t hw,
                                                         int64_t plane) {
  const int64_t n = plane / c;
  return {x + n * hw * c + (plane - n * c), c};
}

/// The NCHW index of the element stored at i of an NHWC tensor [n, c, hw]
/// (I: the index type, as above).
template <class I = int64_t>
TCC_HOST_DEVICE inline int64_t nchw_index_of_nhwc(int64_t element, int64_t c, int64_t hw) {
  const I i = I(element), pixels = i / I(c), channel = i - pixels * I(c), n = pixels / I(hw);
  return (int64_t(n) * c + channel) * hw + (pixels - n * I(hw));
}

/// The element at i of an NHWC output [n, c, oh, ow] of max_pool2d_forward.
template <class S>
TCC_HOST_DEVICE void max_pool2d_forward_nhwc_at(const Pool2dShape &s, const S *x, S *y,
                                                int64_t i) {
  const int64_t e = nchw_index_of_nhwc(i, s.c, s.oh * s.ow);
  const int64_t plane = e / (s.oh * s.ow), o = e % (s.oh * s.ow);
  ComputeOf<S> v;
  const ChannelsLastPlane<const S> xp = channels_last_plane(x, s.c, s.h * s.w, plane);
  y[i] = xp[detail::max_pool_argmax(s, xp, o / s.ow, o % s.ow, v)];
}

/// The element at i of an NHWC input of max_pool2d_backward (I as above).
/// Its plane is the same in every window: found once.
template <class S, class I = int64_t>
TCC_HOST_DEVICE void max_pool2d_backward_nhwc_at(const Pool2dShape &s, const S *x, const S *dy,
                                                 S *dx, int64_t i) {
  using T = ComputeOf<S>;
  const int64_t e = nchw_index_of_nhwc<I>(i, s.c, s.h * s.w);
  const I plane = I(e / (s.h * s.w));
  const ChannelsLastPlane<const S> xp = channels_last_plane(x, s.c, s.h * s.w, plane),
                                   dyp = channels_last_plane(dy, s.c, s.oh * s.ow, plane);
  dx[i] = S(detail::sum_over_windows<T, I>(s, e, [&](I, I j, I oy, I ox) {
    T v;
    return detail::max_pool_argmax<I>(s, xp, oy, ox, v) == j ? widened<T>(dyp[oy * I(s.ow) + ox])
                                                             : T(0);
  }));
}

template <class T>
TCC_HOST_DEVICE void avg_pool2d_forward_nhwc_at(const Pool2dShape &s, bool count_include_pad,
                                                const T *x, T *y, int64_t i) {
  const int64_t e = nchw_index_of_nhwc(i, s.c, s.oh * s.ow);
  const int64_t plane = e / (s.oh * s.ow), o = e % (s.oh * s.ow);
  y[i] = detail::avg_pool_output<T>(s, count_include_pad,
                                    channels_last_plane(x, s.c, s.h * s.w, plane), o / s.ow,
                                    o % s.ow);
}

template <class T, class I = int64_t>
TCC_HOST_DEVICE void avg_pool2d_backward_nhwc_at(const Pool2dShape &s, bool count_include_pad,
                                                 const T *dy, T *dx, int64_t i) {
  const int64_t e = nchw_index_of_nhwc<I>(i, s.c, s.h * s.w);
  const ChannelsLastPlane<const T> dyp =
      channels_last_plane(dy, s.c, s.oh * s.ow, e / (s.h * s.w));
  dx[i] = detail::sum_over_windows<T, I>(s, e, [&](I, I, I oy, I ox) {
    const detail::AvgWindow win = detail::avg_pool_window(s, oy, ox, count_include_pad);
    return dyp[oy * I(s.ow) + ox] / T(win.divisor);
  });
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_POOL_H
