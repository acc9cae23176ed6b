//===- WeightLayout.cuh - A conv weight between KCRS and KRSC ----*- CUDA -*-===//
//
// tcc keeps a convolution's weight KCRS (the checkpoint's layout, what the
// cuDNN graphs of the step take); the engines of cuDNN's statistics graph
// (ConvStatistics.cuh) and CUTLASS's convolutions (CutlassConv.cuh) take it
// KRSC, channels last. 16-bit weights, moved as their bits.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_WEIGHTLAYOUT_CUH
#define TCC_RUNTIME_CUDA_DEVICE_WEIGHTLAYOUT_CUH

#include "runtime/cuda/device/Launch.cuh"

#include <cstdint>

namespace tcc::rt::cuda {

/// w [k, c, rs] (KCRS) into out [k, rs, c] (KRSC).
inline void weight_to_krsc(cudaStream_t s, int64_t k, int64_t c, int64_t rs,
                           const uint16_t *w, uint16_t *out) {
  for_each(s, k * c * rs, [=] __device__(int64_t i) {
    const int64_t ci = i % c, krs = i / c;
    out[i] = w[(krs / rs * c + ci) * rs + krs % rs];
  });
}

/// w [k, rs, c] (KRSC) into out [k, c, rs] (KCRS): weight_to_krsc undone.
inline void weight_from_krsc(cudaStream_t s, int64_t k, int64_t c, int64_t rs,
                             const uint16_t *w, uint16_t *out) {
  for_each(s, k * c * rs, [=] __device__(int64_t i) {
    const int64_t tap = i % rs, kc = i / rs;
    out[i] = w[(kc / c * rs + tap) * c + kc % c];
  });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_WEIGHTLAYOUT_CUH
