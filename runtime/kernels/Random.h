//===- Random.h - Counter-based random numbers (Philox4x32-10) --*- C++ -*-===//
//
// Every random number is a pure function of (seed, stream, index): no state,
// so any element can be computed independently (in parallel, on the CPU or a
// GPU, in any order) and recomputed later (dropout's backward).
//
// Generator: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC'11), the generator of Random123, cuRAND and PyTorch's CUDA RNG;
// philox4x32_10() reproduces Random123's known-answer vectors.
//   key     = (lo32(seed), hi32(seed))
//   counter = (lo32(index/4), hi32(index/4), lo32(stream), hi32(stream))
//   random_u32(seed, stream, index) = philox4x32_10(counter, key)[index % 4]
//   random_uniform(seed, stream, index) = (random_u32 >> 8) * 2^-24,
//       a float in [0, 1) with 24 random bits (exactly representable).
// `stream` separates independent uses under one seed (e.g. one stream per
// dropout site and step); `index` is the element's flat index.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_RANDOM_H
#define TCC_RUNTIME_KERNELS_RANDOM_H

#include <array>
#include <cstdint>

namespace tcc::rt::kernels {

/// The Philox4x32 block function with 10 rounds.
inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> ctr,
                                             std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kW0;
      key[1] += kW1;
    }
    const uint64_t p0 = uint64_t(kM0) * ctr[0];
    const uint64_t p1 = uint64_t(kM1) * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1),
           uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], uint32_t(p0)};
  }
  return ctr;
}

/// The four 32-bit words of block `block` (= index / 4) of (seed, stream).
inline std::array<uint32_t, 4> random_block(uint64_t seed, uint64_t stream,
                                            uint64_t block) {
  return philox4x32_10({uint32_t(block), uint32_t(block >> 32),
                        uint32_t(stream), uint32_t(stream >> 32)},
                       {uint32_t(seed), uint32_t(seed >> 32)});
}

/// 32 random bits for element `index`.
inline uint32_t random_u32(uint64_t seed, uint64_t stream, uint64_t index) {
  return random_block(seed, stream, index / 4)[index % 4];
}

/// The uniform float in [0, 1) made from 32 random bits.
inline float u32_to_uniform(uint32_t r) {
  return float(r >> 8) * (1.0f / 16777216.0f);
}

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
