//===- Launch.cuh - Kernel launches of the cuda trainer ----------*- CUDA -*-===//
//
// The generated step (codegen/CudaTarget.cpp) runs every op as a launch on
// the model's stream: for_each() maps a device function over the n elements
// of an op (one thread each), block_sum() reduces n
// terms in one block in a fixed order (the same bits on every run and GPU
// of an architecture), single() runs one thread (the step's scalars). The
// device functions are the element math of runtime/kernels and
// runtime/common (TCC_HOST_DEVICE), shared with the cpu target.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_LAUNCH_CUH
#define TCC_RUNTIME_CUDA_DEVICE_LAUNCH_CUH

#ifdef TCC_CUDA_HOST_EMULATION
#include "runtime/cuda/device/HostEmulation.h"
#else
#include <cuda_runtime.h>
#endif

#include "runtime/kernels/Norm.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tcc::rt::cuda {

/// Throws, naming `what`, unless `status` is cudaSuccess. The trainer turns
/// the exception into one `error:` line.
inline void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("CUDA: ") + what + ": " +
                             cudaGetErrorString(status));
}

/// The device address of a __device__ array of the generated source (its
/// scalar constants).
template <class T> T *symbol_address(T (&symbol)[1]) {
  void *address = nullptr;
  check(cudaGetSymbolAddress(&address, symbol), "finding a constant");
  return static_cast<T *>(address);
}

constexpr int kThreads = 256;

/// Blocks for n elements, one element per thread. (Not a grid-stride
/// loop: a loop keeps registers live across the subroutine calls of
/// IEEE divisions and 64-bit integer ones, which then spill.)
inline unsigned blocksFor(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > 0x7fffffff)
    throw std::runtime_error("a kernel over more than 2^39 elements");
  return static_cast<unsigned>(blocks);
}

#ifndef TCC_CUDA_HOST_EMULATION
template <class F> __global__ void __launch_bounds__(kThreads) forEachKernel(int64_t n, F f) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    f(i);
}
#endif

/// f(i) for every i in [0, n), in any order.
template <class F> void for_each(cudaStream_t stream, int64_t n, F f) {
  if (n <= 0)
    return;
#ifdef TCC_CUDA_HOST_EMULATION
  emulation::enqueue(stream, [=] {
    for (int64_t i = 0; i < n; ++i)
      f(i);
  });
#else
  forEachKernel<<<blocksFor(n), kThreads, 0, stream>>>(n, f);
  check(cudaGetLastError(), "launching a kernel");
#endif
}

/// f() once, on one device thread.
template <class F> void single(cudaStream_t stream, F f) {
  for_each(stream, 1, [=] __device__(int64_t) { f(); });
}

/// The sums of term(at) for each position of the walk `at` (more(),
/// next()), in its order: kBatch terms are taken (their loads issued)
/// before any is added, then added in the order one at a time would (the
/// same bits). One term at a time kept one load in flight per thread, which
/// left a batch norm's sums far below the memory's bandwidth
/// (docs/performance.md).
template <int kBatch, class Walk, class Term>
TCC_HOST_DEVICE kernels::Sums batched_sums(Walk at, Term term) {
  kernels::Sums s;
  while (at.more()) {
    kernels::Sums t[kBatch];
    int taken = 0;
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (at.more()) {
        t[u] = term(at);
        ++taken;
        at.next();
      }
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (u < taken) {
        s.first += t[u].first;
        s.second += t[u].second;
      }
  }
  return s;
}

