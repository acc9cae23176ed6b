//===- VisibleGpu.cpp - Whether the NVIDIA driver shows a GPU -------------===//
//
// The driver API is loaded with dlopen: a tcc built on a machine with the
// CUDA toolkit but no driver (CI, the development machines) still starts.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/VisibleGpu.h"

#include <dlfcn.h>

/// The driver's answer: the first GPU's name, or why there is none.
bool mlir::tcc::visibleGpu(std::string &gpu, std::string &whyNot) {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    whyNot = "no NVIDIA driver here (libcuda.so.1 not found)";
    return false;
  }
  using Init = int (*)(unsigned);
  using Count = int (*)(int *);
  using Get = int (*)(int *, int);
  using Name = int (*)(char *, int, int);
  auto init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
  auto count = reinterpret_cast<Count>(dlsym(driver, "cuDeviceGetCount"));
  auto get = reinterpret_cast<Get>(dlsym(driver, "cuDeviceGet"));
  auto name = reinterpret_cast<Name>(dlsym(driver, "cuDeviceGetName"));
  int devices = 0, status = 0;
  if (!init || !count || !get || !name) {
    whyNot = "the NVIDIA driver's libcuda.so.1 lacks the device calls";
    return false;
  }
  if ((status = init(0)) != 0) {
    // 100: CUDA_ERROR_NO_DEVICE; others: a driver that cannot start.
    whyNot = status == 100 ? "the NVIDIA driver sees no GPU"
                           : "the NVIDIA driver did not start (cuInit error " +
                                 std::to_string(status) + ")";
    return false;
  }
  if (count(&devices) != 0 || devices == 0) {
    whyNot = "the NVIDIA driver sees no GPU";
    return false;
  }
  int device = 0;
  char text[256] = "an NVIDIA GPU";
  if (get(&device, 0) == 0)
    name(text, sizeof text, device);
  gpu = text;
  // The library stays loaded: the driver keeps state for the process.
  return true;
}
