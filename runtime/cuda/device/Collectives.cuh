//===- Collectives.cuh - tcc.all_reduce on the cuda target ------*- C++ -*-===//
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

#ifdef TCC_CUDA_HOST_EMULATION
#include "runtime/common/Float16.h"

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
/// over the ranks into results[k], on stream `s`.
inline void all_reduce(cudaStream_t s, Communicator *comm, int count,
                       const void *const *inputs, void *const *results, const int64_t *sizes,
                       const CollectiveType *types, bool mean) {
#ifdef TCC_CUDA_HOST_EMULATION
  // The caller's arrays are gone when a replay runs the work: copied. One
  // message of doubles, summed by the host communicator, scaled for a mean,
  // stored back in each tensor's type: NCCL's sums up to the order of the
  // additions (and, in 16 bits, its roundings at each hop).
  std::vector<const void *> in(inputs, inputs + count);
  std::vector<void *> out(results, results + count);
  std::vector<int64_t> n(sizes, sizes + count);
  std::vector<CollectiveType> type(types, types + count);
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
  nccl_all_reduce(comm, s, count, inputs, results, sizes, types, mean);
#endif
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_COLLECTIVES_CUH
