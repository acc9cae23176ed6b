//===- InitRandom.cpp - Random streams of the initial values --------------===//
//
// Philox4x32-10 itself is runtime/common/Philox.h; this file turns its blocks
// into one tensor's uniform and normal numbers (the scheme is in Init.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/Init.h"

#include "runtime/common/Philox.h"

#include <cmath>

namespace tcc::rt {

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> ctr,
                                      std::array<uint32_t, 2> key) {
  const philox::Words r = philox::philox4x32_10(
      philox::Words{{ctr[0], ctr[1], ctr[2], ctr[3]}}, key[0], key[1]);
  return {r.w[0], r.w[1], r.w[2], r.w[3]};
}

uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char ch : text) {
    h ^= static_cast<uint8_t>(ch);
    h *= 0x100000001b3ull;
  }
  return h;
}

TensorRandom::TensorRandom(uint64_t seed, std::string_view tensorName)
    : key{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)},
      nameHash(fnv1a64(tensorName)) {}

namespace {
constexpr double kTwoPow53Inv = 1.0 / 9007199254740992.0;

philox::Words block(const std::array<uint32_t, 2> &key, uint64_t nameHash,
                    uint64_t i) {
  return philox::philox4x32_10(
      philox::Words{{static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32),
                     static_cast<uint32_t>(nameHash),
                     static_cast<uint32_t>(nameHash >> 32)}},
      key[0], key[1]);
}

uint64_t bits53(uint32_t hi, uint32_t lo) {
  return (static_cast<uint64_t>(hi) << 32 | lo) >> 11;
}
} // namespace

double TensorRandom::uniform(uint64_t i) const {
  const philox::Words w = block(key, nameHash, i);
  return static_cast<double>(bits53(w.w[0], w.w[1])) * kTwoPow53Inv;
}

double TensorRandom::normal(uint64_t i) const {
  const philox::Words w = block(key, nameHash, i);
  double u1 = static_cast<double>(bits53(w.w[0], w.w[1]) + 1) * kTwoPow53Inv;
  double u2 = static_cast<double>(bits53(w.w[2], w.w[3])) * kTwoPow53Inv;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

} // namespace tcc::rt
