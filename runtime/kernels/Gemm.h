//===- Gemm.h - Register-tiled matrix multiply ------------------*- C++ -*-===//
//
// C = A * B (or C += A * B), organised the classic Goto/BLIS way in plain C++
// (no intrinsics; built with -O2 or -O3, and -march=native for AVX2/FMA):
//  - A (m x k) is read in row panels of at most MR rows and B (k x n) in
//    column panels of NR columns. An operand is either packed (copied k-major,
//    panel after panel: pack_a / pack_b) or read in place as rows at arbitrary
//    offsets (RowsA / RowsB): the convolutions read their column matrices that
//    way without building them;
//  - the micro-kernel keeps an MR x NR tile of C in registers: per step of k it
//    broadcasts MR values of A and multiply-adds them into NR-wide rows (the
//    compiler vectorizes the NR loop and unrolls the MR loop: 12 of the 16
//    AVX2 registers hold the tile);
//  - k is split into blocks of at most kGemmKC so that the B panel of the
//    micro-kernel stays in L1 while it meets every row panel of A.
//
// The tiling and the order of every sum depend only on the shape, never on the
// number of threads, so results are bit-identical for any OMP_NUM_THREADS.
// Sums are in T (a tile sums a k block in registers, then adds it to C); long
// reductions are the caller's business.
//
// Everything here is an implementation detail of Conv.h and Linear.h.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_GEMM_H
#define TCC_RUNTIME_KERNELS_GEMM_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace tcc::rt::kernels::detail {

//===----------------------------------------------------------------------===//
// Tile sizes
//===----------------------------------------------------------------------===//

/// Bytes of the widest SIMD register the compiler may use (-march decides).
#if defined(__AVX512F__)
constexpr int kSimdBytes = 64;
#elif defined(__AVX__)
constexpr int kSimdBytes = 32;
#else
constexpr int kSimdBytes = 16;
#endif

/// The register tile: MR rows of two SIMD registers each, i.e. 2*MR
/// accumulator registers (12 of the 16 AVX2 registers, 8 of the 16 SSE ones;
/// with AVX-512, 12 zmm, or 24 of the 32 ymm where GCC prefers 256 bits).
template <class T> struct GemmTile {
  static constexpr int64_t NR = 2 * kSimdBytes / int64_t(sizeof(T));
  static constexpr int64_t MR = kSimdBytes >= 32 ? 6 : 4;
};

/// Largest k block of one micro-kernel call (a 256 x 16 float B panel: 16 KiB).
constexpr int64_t kGemmKC = 256;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Number of k blocks and their length: k split into equal blocks <= kGemmKC.
inline int64_t gemm_k_block(int64_t k) {
  return k <= kGemmKC ? k : ceil_div(k, ceil_div(k, kGemmKC));
}

/// The m rows of A are cut into ceil(m / MR) row panels of equal height (to
/// one row): with m = 32 and MR = 6, panels of 5 or 6 rows rather than five of
/// 6 and one of 2, whose few accumulators would leave the FMA units idle.
template <class T> int64_t gemm_row_panels(int64_t m) {
  return ceil_div(m, GemmTile<T>::MR);
}
/// First row of row panel ip (of gemm_row_panels(m)); ip = panels gives m.
template <class T> int64_t gemm_panel_row(int64_t m, int64_t ip) {
  return ip * m / gemm_row_panels<T>(m);
}

/// Elements of a packed A (m x k) / packed B (k x n).
template <class T> int64_t packed_a_size(int64_t m, int64_t k) {
  return gemm_row_panels<T>(m) * GemmTile<T>::MR * k;
}
template <class T> int64_t packed_b_size(int64_t k, int64_t n) {
  return ceil_div(n, GemmTile<T>::NR) * GemmTile<T>::NR * k;
}

//===----------------------------------------------------------------------===//
// Scratch memory
//===----------------------------------------------------------------------===//

/// A growable, 64-byte aligned array (contents are not preserved on growth).
template <class T> class AlignedBuffer {
public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  ~AlignedBuffer() { std::free(data_); }

  /// At least n elements.
  T *get(int64_t n) {
    if (n > capacity_) {
      std::free(data_);
      const size_t bytes = (size_t(n) * sizeof(T) + 63) / 64 * 64;
      data_ = static_cast<T *>(std::aligned_alloc(64, bytes));
      // Kernels run inside OpenMP regions, where an exception could not
      // propagate anyway; out of memory here ends the program with a line.
      if (!data_) {
        std::fprintf(stderr, "error: out of memory for a kernel's scratch "
                             "buffer (%zu bytes)\n", bytes);
        std::abort();
      }
      capacity_ = n;
    }
    return data_;
  }

private:
  T *data_ = nullptr;
  int64_t capacity_ = 0;
};

