//===- MatmulFallback.cuh - A matmul cuBLASLt has no algorithm for -*- CUDA -*-===//
//
// A plain tiled kernel for one MatmulProblem (runtime/cuda/MatmulProblem.h),
// for the problems cuBLASLt's heuristic offers no algorithm for (Matmul.cuh's
// chooseFor): any transposes, leading dimensions and batch strides (also
// strides smaller than a matrix, an attention head's), the bias and
// activation epilogues, on f32, bf16 or f16 operands, summed in f32. Slower
// than cuBLASLt, so the trainer warns when it runs one.
//
// A block of kTile x kTile threads computes a kTile x kTile tile of C, one
// element a thread, walking k a tile at a time through shared memory: each
// thread loads one element of the A and the B tile (consecutive threads on
// consecutive addresses whichever way the operand is stored), the block
// syncs, each thread adds its row times column, the block syncs. The host
// emulation runs the same load, add and store functions, a phase at a time
// for every thread of the block, so it sums in the device's order.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_MATMULFALLBACK_CUH
#define TCC_RUNTIME_CUDA_DEVICE_MATMULFALLBACK_CUH

#include "runtime/common/Float16.h"
#include "runtime/cuda/MatmulProblem.h"
#include "runtime/cuda/device/Launch.cuh"
#include "runtime/kernels/Activation.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace tcc::rt::cuda::fallback {

constexpr int kTile = 16;

/// The problem as the kernel reads it (no std::string: a kernel argument).
struct Gemm {
  ::tcc::cuda::MatmulType type;
  bool transA, transB, bias;
  ::tcc::cuda::MatmulActivation activation;
  int64_t m, n, k, lda, ldb, ldc, batch, strideA, strideB, strideC;
  int64_t tilesM; ///< tiles over m: block x is tileM + tilesM * tileN
  const void *A, *B, *biasValues;
  void *C, *aux;
};

/// A block's operand tiles: a[l][i] = op(A)[i0 + i, l0 + l], b[l][j] =
/// op(B)[l0 + l, j0 + j]; a column more against bank conflicts.
struct Tiles {
  float a[kTile][kTile + 1], b[kTile][kTile + 1];
};

TCC_HOST_DEVICE inline float load(::tcc::cuda::MatmulType type, const void *p, int64_t i) {
  switch (type) {
  case ::tcc::cuda::MatmulType::bf16:
    return half::bf16ToFloat(static_cast<const uint16_t *>(p)[i]);
  case ::tcc::cuda::MatmulType::f16:
    return half::f16ToFloat(static_cast<const uint16_t *>(p)[i]);
  default:
    return static_cast<const float *>(p)[i];
  }
}
TCC_HOST_DEVICE inline void store(::tcc::cuda::MatmulType type, void *p, int64_t i, float v) {
  if (type == ::tcc::cuda::MatmulType::f32)
    static_cast<float *>(p)[i] = v;
  else
    static_cast<uint16_t *>(p)[i] =
        type == ::tcc::cuda::MatmulType::bf16 ? half::floatToBf16(v) : half::floatToF16(v);
}

/// Thread (x, y)'s loads of the tiles at l0 for C's tile (i0, j0) of batch
/// entry q; zeros outside the matrices. Column-major storage: op(A)[i, l]
/// is A[l*lda + i], or A[i*lda + l] transposed; x runs along the stored
/// column, so a warp's loads are consecutive.
TCC_HOST_DEVICE inline void loadTiles(const Gemm &g, Tiles &t, int x, int y, int64_t q, int64_t i0,
                                      int64_t j0, int64_t l0) {
  {
    const int64_t i = i0 + (g.transA ? y : x), l = l0 + (g.transA ? x : y);
    float v = 0;
    if (i < g.m && l < g.k)
      v = load(g.type, g.A, q * g.strideA + (g.transA ? i * g.lda + l : l * g.lda + i));
    t.a[l - l0][i - i0] = v;
  }
  {
    // op(B)[l, j] is B[j*ldb + l], or B[l*ldb + j] transposed.
    const int64_t j = j0 + (g.transB ? x : y), l = l0 + (g.transB ? y : x);
    float v = 0;
    if (j < g.n && l < g.k)
      v = load(g.type, g.B, q * g.strideB + (g.transB ? l * g.ldb + j : j * g.ldb + l));
    t.b[l - l0][j - j0] = v;
  }
}

