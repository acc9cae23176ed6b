//===- NcclCollectives.h - The step's collectives on the GPU ----*- C++ -*-===//
//
// What the generated step calls for its collectives on the cuda target
// (runtime/cuda/device/Collectives.cuh), defined with the NCCL communicator
// a trainer of several ranks links (NcclCommunicator.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_NCCLCOLLECTIVES_H
#define TCC_RUNTIME_CUDA_NCCLCOLLECTIVES_H

#include "runtime/comm/Communicator.h"
#include "runtime/cuda/CollectiveType.h"

#include <cuda_runtime_api.h>
#include <cstdint>

namespace tcc::rt::cuda {

/// Each of the `count` tensors inputs[k] (sizes[k] elements of types[k])
/// summed, or averaged, over the ranks into results[k]: one ncclAllReduce
/// each, in one group, on `stream` (capturable into the step's CUDA graph).
/// `comm` is the trainer's communicator, the NCCL one; a gradient bucket
/// on the step's side stream (`bucket`) uses its second NCCL communicator.
void nccl_all_reduce(Communicator *comm, cudaStream_t stream, int count,
                     const void *const *inputs, void *const *results, const int64_t *sizes,
                     const CollectiveType *types, bool mean, bool bucket);

/// Sharded state (Collectives.cuh's all_gather and reduce_scatter): one
/// ncclAllGather or ncclReduceScatter per tensor (of types[k]) in one group,
/// through `packed` (ranks * sizes[k] elements of each tensor, one after
/// the other, of device memory) where the whole tensors are padded to
/// ranks * sizes[k]. A ZeRO-2 gradient bucket on the side stream (`bucket`)
/// reduce-scatters through the second communicator.
void nccl_all_gather(Communicator *comm, cudaStream_t stream, int count,
                     const void *const *chunks, void *const *results, const int64_t *sizes,
                     const int64_t *wholes, const CollectiveType *types, char *packed);
void nccl_reduce_scatter(Communicator *comm, cudaStream_t stream, int count,
                         const void *const *inputs, void *const *results,
                         const int64_t *sizes, const int64_t *wholes,
                         const CollectiveType *types, char *packed, bool bucket);

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_NCCLCOLLECTIVES_H