/// Scratch memory of the calling thread, kept between calls. `Slot` tells
/// apart buffers that are live at the same time: by convention 0-9 inside
/// parallel loops (one buffer per thread), 10-99 for operands that the calling
/// thread prepares for its parallel loops, 100+ for gemm().
template <class T, int Slot> T *thread_scratch(int64_t n) {
  static thread_local AlignedBuffer<T> buffer;
  return buffer.get(n);
}

//===----------------------------------------------------------------------===//
// Packing
//===----------------------------------------------------------------------===//

/// Packs the rows of row panel ip of A(i, l) = a[i*rs + l*cs] (m x k) into
/// ap[l*MR + r], zero past the rows of the panel.
template <class T>
void pack_a_panel(int64_t ip, int64_t m, int64_t k, const T *a, int64_t rs,
                  int64_t cs, T *ap) {
  constexpr int64_t MR = GemmTile<T>::MR;
  const int64_t i0 = gemm_panel_row<T>(m, ip);
  const int64_t rows = gemm_panel_row<T>(m, ip + 1) - i0;
  for (int64_t l = 0; l < k; ++l) {
    for (int64_t r = 0; r < rows; ++r)
      ap[l * MR + r] = a[(i0 + r) * rs + l * cs];
    for (int64_t r = rows; r < MR; ++r)
      ap[l * MR + r] = T(0);
  }
}

/// Packs columns [jp*NR, jp*NR + NR) of B(l, j) = b[l*rs + j*cs] (k x n) into
/// bp[l*NR + c], zero columns past n.
template <class T>
void pack_b_panel(int64_t jp, int64_t k, int64_t n, const T *b, int64_t rs,
                  int64_t cs, T *bp) {
  constexpr int64_t NR = GemmTile<T>::NR;
  const int64_t j0 = jp * NR, cols = std::min(NR, n - j0);
  for (int64_t l = 0; l < k; ++l) {
    if (cols == NR && cs == 1) {
#pragma omp simd
      for (int64_t c = 0; c < NR; ++c)
        bp[l * NR + c] = b[l * rs + j0 + c];
    } else {
      for (int64_t c = 0; c < cols; ++c)
        bp[l * NR + c] = b[l * rs + (j0 + c) * cs];
      for (int64_t c = cols; c < NR; ++c)
        bp[l * NR + c] = T(0);
    }
  }
}

/// The whole of A / B, panel after panel (single-threaded).
template <class T>
void pack_a(int64_t m, int64_t k, const T *a, int64_t rs, int64_t cs, T *ap) {
  for (int64_t ip = 0; ip < gemm_row_panels<T>(m); ++ip)
    pack_a_panel(ip, m, k, a, rs, cs, ap + ip * GemmTile<T>::MR * k);
}
template <class T>
void pack_b(int64_t k, int64_t n, const T *b, int64_t rs, int64_t cs, T *bp) {
  for (int64_t jp = 0; jp * GemmTile<T>::NR < n; ++jp)
    pack_b_panel(jp, k, n, b, rs, cs, bp + jp * GemmTile<T>::NR * k);
}

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

// An operand is either packed (pack_a / pack_b above) or a set of rows at
// arbitrary offsets from a base pointer, contiguous along the dimension that
// the micro-kernel walks: the convolutions read their column matrices in place
// this way. RowsA is read in its m rows only; RowsB is read up to the next
// multiple of NR columns in every row (values past n only reach columns of C
// that are not stored), so that much memory must be readable.

/// Packed A (m x k), from pack_a.
template <class T> struct PackedA { const T *data; };
/// A(i, l) = base[off[i] + l].
template <class T> struct RowsA {
  const T *base;
  const int64_t *off;
};
/// Packed B (k x n), from pack_b.
template <class T> struct PackedB { const T *data; };
/// B(l, j) = base[off[l] + j].
template <class T> struct RowsB {
  const T *base;
  const int64_t *off;
};

