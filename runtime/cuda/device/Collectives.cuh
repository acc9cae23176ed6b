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
/// The element types the step's collectives reduce (NcclCollectives.h's).
enum class CollectiveType { F32, F64, F16, BF16 };

namespace detail {
/// One packed message of the tensors as float (or double), summed by the
/// host communicator, scaled for a mean and stored back: what NCCL computes
/// up to the order of its additions (and, in 16 bits, its roundings).
template <class Wide, class Load, class Store>
void emulated_all_reduce(Communicator *comm, const std::vector<const void *> &in,
                         const std::vector<void *> &out, const std::vector<int64_t> &sizes,
                         bool mean, Load load, Store store) {
  std::vector<Wide> message;
  for (size_t k = 0; k < in.size(); ++k)
    for (int64_t i = 0; i < sizes[k]; ++i)
      message.push_back(load(in[k], i));
  comm->allReduceSum(message.data(), int64_t(message.size()));
  const Wide scale = mean ? Wide(1) / Wide(comm->size()) : Wide(1);
  size_t at = 0;
  for (size_t k = 0; k < out.size(); ++k)
    for (int64_t i = 0; i < sizes[k]; ++i)
      store(out[k], i, message[at++] * scale);
}
} // namespace detail
#endif

/// Each inputs[k] of sizes[k] elements summed (or averaged) over the ranks
/// into results[k], on stream `s`.
inline void all_reduce(cudaStream_t s, Communicator *comm, int count,
                       const void *const *inputs, void *const *results, const int64_t *sizes,
                       CollectiveType type, bool mean) {
#ifdef TCC_CUDA_HOST_EMULATION
  // The caller's arrays are gone when a replay runs the work: copied.
  std::vector<const void *> in(inputs, inputs + count);
  std::vector<void *> out(results, results + count);
  std::vector<int64_t> n(sizes, sizes + count);
  emulation::enqueue(s, [=] {
    auto f32 = [](const void *p, int64_t i) { return static_cast<const float *>(p)[i]; };
    auto f64 = [](const void *p, int64_t i) { return static_cast<const double *>(p)[i]; };
    auto f16 = [](const void *p, int64_t i) {
      return half::f16ToFloat(static_cast<const uint16_t *>(p)[i]);
    };
    auto bf16 = [](const void *p, int64_t i) {
      return half::bf16ToFloat(static_cast<const uint16_t *>(p)[i]);
    };
    switch (type) {
    case CollectiveType::F32:
      detail::emulated_all_reduce<float>(comm, in, out, n, mean, f32, [](void *p, int64_t i, float v) {
        static_cast<float *>(p)[i] = v;
      });
      break;
    case CollectiveType::F64:
      detail::emulated_all_reduce<double>(comm, in, out, n, mean, f64, [](void *p, int64_t i, double v) {
        static_cast<double *>(p)[i] = v;
      });
      break;
    case CollectiveType::F16:
      detail::emulated_all_reduce<float>(comm, in, out, n, mean, f16, [](void *p, int64_t i, float v) {
        static_cast<uint16_t *>(p)[i] = half::floatToF16(v);
      });
      break;
    case CollectiveType::BF16:
      detail::emulated_all_reduce<float>(comm, in, out, n, mean, bf16, [](void *p, int64_t i, float v) {
        static_cast<uint16_t *>(p)[i] = half::floatToBf16(v);
      });
      break;
    }
  });
#else
  nccl_all_reduce(comm, s, count, inputs, results, sizes, type, mean);
#endif
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_COLLECTIVES_CUH
