//===- KernelInstances.h - Kernels every cpu trainer shares -----*- C++ -*-===//
//
// The model-independent kernels a cpu step calls, instantiated once in
// KernelInstances.cpp instead of in every generated step: the generated
// source includes this header, which declares them `extern template`, and
// `tcc compile` links the object of KernelInstances.cpp that it compiled
// with the trainer's own flags and keeps in its object cache
// (tools/tcc/ObjectCache.h). The heavy ones only: a kernel instantiated with
// a step's own lambda (the norms' `_with` forms, the updates) cannot be.
// What it saves: docs/training.md, "The object cache".
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CPU_KERNELINSTANCES_H
#define TCC_RUNTIME_CPU_KERNELINSTANCES_H

#include "runtime/kernels/Kernels.h"

// `extern` here; empty in KernelInstances.cpp, which instantiates them.
#ifndef TCC_KERNEL_INSTANCE
#define TCC_KERNEL_INSTANCE extern
#endif

namespace tcc::rt::kernels {

// Convolutions and matrix products: the register-tiled gemm (Gemm.h) and
// the convolution algorithms, most of a step's code.
TCC_KERNEL_INSTANCE template void conv2d_forward<float>(const Conv2dShape &, const float *,
                                                        const float *, const float *, float *);
TCC_KERNEL_INSTANCE template void conv2d_backward_data<float>(const Conv2dShape &,
                                                              const float *, const float *,
                                                              float *);
TCC_KERNEL_INSTANCE template void conv2d_backward_filter<float>(const Conv2dShape &,
                                                                const float *, const float *,
                                                                float *);
TCC_KERNEL_INSTANCE template void conv2d_backward_bias<float>(const Conv2dShape &,
                                                              const float *, float *);
TCC_KERNEL_INSTANCE template void linear_forward<float>(int64_t, int64_t, int64_t,
                                                        const float *, const float *,
                                                        const float *, float *);
TCC_KERNEL_INSTANCE template void linear_backward_data<float>(int64_t, int64_t, int64_t,
                                                              const float *, const float *,
                                                              float *);
TCC_KERNEL_INSTANCE template void linear_backward_weight<float>(int64_t, int64_t, int64_t,
                                                                const float *, const float *,
                                                                float *);
TCC_KERNEL_INSTANCE template void linear_backward_bias<float>(int64_t, int64_t, const float *,
                                                              float *);
TCC_KERNEL_INSTANCE template void batched_matmul<float>(int64_t, int64_t, int64_t, int64_t,
                                                        bool, bool, const float *,
                                                        const float *, float *);

// Attention, pools, softmax, layer norm and the transpose.
TCC_KERNEL_INSTANCE template void attention_forward<float>(const AttentionShape &,
                                                           const AttentionDropout &,
                                                           const float *, const float *,
                                                           const float *, float *, float *);
TCC_KERNEL_INSTANCE template void attention_backward<float>(
    const AttentionShape &, const AttentionDropout &, const float *, const float *,
    const float *, const float *, const float *, const float *, float *, float *, float *);
TCC_KERNEL_INSTANCE template void max_pool2d_forward<float>(const Pool2dShape &, const float *,
                                                            float *);
TCC_KERNEL_INSTANCE template void max_pool2d_backward<float>(const Pool2dShape &,
                                                             const float *, const float *,
                                                             float *);
TCC_KERNEL_INSTANCE template void avg_pool2d_forward<float>(const Pool2dShape &, bool,
                                                            const float *, float *);
TCC_KERNEL_INSTANCE template void avg_pool2d_backward<float>(const Pool2dShape &, bool,
                                                             const float *, float *);
TCC_KERNEL_INSTANCE template void softmax_forward<float>(int64_t, int64_t, int64_t,
                                                         const float *, float *);
TCC_KERNEL_INSTANCE template void softmax_backward<float>(int64_t, int64_t, int64_t,
                                                          const float *, const float *,
                                                          float *);
TCC_KERNEL_INSTANCE template void layer_norm_forward<float>(int64_t, int64_t, const float *,
                                                            const float *, const float *,
                                                            double, float *, float *, float *);
TCC_KERNEL_INSTANCE template void layer_norm_backward<float>(int64_t, int64_t, const float *,
                                                             const float *, const float *,
                                                             const float *, const float *,
                                                             float *, float *, float *);
TCC_KERNEL_INSTANCE template void transpose<float>(int, const int64_t *, const int64_t *,
                                                   const float *, float *);

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_CPU_KERNELINSTANCES_H
