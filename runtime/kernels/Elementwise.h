//===- Elementwise.h - Arithmetic, reductions, layout, casts ----*- C++ -*-===//
//
// Arithmetic over n elements, sum along an axis, concat/slice/flip/transpose
// (tensors viewed as [outer, axis, inner] where an axis is involved), and
// casts, including float <-> bfloat16 and float <-> IEEE half.
//
// 16-bit values are stored as uint16_t bit patterns (the bit layout of CUDA's
// __nv_bfloat16 / __half). float -> 16-bit rounds to nearest, ties to even;
// overflow gives +-inf; NaN stays NaN (made quiet, sign kept); half
// subnormals are produced and read exactly.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_ELEMENTWISE_H
#define TCC_RUNTIME_KERNELS_ELEMENTWISE_H

#include "runtime/common/Float16.h"
#include "runtime/kernels/Common.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace tcc::rt::kernels {

//--- arithmetic ------------------------------------------------------------//

/// y = value.
template <class T> void fill(int64_t n, T value, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = value;
}

/// y = x.
template <class T> void copy(int64_t n, const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i];
}

/// y = a + b.
template <class T> void add(int64_t n, const T *a, const T *b, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = a[i] + b[i];
}

/// y += x (gradient accumulation).
template <class T> void add_accumulate(int64_t n, const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] += x[i];
}

/// y = a - b.
template <class T> void sub(int64_t n, const T *a, const T *b, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = a[i] - b[i];
}

/// y = a * b (its gradients are mul(dy, b) and mul(dy, a)).
template <class T> void mul(int64_t n, const T *a, const T *b, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = a[i] * b[i];
}

/// y = alpha * x.
template <class T> void scale(int64_t n, T alpha, const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = alpha * x[i];
}

/// x *= alpha, in place (e.g. gradients by the clip coefficient).
template <class T> void scale_inplace(int64_t n, T alpha, T *x) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    x[i] *= alpha;
}

//--- reductions ------------------------------------------------------------//

/// y [outer, inner] = sum over the middle axis of x [outer, axis, inner]
/// (outer = inner = 1: the sum of all elements, into y[0]). Summed in double.
template <class T>
void reduce_sum(int64_t outer, int64_t axis, int64_t inner, const T *x, T *y) {
  if (outer * inner == 1) {
    y[0] = T(detail::deterministic_sum(axis,
                                       [&](int64_t i) { return acc_t(x[i]); }));
    return;
  }
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      acc_t s = 0;
      for (int64_t a = 0; a < axis; ++a)
        s += x[(o * axis + a) * inner + i];
      y[o * inner + i] = T(s);
    }
}

/// The gradient of reduce_sum: dx [outer, axis, inner] = dy [outer, inner]
/// broadcast along the axis.
template <class T>
void reduce_sum_backward(int64_t outer, int64_t axis, int64_t inner,
                         const T *dy, T *dx) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t a = 0; a < axis; ++a)
      std::memcpy(dx + (o * axis + a) * inner, dy + o * inner,
                  sizeof(T) * inner);
}

//--- concat / slice / flip / transpose ------------------------------------//

/// y [outer, sum(axis_sizes), inner] = inputs[0..num_inputs) [outer,
/// axis_sizes[k], inner] concatenated along the middle axis.
template <class T>
void concat(int64_t outer, int64_t inner, int64_t num_inputs,
            const T *const *inputs, const int64_t *axis_sizes, T *y) {
  int64_t total = 0;
  for (int64_t k = 0; k < num_inputs; ++k)
    total += axis_sizes[k];
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < outer; ++o) {
    int64_t off = 0;
    for (int64_t k = 0; k < num_inputs; ++k) {
      const int64_t len = axis_sizes[k] * inner;
      std::memcpy(y + o * total * inner + off, inputs[k] + o * len,
                  sizeof(T) * len);
      off += len;
    }
  }
}

/// The gradient of concat: dxs[k] = the k-th block of dy along the axis.
/// A nullptr entry of dxs is skipped.
template <class T>
void concat_backward(int64_t outer, int64_t inner, int64_t num_inputs,
                     const int64_t *axis_sizes, const T *dy, T *const *dxs) {
  int64_t total = 0;
  for (int64_t k = 0; k < num_inputs; ++k)
    total += axis_sizes[k];
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < outer; ++o) {
    int64_t off = 0;
    for (int64_t k = 0; k < num_inputs; ++k) {
      const int64_t len = axis_sizes[k] * inner;
      if (dxs[k])
        std::memcpy(dxs[k] + o * len, dy + o * total * inner + off,
                    sizeof(T) * len);
      off += len;
    }
  }
}