/// A block's sums over a channel's group of `rows` samples of `hw`
/// elements, for the per-channel functions of runtime/kernels/Norm.h (the
/// interface of kernels::SequentialSums): thread t takes the flat indices
/// t, t + kThreads, ... of the rows * hw elements, in double, then the
/// block adds the partial sums as a tree. A fixed order, so the same bits
/// on every run; every thread gets the totals. The host emulation sums in
/// that same order.
struct BlockSums {
  int64_t hw;
  /// Terms taken at once by a thread (over_range).
  static constexpr int kBatch = 4;
#ifndef TCC_CUDA_HOST_EMULATION
  template <class Term> __device__ kernels::Sums over(int64_t rows, Term term) const {
    return over_range(0, rows * hw, term);
  }
  /// The sums of term(m, j) over the flat indices [begin, end) of the rows
  /// (a part of a channel's group: runtime/cuda/RowSplit.h), batched_sums.
  template <class Term>
  __device__ kernels::Sums over_range(int64_t begin, int64_t end, Term term) const {
    return reduce(batched_sums<kBatch>(walk(begin, end), [&](const Walk &at) {
      return term(at.m, at.j);
    }));
  }
  /// The block's total of every thread's `s`, as a tree; every thread gets it.
  __device__ kernels::Sums reduce(const kernels::Sums &s) const {
    __shared__ double first[kThreads], second[kThreads];
    first[threadIdx.x] = s.first;
    second[threadIdx.x] = s.second;
    __syncthreads();
    for (int width = kThreads / 2; width > 0; width /= 2) {
      if (int(threadIdx.x) < width) {
        first[threadIdx.x] += first[threadIdx.x + width];
        second[threadIdx.x] += second[threadIdx.x + width];
      }
      __syncthreads();
    }
    const kernels::Sums total{first[0], second[0]};
    __syncthreads(); // before a next call writes the arrays again
    return total;
  }
  /// The largest term(m, j) over the flat indices [begin, end) (-inf for
  /// none); every thread gets it. A maximum is exact: any order gives it.
  template <class Term>
  __device__ double max_over_range(int64_t begin, int64_t end, Term term) const {
    double largest = -INFINITY;
    for (Walk at = walk(begin, end); at.more(); at.next())
      largest = fmax(largest, double(term(at.m, at.j)));
    __shared__ double values[kThreads];
    values[threadIdx.x] = largest;
    __syncthreads();
    for (int width = kThreads / 2; width > 0; width /= 2) {
      if (int(threadIdx.x) < width)
        values[threadIdx.x] = fmax(values[threadIdx.x], values[threadIdx.x + width]);
      __syncthreads();
    }
    largest = values[0];
    __syncthreads();
    return largest;
  }
  /// f(m, j) for this thread's elements of the rows.
  template <class F> __device__ void each(int64_t rows, F f) const { each_in(0, rows * hw, f); }
  /// f(m, j) for this thread's flat indices begin + t, begin + t + kThreads,
  /// ... below end: (m, j) steps by kThreads with no division in the loop
  /// (a 64-bit division there makes the loop spill registers, Launch.cuh's
  /// blocksFor says why).
  template <class F> __device__ void each_in(int64_t begin, int64_t end, F f) const {
    for (Walk at = walk(begin, end); at.more(); at.next())
      f(at.m, at.j);
  }
  /// This thread's (row m, column j) of the flat indices begin + t, begin +
  /// t + kThreads, ... below end.
  struct Walk {
    int64_t m, j, stepRows, stepCols, hw, endRow, endCol;
    __device__ bool more() const { return m < endRow || (m == endRow && j < endCol); }
    __device__ void next() {
      m += stepRows;
      j += stepCols;
      if (j >= hw) {
        j -= hw;
        ++m;
      }
    }
  };
  __device__ Walk walk(int64_t begin, int64_t end) const {
    const int64_t first = begin + threadIdx.x;
    return {first / hw, first % hw, kThreads / hw, kThreads % hw, hw, end / hw, end % hw};
  }
  __device__ bool leader() const { return threadIdx.x == 0; }
#else
  template <class Term> kernels::Sums over(int64_t rows, Term term) const {
    return over_range(0, rows * hw, term);
  }
  template <class Term> kernels::Sums over_range(int64_t begin, int64_t end, Term term) const {
    kernels::Sums partial[kThreads];
    for (int t = 0; t < kThreads; ++t)
      for (int64_t i = begin + t; i < end; i += kThreads) {
        const kernels::Sums v = term(i / hw, i % hw);
        partial[t].first += v.first;
        partial[t].second += v.second;
      }
    for (int width = kThreads / 2; width > 0; width /= 2)
      for (int t = 0; t < width; ++t) {
        partial[t].first += partial[t + width].first;
        partial[t].second += partial[t + width].second;
      }
    return partial[0];
  }
  template <class F> void each(int64_t rows, F f) const { each_in(0, rows * hw, f); }
  template <class F> void each_in(int64_t begin, int64_t end, F f) const {
    for (int64_t i = begin; i < end; ++i)
      f(i / hw, i % hw);
  }
  template <class Term> double max_over_range(int64_t begin, int64_t end, Term term) const {
    double largest = -INFINITY;
    for (int64_t i = begin; i < end; ++i)
      largest = fmax(largest, double(term(i / hw, i % hw)));
    return largest;
  }
  bool leader() const { return true; }
#endif
};

#ifndef TCC_CUDA_HOST_EMULATION
template <class Body>
__global__ void __launch_bounds__(kThreads) perBlockKernel(int64_t hw, Body body) {
  body(int64_t(blockIdx.x), BlockSums{hw});
}
#endif

/// body(b, sums) for every b in [0, blocks), one block of kThreads threads
/// each, `sums` reducing over rows of hw elements (BlockSums).
template <class Body>
void per_block(cudaStream_t stream, int64_t blocks, int64_t hw, Body body) {
  if (blocks <= 0)
    return;
#ifdef TCC_CUDA_HOST_EMULATION
  emulation::enqueue(stream, [=] {
    for (int64_t b = 0; b < blocks; ++b)
      body(b, BlockSums{hw});
  });
#else
  if (blocks > 0x7fffffff)
    throw std::runtime_error("a kernel of more than 2^31 blocks");
  perBlockKernel<<<unsigned(blocks), kThreads, 0, stream>>>(hw, body);
  check(cudaGetLastError(), "launching a per-block kernel");
#endif
}

/// done(sum of term(i), i in [0, n)), summed in double by one block in a
/// fixed order (BlockSums: kThreads strided partial sums, then a tree). For
/// the step's small reductions (a loss over a batch, the correct count);
/// the n of a whole tensor belongs to a multi-block kernel.
template <class Term, class Done>
void block_sum(cudaStream_t stream, int64_t n, Term term, Done done) {
  per_block(stream, 1, 1, [=] __device__(int64_t, const BlockSums &sums) {
    const double total =
        sums.over(n, [&](int64_t i, int64_t) { return kernels::Sums{double(term(i)), 0}; })
            .first;
    if (sums.leader())
      done(total);
  });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_LAUNCH_CUH
