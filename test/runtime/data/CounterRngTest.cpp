//===- CounterRngTest.cpp - The documented random stream, pinned
//-----------===//
//
// These values are the contract with the cuda target and with resumed runs:
// if one changes, every saved (seed, epoch) replays differently.
//
//===----------------------------------------------------------------------===//

#include "runtime/common/CounterRng.h"

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
  // Computed by a Python transcription of the Feistel shuffle in the header
  // comment of CounterRng.h, not by this code.
  std::vector<int> perm(10);
  epochPermutation(42, 0, 10, perm.data());
  EXPECT_EQ(perm, (std::vector<int>{3, 8, 4, 6, 0, 7, 1, 5, 2, 9}));
  epochPermutation(42, 1, 10, perm.data());
  EXPECT_EQ(perm, (std::vector<int>{7, 5, 1, 4, 9, 3, 2, 8, 0, 6}));
}

TEST(CounterRng, ShuffleIsABijectionForEverySize) {
  // Sizes around the powers of 4 where the network widens, and odd ones.
  for (int64_t n : {1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 255, 256, 257,
                    1000, 4096, 4097, 60000}) {
    std::vector<char> seen(static_cast<size_t>(n), 0);
    for (int64_t p = 0; p < n; ++p) {
      int64_t row = shuffledRow(9, 2, p, n);
      ASSERT_TRUE(row >= 0 && row < n) << "n " << n << " position " << p;
      ASSERT_FALSE(seen[row]) << "n " << n << " row " << row << " twice";
      seen[row] = 1;
    }
  }
}

TEST(CounterRng, PinnedAugmentDraws) {
  AugmentDraw d = drawAugment(7, 3, 12345, 32, 32, 4, true, 2, 8);
  EXPECT_EQ((std::vector<int64_t>{d.cropY, d.cropX, d.shiftY, d.shiftX,
                                  int64_t(d.flip), d.cutoutY, d.cutoutX}),
            (std::vector<int64_t>{4, 1, 0, -2, 0, 22, 12}));
}
