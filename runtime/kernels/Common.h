//===- Common.h - Shared helpers of the CPU reference kernels ---*- C++ -*-===//
//
// Conventions of every header in runtime/kernels/ (namespace tcc::rt::kernels):
//  - Header-only templates over the element type T (float or double).
//  - Tensors are contiguous, row-major (NCHW) raw pointers; shapes are int64_t
//    values or small structs.
//  - Every kernel writes its whole output. None accumulates into an output
//    unless its name says `accumulate` (or its comment says "in place").
//  - Scalar hyper-parameters (eps, momentum, lr, ...) are `double`, as Python
//    floats are in PyTorch. Scalars that live in buffers of the step (the
//    upstream gradient of a loss, norms, clip coefficients) are passed by value
//    as T; scalar outputs are written through a `T *` of one element.
//  - Parallel with OpenMP over the outermost independent loop. Reductions that
//    cross threads are summed in a fixed order, so results do not depend on the
//    number of threads.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_COMMON_H
#define TCC_RUNTIME_KERNELS_COMMON_H

#include "runtime/common/HostDevice.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace tcc::rt::kernels {

/// Accumulator of long reductions (statistics, losses, norms): double for both
/// float and double tensors.
using acc_t = double;

/// The type a kernel computes in for tensors stored as S: S itself for float
/// and double; float for 16-bit storage (half::F16 / BF16,
/// runtime/common/Float16.h), which a kernel reads and writes itself instead
/// of f32 copies, converting where it loads and stores.
template <class S>
using ComputeOf = std::conditional_t<std::is_floating_point_v<S>, S, float>;

/// x as a kernel computing in T uses it: a 16-bit stored value widens
/// exactly, as a cast to f32 would.
template <class T, class S> TCC_HOST_DEVICE inline T widened(S x) { return T(acc_t(x)); }

/// `v`, rounded to T as if a kernel had stored it and the next one loaded
/// it. A fused loop (codegen/common/ElementBody.cpp) passes each op's value through
/// this on its way to the next op: the C++ compiler contracts a multiply
/// and an add into one FMA wherever it sees both (-ffp-contract=fast, GCC's
/// default, with -march=native), and across two ops that would round once
/// where their separate kernels round twice. The empty asm hides where the
/// value came from; it emits no instruction.
/// On a device (nvcc) it is the value itself: the cuda target matches the
/// cpu trainer within a tolerance, not bit for bit (docs/cuda.md).
template <class T> TCC_HOST_DEVICE inline T as_stored(T v) {
#if defined(__CUDA_ARCH__)
#elif defined(__GNUC__) && defined(__x86_64__)
  asm("" : "+x"(v));
#elif defined(__GNUC__) && defined(__aarch64__)
  asm("" : "+w"(v));
#elif defined(__GNUC__)
  asm("" : "+m"(v));
#endif
  return v;
}

/// a / b, exactly on the host. On a device, a correctly rounded reciprocal
/// and one correction step (within an ulp of a / b, mostly equal): the
/// division's own slow path is a subroutine call, around which ptxas
/// spills the registers of the loops that contain it.
TCC_HOST_DEVICE inline double divide(double a, double b) {
#if defined(__CUDA_ARCH__)
  const double r = __drcp_rn(b), q = a * r;
  return fma(fma(-q, b, a), r, q);
#else
  return a / b;
#endif
}

namespace detail {

/// Sum of term(i) for i in [0, n), in double. Chunks of a fixed size are
/// summed in parallel and the chunk sums are added in order: the result is the
/// same for any number of threads.
template <class F> acc_t deterministic_sum(int64_t n, F &&term) {
  constexpr int64_t kChunk = 4096;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  if (chunks <= 1) {
    acc_t s = 0;
    for (int64_t i = 0; i < n; ++i)
      s += term(i);
    return s;
  }
  std::vector<acc_t> partial(chunks);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    acc_t s = 0;
    const int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i)
      s += term(i);
    partial[c] = s;
  }
  acc_t s = 0;
  for (acc_t p : partial)
    s += p;
  return s;
}

} // namespace detail
} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_COMMON_H
