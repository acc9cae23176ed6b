//===- ConvStatistics.cuh - A batch norm's statistics from its conv -*- CUDA -*-===//
//
// The kernels around a conv_statistics group's cuDNN graph (conv_fprop and
// genstats, docs/cuda.md "Batch norm statistics from the convolution"): the
// weight transposed to the KRSC order the graph's engines take
// (WeightLayout.cuh), and the f32
// sum and sum of squares they give turned into what a batch norm with
// `statistics` reads (SyncNorm.cuh): the sum, and the squared deviations
// from the mean, in double.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_CONVSTATISTICS_CUH
#define TCC_RUNTIME_CUDA_DEVICE_CONVSTATISTICS_CUH

#include "runtime/cuda/device/Launch.cuh"
#include "runtime/cuda/device/WeightLayout.cuh"
#include "runtime/kernels/Norm.h"

#include <cstdint>

namespace tcc::rt::cuda {

/// Per channel, the sum and the squared deviations from the mean,
/// sum x^2 - (sum x)^2 / count, from the one-pass f32 sums (never below
/// 0: the difference of two rounded sums can be).
inline void statistics_from_sums(cudaStream_t s, const kernels::BatchNormShape &shape,
                                 const float *sum, const float *squares, double *outSum,
                                 double *outSquared) {
  for_each(s, shape.c, [=] __device__(int64_t c) {
    const double total = sum[c];
    const double squared = double(squares[c]) - total * kernels::batch_norm_mean(shape, total);
    outSum[c] = total;
    outSquared[c] = squared > 0 ? squared : 0;
  });
}

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_DEVICE_CONVSTATISTICS_CUH
