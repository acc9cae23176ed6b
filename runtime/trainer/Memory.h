//===- Memory.h - Where the trainer's buffers live ----------------*- C++ -*-===//
#ifndef TCC_RUNTIME_TRAINER_MEMORY_H
#define TCC_RUNTIME_TRAINER_MEMORY_H

#include <cstddef>

namespace tcc::rt {

/// Where the arenas, the control block and the resident data set live. The
/// cpu target uses hostMemory(); a cuda build supplies device memory through
/// tccDeviceMemory().
class DeviceMemory {
public:
  virtual ~DeviceMemory() = default;
  /// True if device pointers are host pointers (no copies needed).
  virtual bool isHost() const = 0;
  /// `bytes` bytes aligned to at least 64, zero-filled; nullptr on failure.
  virtual void *allocate(size_t bytes) = 0;
  virtual void release(void *pointer) = 0;
  virtual void upload(void *device, const void *host, size_t bytes) = 0;
  virtual void download(void *host, const void *device, size_t bytes) = 0;
};

/// Host memory: aligned_alloc(64, ...), memcpy.
DeviceMemory &hostMemory();

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_MEMORY_H
