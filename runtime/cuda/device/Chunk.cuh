//===- Chunk.cuh - Elementwise launches over chunks of elements --*- CUDA -*-===//
//
// An elementwise fusion group (codegen/cuda/CudaGroups.cpp) reads each operand and
// writes each result at every element i. One element per thread moves 2 or
// 4 bytes per access, far below what the memory system serves per
// instruction; here a thread takes a chunk of kChunk consecutive elements:
// it loads each operand's chunk whole (16-byte vector loads where the
// chunk's address allows: the memory plan aligns every buffer to 64 bytes),
// computes the kChunk elements from registers, and stores each result's
// chunk whole. All loads come before all stores, so a result may take the
// bytes of an operand the group is the last to read (the memory plan's
// in-place reuse), as in the one-element form.
//
// The arrays are indexed by constants only (every loop is unrolled, the
// tail guarded element by element): they stay in registers.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_CHUNK_CUH
#define TCC_RUNTIME_CUDA_DEVICE_CHUNK_CUH

#include "runtime/cuda/device/Launch.cuh"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tcc::rt::cuda {

/// Elements per thread: 16 bytes of a 16-bit tensor, 32 of an f32 one.
constexpr int kChunk = 8;

/// The registers of one operand's chunk: ChunkOf<decltype(p)> for pointer p,
/// declared alignas(16) (the vector copies need it, should the array ever
/// live in memory).
template <class P> using ChunkOf = std::remove_cv_t<std::remove_pointer_t<P>>[kChunk];

#ifdef TCC_CUDA_HOST_EMULATION
/// Elements [i0, i0 + count) of p into out[0, count).
template <class T> void load_chunk(const T *p, int64_t i0, int count, T (&out)[kChunk]) {
  std::memcpy(out, p + i0, sizeof(T) * size_t(count));
}
/// in[0, count) into elements [i0, i0 + count) of p.
template <class T> void store_chunk(T *p, int64_t i0, int count, const T (&in)[kChunk]) {
  std::memcpy(p + i0, in, sizeof(T) * size_t(count));
}
#else
/// The vector unit a chunk of T moves in: 16 bytes, or 8 for a chunk of
/// 8 bytes (1-byte elements).
template <class T>
using ChunkUnit = std::conditional_t<(sizeof(T) * kChunk) % 16 == 0, uint4, uint2>;

/// Elements [i0, i0 + count) of p into out[0, count).
template <class T>
__device__ inline void load_chunk(const T *p, int64_t i0, int count, T (&out)[kChunk]) {
  using Unit = ChunkUnit<T>;
  const T *from = p + i0;
  if (count == kChunk && reinterpret_cast<uintptr_t>(from) % sizeof(Unit) == 0) {
#pragma unroll
    for (int u = 0; u < int(sizeof(out) / sizeof(Unit)); ++u)
      reinterpret_cast<Unit *>(out)[u] = reinterpret_cast<const Unit *>(from)[u];
    return;
  }
#pragma unroll
  for (int k = 0; k < kChunk; ++k)
    if (k < count)
      out[k] = from[k];
}

/// in[0, count) into elements [i0, i0 + count) of p.
template <class T>
__device__ inline void store_chunk(T *p, int64_t i0, int count, const T (&in)[kChunk]) {
  using Unit = ChunkUnit<T>;
  T *to = p + i0;
  if (count == kChunk && reinterpret_cast<uintptr_t>(to) % sizeof(Unit) == 0) {
#pragma unroll
    for (int u = 0; u < int(sizeof(in) / sizeof(Unit)); ++u)
      reinterpret_cast<Unit *>(to)[u] = reinterpret_cast<const Unit *>(in)[u];
    return;
  }
#pragma unroll
  for (int k = 0; k < kChunk; ++k)
    if (k < count)
      to[k] = in[k];
}

template <class F>
__global__ void __launch_bounds__(kThreads) forEachChunkKernel(int64_t n, int width, F f) {
  const int64_t i0 = (int64_t(blockIdx.x) * kThreads + threadIdx.x) * width;
  if (i0 < n)
    f(i0, int(n - i0 < width ? n - i0 : width));
}
#endif

/// f(i0, count) for the chunks [i0, i0 + count) of [0, n) that start at
/// the multiples of `width` (1 to kChunk): count is `width` but for the
/// last, in any order.
template <class F>
void for_each_chunk(cudaStream_t stream, int64_t n, F f, int width = kChunk) {
  if (n <= 0)
    return;
  if (width < 1 || width > kChunk)
    throw std::runtime_error("chunks of " + std::to_string(width) + " elements");
#ifdef TCC_CUDA_HOST_EMULATION
  emulation::enqueue(stream, [=] {
    for (int64_t i0 = 0; i0 < n; i0 += width)
      f(i0, int(n - i0 < width ? n - i0 : width));
  });
#else
  forEachChunkKernel<<<blocksFor((n + width - 1) / width), kThreads, 0, stream>>>(n, width, f);
  check(cudaGetLastError(), "launching a kernel");
#endif
}

/// y[i] = f(x[i], i) for every i in [0, n), over chunks.
template <class X, class Y, class F>
void map_chunks(cudaStream_t stream, int64_t n, const X *x, Y *y, F f) {
  for_each_chunk(stream, n, [=] __device__(int64_t i0, int count) {
    alignas(16) X a[kChunk];
    load_chunk(x, i0, count, a);
    alignas(16) Y b[kChunk];
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      if (k == count)
        break;
      b[k] = f(a[k], i0 + k);
    }
    store_chunk(y, i0, count, b);
  });
}

/// y[i] = f(x0[i], x1[i], i) for every i in [0, n), over chunks (y may be
/// x0 or x1: all loads come first).
template <class X0, class X1, class Y, class F>
void map_chunks(cudaStream_t stream, int64_t n, const X0 *x0, const X1 *x1, Y *y, F f) {
  for_each_chunk(stream, n, [=] __device__(int64_t i0, int count) {
    alignas(16) X0 a[kChunk];
    load_chunk(x0, i0, count, a);
    alignas(16) X1 b[kChunk];
    load_chunk(x1, i0, count, b);
    alignas(16) Y c[kChunk];
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      if (k == count)
        break;
      c[k] = f(a[k], b[k], i0 + k);
    }
    store_chunk(y, i0, count, c);
  });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_CHUNK_CUH