/// y [outer, length, inner] = x [outer, axis, inner][:, start:start+length, :].
template <class T>
void slice(int64_t outer, int64_t axis, int64_t inner, int64_t start,
           int64_t length, const T *x, T *y) {
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(y + o * length * inner, x + (o * axis + start) * inner,
                sizeof(T) * length * inner);
}

/// y [outer, size, inner] = x [outer, 1, inner] repeated `size` times
/// (torch.Tensor.expand of a dim of size 1).
template <class T>
void expand(int64_t outer, int64_t size, int64_t inner, const T *x, T *y) {
#pragma omp parallel for schedule(static) if (outer * size * inner >= (int64_t(1) << 16))
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t s = 0; s < size; ++s)
      std::memcpy(y + (o * size + s) * inner, x + o * inner, sizeof(T) * inner);
}

/// The gradient of slice: dx [outer, axis, inner] is dy in the sliced range
/// and 0 elsewhere.
template <class T>
void slice_backward(int64_t outer, int64_t axis, int64_t inner, int64_t start,
                    int64_t length, const T *dy, T *dx) {
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < outer; ++o) {
    T *d = dx + o * axis * inner;
    std::fill(d, d + start * inner, T(0));
    std::memcpy(d + start * inner, dy + o * length * inner,
                sizeof(T) * length * inner);
    std::fill(d + (start + length) * inner, d + axis * inner, T(0));
  }
}

/// y = x reversed along the middle axis of [outer, axis, inner]
/// (torch.flip(x, [dim]); e.g. a horizontal flip is axis = W, inner = 1).
/// Its own gradient.
template <class T>
void flip(int64_t outer, int64_t axis, int64_t inner, const T *x, T *y) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t a = 0; a < axis; ++a)
      std::memcpy(y + (o * axis + a) * inner,
                  x + (o * axis + (axis - 1 - a)) * inner, sizeof(T) * inner);
}

/// y = x.permute(perm): x has shape in_shape[0..rank), y has shape
/// [in_shape[perm[0]], ..., in_shape[perm[rank-1]]]. rank <= 8. The gradient
/// is transpose with the inverse permutation.
template <class T>
void transpose(int rank, const int64_t *in_shape, const int64_t *perm,
               const T *x, T *y) {
  constexpr int kMaxRank = 8;
  int64_t inStride[kMaxRank], outShape[kMaxRank], srcStride[kMaxRank];
  int64_t total = 1;
  for (int d = rank - 1; d >= 0; --d) {
    inStride[d] = total;
    total *= in_shape[d];
  }
  for (int d = 0; d < rank; ++d) {
    outShape[d] = in_shape[perm[d]];
    srcStride[d] = inStride[perm[d]];
  }
  const int64_t last = rank > 0 ? outShape[rank - 1] : 1;
  const int64_t lastStride = rank > 0 ? srcStride[rank - 1] : 1;
  const int64_t rows = last > 0 ? total / last : 0;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    // Source offset of output row r (all output dims but the last).
    int64_t rem = r, src = 0;
    for (int d = rank - 2; d >= 0; --d) {
      src += (rem % outShape[d]) * srcStride[d];
      rem /= outShape[d];
    }
    T *yr = y + r * last;
    for (int64_t j = 0; j < last; ++j)
      yr[j] = x[src + j * lastStride];
  }
}

//--- casts -----------------------------------------------------------------//

/// y = static_cast<To>(x), for arithmetic types (float <-> double, ...).
template <class From, class To> void cast(int64_t n, const From *x, To *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<To>(x[i]);
}

/// 16-bit conversions (runtime/common/Float16.h), under the kernels' names.
TCC_HOST_DEVICE inline uint16_t float_to_bf16(float f) { return half::floatToBf16(f); }
TCC_HOST_DEVICE inline float bf16_to_float(uint16_t h) { return half::bf16ToFloat(h); }
TCC_HOST_DEVICE inline uint16_t float_to_f16(float f) { return half::floatToF16(f); }
TCC_HOST_DEVICE inline float f16_to_float(uint16_t h) { return half::f16ToFloat(h); }

inline void cast_f32_to_bf16(int64_t n, const float *x, uint16_t *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = float_to_bf16(x[i]);
}
inline void cast_bf16_to_f32(int64_t n, const uint16_t *x, float *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = bf16_to_float(x[i]);
}
inline void cast_f32_to_f16(int64_t n, const float *x, uint16_t *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = float_to_f16(x[i]);
}
inline void cast_f16_to_f32(int64_t n, const uint16_t *x, float *y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    y[i] = f16_to_float(x[i]);
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_ELEMENTWISE_H
