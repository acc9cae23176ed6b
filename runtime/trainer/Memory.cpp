//===- Memory.cpp - Host memory for the cpu target -------------------------===//

#include "runtime/trainer/Memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tcc::rt {

namespace {

class HostMemory final : public DeviceMemory {
public:
  bool isHost() const override { return true; }
  void *allocate(size_t bytes) override {
    size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, rounded);
    if (p)
      std::memset(p, 0, rounded);
    return p;
  }
  void release(void *pointer) override { std::free(pointer); }
  void upload(void *device, const void *host, size_t bytes) override {
    if (device != host && bytes)
      std::memcpy(device, host, bytes);
  }
  void download(void *host, const void *device, size_t bytes) override {
    if (device != host && bytes)
      std::memcpy(host, device, bytes);
  }
};

} // namespace

DeviceMemory &hostMemory() {
  static HostMemory memory;
  return memory;
}

} // namespace tcc::rt
