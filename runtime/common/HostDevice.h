//===- HostDevice.h - Code written once for the host and the device -*- C++ -*-//
//
// Headers in runtime/common/ hold the math that the cpu trainer, the cuda
// trainer and the tests must compute identically: counter-based random
// numbers, augmentation, fp16/bf16 conversion, schedule factors. Each
// function is marked TCC_HOST_DEVICE, which is `__host__ __device__` under
// nvcc and nothing for a plain C++ compiler. Rules for these headers, so
// that nvcc accepts them (a test compiles every one of them with nvcc):
//  - no standard library containers, strings, exceptions or iostreams;
//  - only <cstdint>, <cmath> functions nvcc provides on the device (sqrt,
//    cos, pow, floor...), and this project's other common headers;
//  - no static or global mutable data.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMMON_HOSTDEVICE_H
#define TCC_RUNTIME_COMMON_HOSTDEVICE_H

#if defined(__CUDACC__)
#define TCC_HOST_DEVICE __host__ __device__
#else
#define TCC_HOST_DEVICE
#endif

#endif // TCC_RUNTIME_COMMON_HOSTDEVICE_H
