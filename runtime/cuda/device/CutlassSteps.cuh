//===- CutlassSteps.cuh - CUTLASS in a generated step, on a GPU --*- CUDA -*-===//
//
// Included by a generated step whose tuning file had CUTLASS kernels baked
// in place of cuDNN engines (codegen/cuda/CudaTarget.cpp, kCutlass). Under
// host emulation the emulated ConvRunner computes every convolution, so
// CUTLASS (device code only) is left out.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_CUTLASSSTEPS_CUH
#define TCC_RUNTIME_CUDA_DEVICE_CUTLASSSTEPS_CUH

#ifndef TCC_CUDA_HOST_EMULATION
#include "runtime/cuda/device/CutlassConv.cuh"
#endif

#endif // TCC_RUNTIME_CUDA_DEVICE_CUTLASSSTEPS_CUH