/// Thread (x, y)'s element of the tile: row i0 + x, column j0 + y.
TCC_HOST_DEVICE inline void accumulate(const Tiles &t, int x, int y, float &sum) {
#pragma unroll
  for (int l = 0; l < kTile; ++l)
    sum += t.a[l][x] * t.b[l][y];
}

/// The epilogue (bias[i], the activation; gelu_aux stores its input) and
/// the store of C[i, j] of batch entry q.
TCC_HOST_DEVICE inline void finish(const Gemm &g, int64_t q, int64_t i, int64_t j, float sum) {
  if (i >= g.m || j >= g.n)
    return;
  using Activation = ::tcc::cuda::MatmulActivation;
  if (g.bias)
    sum += load(g.type, g.biasValues, i);
  const int64_t at = q * g.strideC + j * g.ldc + i;
  if (g.activation == Activation::relu && !(sum > 0) && sum == sum) // kernels::Relu: NaN stays
    sum = 0;
  if (g.activation == Activation::gelu || g.activation == Activation::gelu_aux) {
    if (g.activation == Activation::gelu_aux)
      store(g.type, g.aux, at, sum);
    sum = kernels::GeluTanh<float>{}(sum);
  }
  store(g.type, g.C, at, sum);
}

#ifndef TCC_CUDA_HOST_EMULATION
__global__ void __launch_bounds__(kTile *kTile) gemmKernel(Gemm g) {
  __shared__ Tiles t;
  const int x = int(threadIdx.x), y = int(threadIdx.y);
  const int64_t tile = int64_t(blockIdx.x);
  const int64_t i0 = tile % g.tilesM * kTile, j0 = tile / g.tilesM * kTile;
  for (int64_t q = blockIdx.y; q < g.batch; q += gridDim.y) {
    float sum = 0;
    for (int64_t l0 = 0; l0 < g.k; l0 += kTile) {
      loadTiles(g, t, x, y, q, i0, j0, l0);
      __syncthreads();
      accumulate(t, x, y, sum);
      __syncthreads();
    }
    finish(g, q, i0 + x, j0 + y, sum);
  }
}
#endif

/// Enqueues p's C = op(A) op(B) (+ bias, the activation; its input into
/// aux with gelu_aux) on `stream`: one kernel, capturable into a graph.
inline void gemm(cudaStream_t stream, const ::tcc::cuda::MatmulProblem &p, const void *A,
                 const void *B, void *C, const void *bias, void *aux) {
  const int64_t tilesM = (p.m + kTile - 1) / kTile, tilesN = (p.n + kTile - 1) / kTile;
  if (tilesM * tilesN > 0x7fffffff)
    throw std::runtime_error("the fallback matmul of [" + p.key() + "]: more than 2^31 tiles");
  const Gemm g{p.type,    p.transA, p.transB, p.bias, p.activation, p.m,       p.n,
               p.k,       p.lda,    p.ldb,    p.ldc,  p.batch,      p.strideA, p.strideB,
               p.strideC, tilesM,   A,        B,      bias,         C,         aux};
#ifdef TCC_CUDA_HOST_EMULATION
  emulation::enqueue(stream, [=] {
    // Each phase for all the block's threads in turn: the kernel's order.
    Tiles t;
    float sums[kTile][kTile];
    for (int64_t q = 0; q < g.batch; ++q)
      for (int64_t tile = 0; tile < tilesM * tilesN; ++tile) {
        const int64_t i0 = tile % tilesM * kTile, j0 = tile / tilesM * kTile;
        for (auto &row : sums)
          for (float &s : row)
            s = 0;
        for (int64_t l0 = 0; l0 < g.k; l0 += kTile) {
          for (int y = 0; y < kTile; ++y)
            for (int x = 0; x < kTile; ++x)
              loadTiles(g, t, x, y, q, i0, j0, l0);
          for (int y = 0; y < kTile; ++y)
            for (int x = 0; x < kTile; ++x)
              accumulate(t, x, y, sums[y][x]);
        }
        for (int y = 0; y < kTile; ++y)
          for (int x = 0; x < kTile; ++x)
            finish(g, q, i0 + x, j0 + y, sums[y][x]);
      }
  });
#else
  const dim3 grid(unsigned(tilesM * tilesN), unsigned(std::min<int64_t>(p.batch, 65535)));
  gemmKernel<<<grid, dim3(kTile, kTile), 0, stream>>>(g);
  check(cudaGetLastError(), "launching the fallback matmul");
#endif
}

} // namespace tcc::rt::cuda::fallback

#endif // TCC_RUNTIME_CUDA_DEVICE_MATMULFALLBACK_CUH