// What the micro-kernel sees of the operands: row panel ip of A and column
// panel jp of B, from step l0 of k on.
template <class T> struct PackedAPanel {
  const T *p;
  T at(int r, int64_t l) const { return p[l * GemmTile<T>::MR + r]; }
};
template <class T> struct RowsAPanel {
  const T *rows[GemmTile<T>::MR];
  T at(int r, int64_t l) const { return rows[r][l]; }
};
template <class T> struct PackedBPanel {
  const T *p;
  const T *row(int64_t l) const { return p + l * GemmTile<T>::NR; }
};
template <class T> struct RowsBPanel {
  const T *base;
  const int64_t *off;
  const T *row(int64_t l) const { return base + off[l]; }
};

template <class T>
PackedAPanel<T> a_panel(const PackedA<T> &a, int64_t m, int64_t k, int64_t ip,
                        int64_t l0) {
  return {a.data + ip * GemmTile<T>::MR * k + l0 * GemmTile<T>::MR};
}
template <class T>
RowsAPanel<T> a_panel(const RowsA<T> &a, int64_t m, int64_t k, int64_t ip,
                      int64_t l0) {
  constexpr int64_t MR = GemmTile<T>::MR;
  const int64_t i0 = gemm_panel_row<T>(m, ip);
  const int64_t last = gemm_panel_row<T>(m, ip + 1) - 1;
  RowsAPanel<T> panel;
  for (int64_t r = 0; r < MR; ++r) // rows past the panel repeat its last one
    panel.rows[r] = a.base + a.off[std::min(i0 + r, last)] + l0;
  return panel;
}
template <class T>
PackedBPanel<T> b_panel(const PackedB<T> &b, int64_t k, int64_t jp,
                        int64_t l0) {
  return {b.data + jp * GemmTile<T>::NR * k + l0 * GemmTile<T>::NR};
}
template <class T>
RowsBPanel<T> b_panel(const RowsB<T> &b, int64_t k, int64_t jp, int64_t l0) {
  return {b.base + jp * GemmTile<T>::NR, b.off + l0};
}

//===----------------------------------------------------------------------===//
// Micro-kernel
//===----------------------------------------------------------------------===//

/// a * b + c, fused where the target has FMA (also under -ffp-contract=off,
/// which -std=c++17 implies).
template <class T> inline T madd(T a, T b, T c) {
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

/// C[r, j] (+)= sum_{l < kc} A(r, l) * B(l, j) for r < R, j < cols: one
/// R x NR tile of C in registers (R <= MR is a template parameter so that the
/// accumulators of partial row panels also live in registers).
template <class T, int R, class APanel, class BPanel>
void gemm_micro_kernel(int64_t kc, const APanel &a, const BPanel &b,
                       T *__restrict c, int64_t ldc, int64_t cols,
                       bool accumulate) {
  constexpr int64_t NR = GemmTile<T>::NR;
  T acc[R][NR] = {};
  for (int64_t l = 0; l < kc; ++l) {
    const T *__restrict bl = b.row(l);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const T ar = a.at(r, l);
#pragma omp simd
      for (int64_t j = 0; j < NR; ++j)
        acc[r][j] = madd(ar, bl[j], acc[r][j]);
    }
  }
  for (int r = 0; r < R; ++r) {
    T *cr = c + r * ldc;
    if (cols == NR) {
      if (accumulate) {
#pragma omp simd
        for (int64_t j = 0; j < NR; ++j)
          cr[j] += acc[r][j];
      } else {
#pragma omp simd
        for (int64_t j = 0; j < NR; ++j)
          cr[j] = acc[r][j];
      }
    } else {
      for (int64_t j = 0; j < cols; ++j)
        cr[j] = accumulate ? cr[j] + acc[r][j] : acc[r][j];
    }
  }
}

/// gemm_micro_kernel<T, rows>.
template <class T, int R = int(GemmTile<T>::MR), class APanel, class BPanel>
inline void gemm_micro_kernel_rows(int64_t rows, int64_t kc, const APanel &a,
                                   const BPanel &b, T *c, int64_t ldc,
                                   int64_t cols, bool accumulate) {
  if constexpr (R > 1) {
    if (rows < R)
      return gemm_micro_kernel_rows<T, R - 1>(rows, kc, a, b, c, ldc, cols,
                                              accumulate);
  }
  gemm_micro_kernel<T, R>(kc, a, b, c, ldc, cols, accumulate);
}

//===----------------------------------------------------------------------===//
// Drivers
//===----------------------------------------------------------------------===//

