//===- Philox.h - Counter-based random numbers (Philox4x32-10) ---*- C++ -*-===//
//
// Every random number of the step (dropout masks) and of the initial state
// is a pure function of (key, counter): no generator state, so any element
// can be computed independently on the CPU or a GPU, in any order, and
// recomputed later (dropout's backward).
//
// Generator: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy
// as 1, 2, 3", SC'11), the generator of Random123, cuRAND and PyTorch's CUDA
// RNG; philox4x32_10() reproduces Random123's known-answer vectors.
//   key     = (lo32(seed), hi32(seed))
//   counter = (lo32(index/4), hi32(index/4), lo32(stream), hi32(stream))
//   randomU32(seed, stream, index) = philox4x32_10(counter, key)[index % 4]
//   u32ToUniform(r) = (r >> 8) * 2^-24, a float in [0, 1) with 24 random
//       bits (exactly representable).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMMON_PHILOX_H
#define TCC_RUNTIME_COMMON_PHILOX_H

#include "runtime/common/HostDevice.h"

#include <cstdint>

namespace tcc::rt::philox {

/// Four 32-bit words: a counter or a block of random bits.
struct Words {
  uint32_t w[4];
};

/// The Philox4x32 block function with 10 rounds, key (key0, key1).
TCC_HOST_DEVICE inline Words philox4x32_10(Words ctr, uint32_t key0, uint32_t key1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kW0;
      key1 += kW1;
    }
    const uint64_t p0 = uint64_t(kM0) * ctr.w[0];
    const uint64_t p1 = uint64_t(kM1) * ctr.w[2];
    ctr = Words{{uint32_t(p1 >> 32) ^ ctr.w[1] ^ key0, uint32_t(p1),
                 uint32_t(p0 >> 32) ^ ctr.w[3] ^ key1, uint32_t(p0)}};
  }
  return ctr;
}

/// The four words of block `block` (= index / 4) of (seed, stream).
TCC_HOST_DEVICE inline Words randomBlock(uint64_t seed, uint64_t stream,
                                         uint64_t block) {
  return philox4x32_10(Words{{uint32_t(block), uint32_t(block >> 32), uint32_t(stream),
                              uint32_t(stream >> 32)}},
                       uint32_t(seed), uint32_t(seed >> 32));
}

/// 32 random bits for element `index`.
TCC_HOST_DEVICE inline uint32_t randomU32(uint64_t seed, uint64_t stream,
                                          uint64_t index) {
  return randomBlock(seed, stream, index / 4).w[index % 4];
}

/// The uniform float in [0, 1) made from 32 random bits.
TCC_HOST_DEVICE inline float u32ToUniform(uint32_t r) {
  return float(r >> 8) * (1.0f / 16777216.0f);
}

} // namespace tcc::rt::philox

#endif // TCC_RUNTIME_COMMON_PHILOX_H
