//===- CounterRngTest.cpp - The documented random stream, pinned
//-----------===//
//
// These values are the contract with the cuda target and with resumed runs:
// if one changes, every saved (seed, epoch) replays differently.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/CounterRng.h"

#include <gtest/gtest.h>

#include <vector>

using namespace tcc::rt::rng;

TEST(CounterRng, SplitMix64ReferenceValues) {
  // The first outputs of Vigna's SplitMix64 seeded with 0.
  EXPECT_EQ(splitmix64(0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(splitmix64(0x9E3779B97F4A7C15ull), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(splitmix64(2 * 0x9E3779B97F4A7C15ull), 0x06C45D188009454Full);
}

TEST(CounterRng, MulHigh64MatchesWideMultiply) {
  uint64_t x = 1;
  for (int i = 0; i < 10000; ++i) {
    uint64_t a = splitmix64(x++), b = splitmix64(x++);
    if (i % 3 == 0)
      b >>= (i % 64);
    unsigned __int128 p = (unsigned __int128)a * b;
    ASSERT_EQ(mulHigh64(a, b), uint64_t(p >> 64)) << a << " * " << b;
  }
  EXPECT_EQ(mulHigh64(~0ull, ~0ull), ~0ull - 1);
  EXPECT_EQ(uniformBelow(~0ull, 10), 9u);
  EXPECT_EQ(uniformBelow(0, 10), 0u);
}

TEST(CounterRng, PinnedPermutation) {
  std::vector<int> perm(10);
  epochPermutation(42, 0, 10, perm.data());
  EXPECT_EQ(perm, (std::vector<int>{0, 9, 4, 8, 3, 6, 2, 7, 5, 1}));
  epochPermutation(42, 1, 10, perm.data());
  EXPECT_EQ(perm, (std::vector<int>{2, 0, 9, 6, 1, 4, 7, 3, 8, 5}));
}

TEST(CounterRng, PinnedAugmentDraws) {
  AugmentDraw d = drawAugment(7, 3, 12345, 32, 32, 4, true, 2, 8);
  EXPECT_EQ((std::vector<int64_t>{d.cropY, d.cropX, d.shiftY, d.shiftX,
                                  int64_t(d.flip), d.cutoutY, d.cutoutX}),
            (std::vector<int64_t>{4, 1, 0, -2, 0, 22, 12}));
}