/// The C tiles (ip, jp) for ip in [ip0, ip1): the columns of B panel `jp`
/// times row panels of A. k is walked in blocks (outer loop) so that the B
/// block stays in L1 across the row panels; the first block writes C unless
/// `accumulate`, the others add to it.
template <class T, class AOp, class BOp>
void gemm_column_panel(int64_t m, int64_t n, int64_t k, int64_t ip0,
                       int64_t ip1, int64_t jp, const AOp &a, const BOp &b,
                       T *c, int64_t ldc, bool accumulate) {
  constexpr int64_t NR = GemmTile<T>::NR;
  const int64_t cols = std::min(NR, n - jp * NR);
  if (k == 0) { // the empty sum
    const int64_t i0 = gemm_panel_row<T>(m, ip0);
    const int64_t i1 = gemm_panel_row<T>(m, ip1);
    for (int64_t i = i0; i < i1 && !accumulate; ++i)
      std::fill(c + i * ldc + jp * NR, c + i * ldc + jp * NR + cols, T(0));
    return;
  }
  const int64_t kb = gemm_k_block(k);
  for (int64_t l0 = 0; l0 < k; l0 += kb) {
    const int64_t kc = std::min(kb, k - l0);
    const auto bPanel = b_panel(b, k, jp, l0);
    for (int64_t ip = ip0; ip < ip1; ++ip) {
      const int64_t i0 = gemm_panel_row<T>(m, ip);
      gemm_micro_kernel_rows<T>(
          gemm_panel_row<T>(m, ip + 1) - i0, kc, a_panel(a, m, k, ip, l0),
          bPanel, c + i0 * ldc + jp * NR, ldc, cols, accumulate || l0 > 0);
    }
  }
}

/// C (m x n, row stride ldc) = (or +=, if accumulate) A * B, single-threaded:
/// for use inside the parallel loops of the callers.
template <class T, class AOp, class BOp>
void gemm_serial(int64_t m, int64_t n, int64_t k, const AOp &a, const BOp &b,
                 T *c, int64_t ldc, bool accumulate) {
  const int64_t mPanels = gemm_row_panels<T>(m);
  for (int64_t jp = 0; jp * GemmTile<T>::NR < n; ++jp)
    gemm_column_panel(m, n, k, 0, mPanels, jp, a, b, c, ldc, accumulate);
}

/// C (m x n, row stride ldc) = A * B with A(i, l) = a[i*ars + l*acs] and
/// B(l, j) = b[l*brs + j*bcs]. OpenMP-parallel: packs both operands, then
/// shares out blocks of C tiles (one B panel x up to kRowPanels A panels).
/// Products of fewer than kMinParallel multiply-adds (microseconds) run on
/// the calling thread, as waking the others would cost more.
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T *a, int64_t ars, int64_t acs,
          const T *b, int64_t brs, int64_t bcs, T *c, int64_t ldc) {
  constexpr int64_t MR = GemmTile<T>::MR, NR = GemmTile<T>::NR;
  constexpr int64_t kRowPanels = 8, kMinParallel = int64_t(1) << 18;
  if (m <= 0 || n <= 0)
    return;
  const int64_t mPanels = gemm_row_panels<T>(m), nPanels = ceil_div(n, NR);
  const int64_t rowBlocks = ceil_div(mPanels, kRowPanels);
  T *ap = thread_scratch<T, 100>(packed_a_size<T>(m, k));
  T *bp = thread_scratch<T, 101>(packed_b_size<T>(k, n));
#pragma omp parallel if (m * n * k >= kMinParallel)
  {
#pragma omp for schedule(static) nowait
    for (int64_t ip = 0; ip < mPanels; ++ip)
      pack_a_panel(ip, m, k, a, ars, acs, ap + ip * MR * k);
#pragma omp for schedule(static)
    for (int64_t jp = 0; jp < nPanels; ++jp)
      pack_b_panel(jp, k, n, b, brs, bcs, bp + jp * NR * k);
#pragma omp for collapse(2) schedule(static)
    for (int64_t jp = 0; jp < nPanels; ++jp)
      for (int64_t rb = 0; rb < rowBlocks; ++rb)
        gemm_column_panel(m, n, k, rb * kRowPanels,
                          std::min(mPanels, (rb + 1) * kRowPanels), jp,
                          PackedA<T>{ap}, PackedB<T>{bp}, c, ldc, false);
  }
}

} // namespace tcc::rt::kernels::detail

#endif // TCC_RUNTIME_KERNELS_GEMM_H
