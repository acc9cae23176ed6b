//===- Collectives.cuh - The collectives of the cuda target -----*- C++ -*-===//
//
// A distributed step's collectives (docs/distributed.md) in stream order:
// on a GPU, NCCL calls on the step's stream, captured into its CUDA graph
// (runtime/cuda/NcclCollectives.h); under host emulation, the trainer's
// host communicator (MPI in the tests), called when the stream reaches the
// work, so a graph replay reduces again, on every rank in the same order.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_COLLECTIVES_CUH
#define TCC_RUNTIME_CUDA_DEVICE_COLLECTIVES_CUH

#include "runtime/comm/Communicator.h"
#include "runtime/cuda/CollectiveType.h"
#include "runtime/cuda/device/Launch.cuh"

#include <cstdint>
#include <stdexcept>
#include <string>

#ifdef TCC_CUDA_HOST_EMULATION
#include "runtime/common/Float16.h"

#include <algorithm>
#include <vector>
#else
#include "runtime/cuda/NcclCollectives.h"
#endif

namespace tcc::rt::cuda {

#ifdef TCC_CUDA_HOST_EMULATION
namespace detail {
/// Element i of a tensor of `type` as a double, and stored back rounded.
inline double load(CollectiveType type, const void *p, int64_t i) {
  switch (type) {
  case CollectiveType::F32:
    return static_cast<const float *>(p)[i];
  case CollectiveType::F64:
    return static_cast<const double *>(p)[i];
  case CollectiveType::F16:
    return half::f16ToFloat(static_cast<const uint16_t *>(p)[i]);
  case CollectiveType::BF16:
    return half::bf16ToFloat(static_cast<const uint16_t *>(p)[i]);
  }
  return 0;
}
inline void store(CollectiveType type, void *p, int64_t i, double v) {
  switch (type) {
  case CollectiveType::F32:
    static_cast<float *>(p)[i] = float(v);
    break;
  case CollectiveType::F64:
    static_cast<double *>(p)[i] = v;
    break;
  case CollectiveType::F16:
    static_cast<uint16_t *>(p)[i] = half::floatToF16(float(v));
    break;
  case CollectiveType::BF16:
    static_cast<uint16_t *>(p)[i] = half::floatToBf16(float(v));
    break;
  }
}
} // namespace detail
#endif

/// Each inputs[k] of sizes[k] elements of types[k] summed (or averaged)
/// over the ranks into results[k], on stream `s`. A gradient bucket on the
/// side stream (`bucket`) goes through the buckets' own NCCL communicator,
/// so that the collectives of the step's stream (a synchronised norm's
/// sums) never queue behind it.
inline void all_reduce(cudaStream_t s, Communicator *comm, int count,
                       const void *const *inputs, void *const *results, const int64_t *sizes,
                       const CollectiveType *types, bool mean, bool bucket = false) {
#ifdef TCC_CUDA_HOST_EMULATION
  // The caller's arrays are gone when a replay runs the work: copied. One
  // message of doubles, summed by the host communicator, scaled for a mean,
  // stored back in each tensor's type: NCCL's sums up to the order of the
  // additions (and, in 16 bits, its roundings at each hop).
  std::vector<const void *> in(inputs, inputs + count);
  std::vector<void *> out(results, results + count);
  std::vector<int64_t> n(sizes, sizes + count);
  std::vector<CollectiveType> type(types, types + count);
  // One host communicator: every rank runs the streams in program order,
  // so the collectives still come in the same order on every rank.
  (void)bucket;
  emulation::enqueue(s, [=] {
    std::vector<double> message;
    for (size_t k = 0; k < in.size(); ++k)
      for (int64_t i = 0; i < n[k]; ++i)
        message.push_back(detail::load(type[k], in[k], i));
    comm->allReduceSum(message.data(), int64_t(message.size()));
    const double scale = mean ? 1.0 / double(comm->size()) : 1.0;
    size_t at = 0;
    for (size_t k = 0; k < out.size(); ++k)
      for (int64_t i = 0; i < n[k]; ++i)
        detail::store(type[k], out[k], i, message[at++] * scale);
  });
#else
  nccl_all_reduce(comm, s, count, inputs, results, sizes, types, mean, bucket);
#endif
}

namespace detail {
/// The workspace of a gather or scatter: every tensor padded to ranks
/// chunks (the memory plan's size, codegen/cuda/CudaConvPlans.cpp).
inline char *packed(Communicator *comm, int count, const int64_t *sizes,
                    const CollectiveType *types, char *workspace, int64_t bytes) {
  int64_t needed = 0;
  for (int k = 0; k < count; ++k)
    needed += sizes[k] * comm->size() * collectiveBytes(types[k]);
  if (!workspace || bytes < needed)
    throw std::runtime_error("a sharded state's collective was given " +
                             std::to_string(bytes) + " bytes of workspace, it needs " +
                             std::to_string(needed) +
                             " (a trainer compiled by another tcc version?)");
  return workspace;
}
} // namespace detail

/// tcc.shard: elements [rank * c, rank * c + c) of x's n, zero past n; the
/// elements' bits copied (`bytes` 4 or 2: zero bits are 0.0 in every type).
inline void shard(cudaStream_t s, Communicator *comm, int64_t n, int64_t c, int bytes,
                  const void *x, void *chunk) {
  const int64_t first = int64_t(comm ? comm->rank() : 0) * c;
  if (bytes == 4) {
    auto *from = static_cast<const uint32_t *>(x);
    auto *to = static_cast<uint32_t *>(chunk);
    for_each(s, c, [=] __device__(int64_t i) { to[i] = first + i < n ? from[first + i] : 0u; });
  } else {
    auto *from = static_cast<const uint16_t *>(x);
    auto *to = static_cast<uint16_t *>(chunk);
    for_each(s, c, [=] __device__(int64_t i) {
      to[i] = first + i < n ? from[first + i] : uint16_t(0);
    });
  }
}

/// tcc.all_gather of `count` tensors: chunks[k] (sizes[k] =
/// ceil(wholes[k] / ranks) elements of types[k]) from every rank, in rank
/// order, into results[k], cut to its wholes[k] elements. The op's
/// workspace receives each tensor's gathered chunks: the whole, then padding.
inline void all_gather(cudaStream_t s, Communicator *comm, int count,
                       const void *const *chunks, void *const *results, const int64_t *sizes,
                       const int64_t *wholes, const CollectiveType *types, char *workspace,
                       int64_t workspaceBytes) {
  char *packed = detail::packed(comm, count, sizes, types, workspace, workspaceBytes);
#ifdef TCC_CUDA_HOST_EMULATION
  std::vector<const void *> in(chunks, chunks + count);
  std::vector<void *> out(results, results + count);
  std::vector<int64_t> n(sizes, sizes + count), whole(wholes, wholes + count);
  std::vector<CollectiveType> type(types, types + count);
  emulation::enqueue(s, [=] {
    const int64_t ranks = comm->size();
    for (size_t k = 0, at = 0; k < in.size(); ++k) {
      const int64_t bytes = collectiveBytes(type[k]);
      allGatherBytes(*comm, in[k], packed + at, n[k] * bytes);
      std::copy(packed + at, packed + at + whole[k] * bytes, static_cast<char *>(out[k]));
      at += size_t(ranks * n[k] * bytes);
    }
  });
#else
  nccl_all_gather(comm, s, count, chunks, results, sizes, wholes, types, packed);
#endif
}

/// tcc.reduce_scatter of `count` tensors: inputs[k] (wholes[k] elements of
/// types[k], padded with zeros to ranks * sizes[k] in the op's workspace)
/// summed over the ranks, this rank receiving its chunk in results[k]. A
/// 16-bit tensor is summed in 16 bits with f32 arithmetic, as the all-reduce.
/// A ZeRO-2 gradient bucket on the side stream (`bucket`) goes through the
/// buckets' communicator, as all_reduce's.
inline void reduce_scatter(cudaStream_t s, Communicator *comm, int count,
                           const void *const *inputs, void *const *results,
                           const int64_t *sizes, const int64_t *wholes,
                           const CollectiveType *types, char *workspace,
                           int64_t workspaceBytes, bool bucket = false) {
  char *packed = detail::packed(comm, count, sizes, types, workspace, workspaceBytes);
#ifdef TCC_CUDA_HOST_EMULATION
  (void)packed;
  (void)bucket;
  std::vector<const void *> in(inputs, inputs + count);
  std::vector<void *> out(results, results + count);
  std::vector<int64_t> n(sizes, sizes + count), whole(wholes, wholes + count);
  std::vector<CollectiveType> type(types, types + count);
  emulation::enqueue(s, [=] {
    // Summed in f32 (16-bit values widen exactly), each chunk rounded once
    // where it is stored: NCCL's one hop of 2 ranks.
    const int64_t ranks = comm->size();
    for (size_t k = 0; k < in.size(); ++k) {
      std::vector<float> all(static_cast<size_t>(ranks * n[k]), 0.0f);
      std::vector<float> mine(static_cast<size_t>(n[k]));
      for (int64_t i = 0; i < whole[k]; ++i)
        all[size_t(i)] = float(detail::load(type[k], in[k], i));
      comm->reduceScatterSum(all.data(), mine.data(), n[k]);
      for (int64_t i = 0; i < n[k]; ++i)
        detail::store(type[k], out[k], i, mine[size_t(i)]);
    }
  });
#else
  nccl_reduce_scatter(comm, s, count, inputs, results, sizes, wholes, types, packed, bucket);
#endif
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_COLLECTIVES_CUH
