//===- CudaMemory.cpp - The trainer's buffers in GPU memory ---------------===//
//
// tccDeviceMemory() for a cuda trainer: the arenas, the control block and
// the resident data set are cudaMalloc'd on the current device. Copies
// synchronise the whole device first: the model's stream does not order
// itself with the legacy default stream, and the trainer copies only at
// its few synchronisation points (init, evaluation with EMA weights,
// checkpoints). Under TCC_CUDA_HOST_EMULATION the same code runs on host
// memory that the trainer must treat as a device's (isHost() is false).
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/Memory.h"
#include "runtime/trainer/Trainer.h"

#ifdef TCC_CUDA_HOST_EMULATION
#include "runtime/cuda/device/HostEmulation.h"
#else
#include <cuda_runtime.h>
#endif

#include <stdexcept>
#include <string>

namespace {

using tcc::rt::DeviceMemory;

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(status));
}

class CudaMemory final : public DeviceMemory {
public:
  bool isHost() const override { return false; }
  void *allocate(size_t bytes) override {
    void *pointer = nullptr;
    if (cudaMalloc(&pointer, bytes ? bytes : 1) != cudaSuccess) {
      cudaGetLastError(); // clears the error: the caller reports it
      return nullptr;
    }
    check(cudaMemset(pointer, 0, bytes), "zeroing new device memory");
    return pointer;
  }
  void release(void *pointer) override { cudaFree(pointer); }
  void upload(void *device, const void *host, size_t bytes) override {
    check(cudaDeviceSynchronize(), "running the steps");
    check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "copying to the GPU");
    // From pageable memory cudaMemcpy may return before the copy has
    // landed, and the model's stream does not wait for the legacy stream.
    check(cudaDeviceSynchronize(), "copying to the GPU");
  }
  void download(void *host, const void *device, size_t bytes) override {
    check(cudaDeviceSynchronize(), "running the steps");
    check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "copying from the GPU");
  }
};

} // namespace

extern "C" DeviceMemory *tccDeviceMemory(const char **whyNot) {
  static std::string reason;
  int devices = 0;
  cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    reason = std::string("no usable NVIDIA GPU was found (") +
             (status != cudaSuccess ? cudaGetErrorString(status) : "no CUDA devices") +
             "); run it on a machine with an NVIDIA GPU and its driver, or compile "
             "the model with --target=cpu";
    *whyNot = reason.c_str();
    return nullptr;
  }
  static CudaMemory memory;
  return &memory;
}

extern "C" void tccLinkCudaMemory() {}
