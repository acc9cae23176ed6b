//===- CudnnHandle.h - An owned cuDNN handle --------------------*- C++ -*-===//
//
// The trainer (ConvRunner.cpp) and tcc-tune (tune/TuneMain.cpp) each start
// cuDNN once. The owner destroys the handle on every way out, exceptions
// included; declared before what is built with it (plans, graphs), it is
// also destroyed after them.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_CUDNNHANDLE_H
#define TCC_RUNTIME_CUDA_CUDNNHANDLE_H

#include <cudnn.h>

namespace tcc::cuda {

class CudnnHandle {
public:
  CudnnHandle() = default;
  CudnnHandle(const CudnnHandle &) = delete;
  CudnnHandle &operator=(const CudnnHandle &) = delete;
  ~CudnnHandle() {
    if (handle)
      cudnnDestroy(handle);
  }

  /// cudnnCreate; on failure there is nothing to destroy.
  cudnnStatus_t create() {
    cudnnStatus_t status = cudnnCreate(&handle);
    if (status != CUDNN_STATUS_SUCCESS)
      handle = nullptr;
    return status;
  }
  cudnnHandle_t get() const { return handle; }

private:
  cudnnHandle_t handle = nullptr;
};

} // namespace tcc::cuda

#endif // TCC_RUNTIME_CUDA_CUDNNHANDLE_H
