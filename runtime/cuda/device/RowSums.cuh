//===- RowSums.cuh - Per-channel sums over many blocks -----------*- CUDA -*-===//
//
// The device side of runtime/cuda/RowSplit.h: row_part_sums() has each
// block sum its range of a row (BlockSums: a fixed order), or, where a
// row's elements are C apart (hw 1: NHWC tensors, [n, C]), its range of 32
// neighbouring rows side by side (each warp one sample's 32 channels, then
// each channel's warps added in order); combine_parts() adds each row's
// parts, a block per row. Batch norm's statistics and backward sums
// (Norm.cuh) and a bias gradient (StepOps.cuh, reduce_sum_keep) use them.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_ROWSUMS_CUH
#define TCC_RUNTIME_CUDA_DEVICE_ROWSUMS_CUH

#include "runtime/cuda/RowSplit.h"
#include "runtime/cuda/device/Launch.cuh"

#include <string>

namespace tcc::rt::cuda {

using kernels::BatchNormShape;

/// The workspace of a split reduction (RowSplit): each block's sums, then
/// each row's.
struct RowWorkspace {
  kernels::Sums *parts, *rows;
};
inline RowWorkspace row_workspace(const tcc::cuda::RowSplit &split, char *workspace,
                                  int64_t bytes) {
  if (!workspace || bytes < split.workspaceBytes())
    throw std::runtime_error("a per-channel reduction was given " + std::to_string(bytes) +
                             " bytes of workspace, it needs " +
                             std::to_string(split.workspaceBytes()) +
                             " (a trainer compiled by another tcc version?)");
  if (split.length > 0xffffffffLL)
    throw std::runtime_error("a per-channel reduction over more than 2^32 elements per channel");
  auto *parts = reinterpret_cast<kernels::Sums *>(workspace);
  return {parts, parts + split.rows * split.parts};
}

namespace detail {

constexpr int kTileLanes = int(tcc::cuda::RowSplit::kTile), kTileWarps = kThreads / kTileLanes;

/// Where block b of a tiled split (split.tile > 1: hw 1) sums: the group g,
/// the tile's first channel and the part's range of the rows' members.
struct TileBlock {
  int64_t g, firstChannel, begin, end, part;
};
TCC_HOST_DEVICE inline TileBlock tile_block(const BatchNormShape &shape,
                                            const tcc::cuda::RowSplit &split, int64_t b) {
  // Below 2^31 blocks (tile_row_part_sums): 32-bit divisions, which
  // need no subroutine call (one in a kernel made its loop spill).
  const uint32_t tiles = uint32_t((shape.c + kTileLanes - 1) / kTileLanes);
  const uint32_t t = uint32_t(b) / uint32_t(split.parts), g32 = t / tiles;
  const int64_t part = b - int64_t(t) * split.parts, g = g32;
  const int64_t begin = part * split.chunk;
  const int64_t end = begin + split.chunk < split.length ? begin + split.chunk : split.length;
  return {g, int64_t(t - g32 * tiles) * kTileLanes, begin, end, part};
}

/// Warp w's members of a tile block: m = begin + w, begin + w + kTileWarps,
/// ... below end, each the sample row index() of the [rows, C] tensor. A
/// strided group's member walks its sample and row within it without a
/// division per member.
struct TileMembers {
  int64_t m, end, g, groupSize, groups, perSample, sample, within;
  bool strided;
  TCC_HOST_DEVICE TileMembers(const BatchNormShape &shape, const TileBlock &tb, int w)
      : m(tb.begin + w), end(tb.end), g(tb.g), groupSize(shape.group_size()),
        groups(shape.num_groups()), perSample(shape.rows_per_sample), sample(0), within(0),
        strided(shape.strided) {
    if (strided) { // below 2^32 (row_workspace): a 32-bit division, no subroutine call
      sample = int64_t(uint32_t(m) / uint32_t(perSample));
      within = m - sample * perSample;
    }
  }
  TCC_HOST_DEVICE bool more() const { return m < end; }
  TCC_HOST_DEVICE int64_t index() const {
    return strided ? (g + sample * groups) * perSample + within : g * groupSize + m;
  }
  TCC_HOST_DEVICE void next() {
    m += kTileWarps;
    if (!strided)
      return;
    within += kTileWarps;
    while (within >= perSample) {
      within -= perSample;
      ++sample;
    }
  }
};

/// Warp w's sums of term(row, k) for channel c of a tile block over its
/// members (k = index * C + c), in batches (batched_sums).
template <class Term>
TCC_HOST_DEVICE kernels::Sums tile_warp_sums(const BatchNormShape &shape, const TileBlock &tb,
                                             int64_t c, int w, Term term) {
  const int64_t row = tb.g * shape.c + c;
  return batched_sums<BlockSums::kBatch>(TileMembers(shape, tb, w), [&](const TileMembers &at) {
    return term(row, at.index() * shape.c + c);
  });
}

#ifndef TCC_CUDA_HOST_EMULATION
/// One tile block: thread (w, lane) sums channel firstChannel + lane for
/// warp w's members, then lane's eight sums are added in warp order.
template <class Term>
__global__ void __launch_bounds__(kThreads)
    tileRowSumsKernel(BatchNormShape shape, tcc::cuda::RowSplit split, kernels::Sums *parts,
                      Term term) {
  const TileBlock tb = tile_block(shape, split, int64_t(blockIdx.x));
  const int lane = int(threadIdx.x) % kTileLanes, w = int(threadIdx.x) / kTileLanes;
  const int64_t c = tb.firstChannel + lane;
  kernels::Sums s;
  if (c < shape.c)
    s = tile_warp_sums(shape, tb, c, w, term);
  __shared__ double first[kThreads], second[kThreads];
  first[threadIdx.x] = s.first;
  second[threadIdx.x] = s.second;
  __syncthreads();
  if (w == 0 && c < shape.c) {
    kernels::Sums total;
    for (int v = 0; v < kTileWarps; ++v) {
      total.first += first[v * kTileLanes + lane];
      total.second += second[v * kTileLanes + lane];
    }
    parts[(tb.g * shape.c + c) * split.parts + tb.part] = total;
  }
}
#endif

/// row_part_sums for a tiled split, on the device or, emulated, in the
/// device's order.
template <class Term>
void tile_row_part_sums(cudaStream_t s, const BatchNormShape &shape,
                        const tcc::cuda::RowSplit &split, kernels::Sums *parts, Term term) {
  const int64_t blocks = split.across * split.parts;
#ifdef TCC_CUDA_HOST_EMULATION
  emulation::enqueue(s, [=] {
    for (int64_t b = 0; b < blocks; ++b) {
      const TileBlock tb = tile_block(shape, split, b);
      for (int lane = 0; lane < kTileLanes && tb.firstChannel + lane < shape.c; ++lane) {
        const int64_t c = tb.firstChannel + lane;
        kernels::Sums total;
        for (int w = 0; w < kTileWarps; ++w) {
          const kernels::Sums part = tile_warp_sums(shape, tb, c, w, term);
          total.first += part.first;
          total.second += part.second;
        }
        parts[(tb.g * shape.c + c) * split.parts + tb.part] = total;
      }
    }
  });
#else
  if (blocks > 0x7fffffff)
    throw std::runtime_error("a per-channel reduction of more than 2^31 blocks");
  tileRowSumsKernel<<<unsigned(blocks), kThreads, 0, s>>>(shape, split, parts, term);
  check(cudaGetLastError(), "launching a per-channel reduction");
#endif
}

} // namespace detail

/// parts[b] = the sums of term(row, k) over block b's range of its row
/// (row = g * C + c; k the flat index into [n, C, hw]), in a fixed order:
/// one row per block, or, where hw is 1, RowSplit::kTile rows side by side.
template <class Term>
void row_part_sums(cudaStream_t s, const BatchNormShape &shape,
                   const tcc::cuda::RowSplit &split, kernels::Sums *parts, Term term) {
  if (split.tile > 1) {
    detail::tile_row_part_sums(s, shape, split, parts, term);
    return;
  }
  per_block(s, split.rows * split.parts, shape.hw,
            [=] __device__(int64_t b, const BlockSums &sums) {
              const int64_t row = b / split.parts, begin = (b - row * split.parts) * split.chunk;
              const int64_t end = begin + split.chunk < split.length ? begin + split.chunk
                                                                     : split.length;
              const int64_t g = row / shape.c, c = row - g * shape.c;
              const kernels::Sums total = sums.over_range(begin, end, [&](int64_t m, int64_t j) {
                return term(row, (shape.member(g, m) * shape.c + c) * shape.hw + j);
              });
              if (sums.leader())
                parts[b] = total;
            });
}

/// done(row, the sums of the row's parts) for every row of the split, one
/// block per row: its parts summed as BlockSums sums (kThreads strided
/// partial sums, then a tree: the same order on every GPU). One thread per
/// row walking its parts in order (up to 1024 of them, each load waiting
/// for the last add) took most of a batch norm's time on the H200
/// (docs/performance.md, the third GPU run).
template <class Done>
void combine_parts(cudaStream_t s, const tcc::cuda::RowSplit &split,
                   const kernels::Sums *parts, Done done) {
  per_block(s, split.rows, 1, [=] __device__(int64_t row, const BlockSums &sums) {
    const kernels::Sums total = sums.over_range(
        0, split.parts, [&](int64_t p, int64_t) { return parts[row * split.parts + p]; });
    if (sums.leader())
      done(row, total);
  });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_ROWSUMS_CUH
