//===- Random.h - Counter-based random numbers (Philox4x32-10) --*- C++ -*-===//
//
// The kernels' names for runtime/common/Philox.h (the generator and its
// scheme are documented there), and fills of whole tensors. `stream`
// separates independent uses under one seed (e.g. one stream per dropout
// site and step); `index` is the element's flat index.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_RANDOM_H
#define TCC_RUNTIME_KERNELS_RANDOM_H

#include "runtime/common/Philox.h"

#include <array>
#include <cstdint>

namespace tcc::rt::kernels {

/// The Philox4x32 block function with 10 rounds (runtime/common/Philox.h).
inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> ctr,
                                             std::array<uint32_t, 2> key) {
  const philox::Words r =
      philox::philox4x32_10(philox::Words{{ctr[0], ctr[1], ctr[2], ctr[3]}}, key[0], key[1]);
  return {r.w[0], r.w[1], r.w[2], r.w[3]};
}

/// The four 32-bit words of block `block` (= index / 4) of (seed, stream).
inline std::array<uint32_t, 4> random_block(uint64_t seed, uint64_t stream,
                                            uint64_t block) {
  const philox::Words r = philox::randomBlock(seed, stream, block);
  return {r.w[0], r.w[1], r.w[2], r.w[3]};
}

/// 32 random bits for element `index`.
inline uint32_t random_u32(uint64_t seed, uint64_t stream, uint64_t index) {
  return philox::randomU32(seed, stream, index);
}

/// The uniform float in [0, 1) made from 32 random bits.
inline float u32_to_uniform(uint32_t r) { return philox::u32ToUniform(r); }

/// Uniform float in [0, 1) for element `index`.
inline float random_uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return u32_to_uniform(random_u32(seed, stream, index));
}

/// y[i] = lo + (hi - lo) * random_uniform(seed, stream, i), i in [0, n).
template <class T>
void uniform_fill(int64_t n, uint64_t seed, uint64_t stream, double lo,
                  double hi, T *y) {
  const int64_t blocks = (n + 3) / 4;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    const std::array<uint32_t, 4> r = random_block(seed, stream, uint64_t(b));
    for (int64_t j = 0; j < 4 && b * 4 + j < n; ++j)
      y[b * 4 + j] = T(lo + (hi - lo) * double(u32_to_uniform(r[j])));
  }
}

} // namespace tcc::rt::kernels

#endif // TCC_RUNTIME_KERNELS_RANDOM_H
