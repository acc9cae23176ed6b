//===- CounterRng.h - Counter-based random stream of the data path -*- C++ -*-//
//
// Every random decision of the data path (the epoch's shuffle and each
// sample's augmentation) is a pure function of (seed, epoch, counter). There
// is no generator state: a resumed run at (epoch, batch) and a GPU kernel that
// augments sample `position` compute exactly the bits the CPU loader computes,
// on every platform. Only 64-bit integer arithmetic is used; no standard
// library distribution is involved (those are implementation-defined).
//
// The scheme (all arithmetic modulo 2^64):
//
//   splitmix64(x):  z = x + 0x9E3779B97F4A7C15
//                   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
//                   z = (z ^ (z >> 27)) * 0x94D049BB133111EB
//                   return z ^ (z >> 31)
//   streamKey(seed, stream, epoch)
//                 = splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ epoch)
//   counterRandom(key, index, draw)
//                 = splitmix64(splitmix64(key ^ index) ^ draw)
//   uniformBelow(r, m) = floor(r * m / 2^64)   (in [0, m), m >= 1)
//
// Shuffle (stream 1): position p of an epoch of n samples visits row
//   shuffledRow(seed, epoch, p, n)
// a bijection of [0, n) computed for each position on its own, so the step
// that gathers a batch (on the CPU or in a GPU kernel) needs no permutation
// table. It is a balanced Feistel network on 2k bits (the smallest k >= 1
// with 4^k >= n; halves L, R of k bits, mask M = 2^k - 1), of kFeistelRounds
// rounds, with key = streamKey(seed, 1, epoch):
//   round r: (L, R) = (R, L ^ (counterRandom(key, R, r) & M))
// applied to p, and re-applied ("cycle walking") while the value is >= n;
// since 4^k < 4n, fewer than 4 applications are expected.
//
// Augmentation (stream 2): the sample at position p of the epoch (p = batch
// index * batch size + slot, counted in the shuffled order) uses
//   r_d = counterRandom(streamKey(seed, 2, epoch), p, d)
// with a fixed draw number d per decision (see AugmentDrawIndex), so turning
// one augmentation on or off never changes the others' decisions. An
// alternating flip (airbench) belongs to the image, not the position: row
// r is flipped in epoch e when
//   (uniformBelow(counterRandom(streamKey(seed, 2, 0), r, kDrawFlip), 2) == 1) != (e odd).
//
// Balanced draws (myrtle.ai's cifar10-fast, `transformed`): instead of one
// draw per sample, each decision d deals the epoch's n positions out evenly
// over its k options. With base = streamKey(seed, 3, epoch), position p gets
//   q = permute(splitmix64(base ^ 2d), p, n)      (a random order of [0, n))
//   c = the chunk of q when [0, n) is cut into k chunks, the first n mod k
//       of them n / k + 1 long, the others n / k
//   option = permute(splitmix64(base ^ (2d + 1)), c, k)
// where permute is the shuffle's Feistel network under that key. Every
// option then goes to n / k or n / k + 1 samples of the epoch. Options:
// crop and translate offsets (y, x) = (o / span, o % span), flip o == 1,
// cutout centre (o / w, o % w).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMMON_COUNTERRNG_H
#define TCC_RUNTIME_COMMON_COUNTERRNG_H

#include "runtime/common/HostDevice.h"

#include <cstdint>


namespace tcc::rt::rng {

constexpr uint64_t kShuffleStream = 1;
constexpr uint64_t kAugmentStream = 2;
constexpr uint64_t kBalancedStream = 3;
/// `./train sample`'s draws: generated character i uses
/// counterRandom(streamKey(seed, 4, 0), i, 0) (runtime/trainer/Sample.h).
constexpr uint64_t kSampleStream = 4;

/// The draw number `d` of each augmentation decision.
enum AugmentDrawIndex : uint64_t {
  kDrawCropY = 0,   ///< crop row offset in [0, 2 * cropPadding]
  kDrawCropX = 1,   ///< crop column offset in [0, 2 * cropPadding]
  kDrawShiftY = 2,  ///< translate dy in [-translate, translate]
  kDrawShiftX = 3,  ///< translate dx in [-translate, translate]
  kDrawFlip = 4,    ///< flip when uniformBelow(r, 2) == 1
  kDrawCutoutY = 5, ///< cutout centre row in [0, h)
  kDrawCutoutX = 6, ///< cutout centre column in [0, w)
};

TCC_HOST_DEVICE inline uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

TCC_HOST_DEVICE inline uint64_t streamKey(uint64_t seed, uint64_t stream,
                                     uint64_t epoch) {
  return splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ epoch);
}

TCC_HOST_DEVICE inline uint64_t counterRandom(uint64_t key, uint64_t index,
                                         uint64_t draw) {
  return splitmix64(splitmix64(key ^ index) ^ draw);
}

/// High 64 bits of the 128-bit product a * b (portable, no __int128).
TCC_HOST_DEVICE inline uint64_t mulHigh64(uint64_t a, uint64_t b) {
  uint64_t aLo = a & 0xFFFFFFFFull, aHi = a >> 32;
  uint64_t bLo = b & 0xFFFFFFFFull, bHi = b >> 32;
  uint64_t ll = aLo * bLo, lh = aLo * bHi, hl = aHi * bLo, hh = aHi * bHi;
  uint64_t mid = (ll >> 32) + (lh & 0xFFFFFFFFull) + (hl & 0xFFFFFFFFull);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/// floor(r * m / 2^64): a value in [0, m) for m >= 1 (0 for m == 0).
TCC_HOST_DEVICE inline uint64_t uniformBelow(uint64_t r, uint64_t m) {
  return mulHigh64(r, m);
}

/// Rounds of the shuffle's Feistel network (4 make a pseudo-random
/// permutation from a pseudo-random round function; 6 leave a margin).
constexpr int kFeistelRounds = 6;

/// The image of `x` (in [0, n)) under the permutation of [0, n) that `key`
/// selects: the Feistel network of the header, with cycle walking.
TCC_HOST_DEVICE inline int64_t permute(uint64_t key, int64_t x0, int64_t n) {
  int bits = 1; // k: half the width of the network
  while (bits < 31 && (uint64_t(1) << (2 * bits)) < static_cast<uint64_t>(n))
    ++bits;
  const uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t x = static_cast<uint64_t>(x0);
  do {
    uint64_t left = x >> bits, right = x & mask;
    for (int r = 0; r < kFeistelRounds; ++r) {
      const uint64_t next =
          left ^ (counterRandom(key, right, static_cast<uint64_t>(r)) & mask);
      left = right;
      right = next;
    }
    x = (left << bits) | right;
  } while (x >= static_cast<uint64_t>(n));
  return static_cast<int64_t>(x);
}

/// The row that position `position` (in [0, n)) of `epoch` visits.
TCC_HOST_DEVICE inline int64_t shuffledRow(uint64_t seed, uint64_t epoch,
                                           int64_t position, int64_t n) {
  return permute(streamKey(seed, kShuffleStream, epoch), position, n);
}

/// Decision `draw`'s option, of k, for the sample at `position` of an epoch
/// of n positions under balanced draws (the header's scheme).
TCC_HOST_DEVICE inline int64_t balancedOption(uint64_t seed, uint64_t epoch,
                                              uint64_t draw, int64_t position,
                                              int64_t n, int64_t k) {
  const uint64_t base = streamKey(seed, kBalancedStream, epoch);
  const int64_t q = permute(splitmix64(base ^ (2 * draw)), position, n);
  const int64_t size = n / k, big = n % k;
  const int64_t chunk = q < big * (size + 1) ? q / (size + 1)
                                              : big + (q - big * (size + 1)) / size;
  return permute(splitmix64(base ^ (2 * draw + 1)), chunk, k);
}

/// One sample's augmentation decisions.
struct AugmentDraw {
  int64_t cropY = 0, cropX = 0;     ///< offsets into the padded image, [0, 2p]
  int64_t shiftY = 0, shiftX = 0;   ///< translation, [-t, t]
  bool flip = false;                ///< mirror left-right
  int64_t cutoutY = 0, cutoutX = 0; ///< cutout centre, [0, h) x [0, w)
};

/// The decisions for the sample at `position` of `epoch`, which is row
/// `row` of the data set. Disabled augmentations (0 / false) get neutral
/// values. `balanced`: the balanced draws of an epoch of `n` positions (the
/// header's scheme) instead of independent ones; an alternating flip keeps
/// its own rule.
TCC_HOST_DEVICE inline AugmentDraw drawAugment(uint64_t seed, uint64_t epoch,
                                          uint64_t position, int64_t h,
                                          int64_t w, int64_t cropPadding,
                                          bool flip, int64_t translate,
                                          int64_t cutout, bool alternateFlip = false,
                                          uint64_t row = 0, bool balanced = false,
                                          int64_t n = 0) {
  const uint64_t key = streamKey(seed, kAugmentStream, epoch);
  // one option of k for decision d (for a pair, d is its first draw)
  auto option = [&](uint64_t d, int64_t k) -> int64_t {
    if (balanced && n > 0)
      return balancedOption(seed, epoch, d, static_cast<int64_t>(position), n, k);
    return static_cast<int64_t>(
        uniformBelow(counterRandom(key, position, d), static_cast<uint64_t>(k)));
  };
  // a pair (y, x) in [0, spanY) x [0, spanX): two independent draws, or one
  // balanced draw over the spanY * spanX pairs
  auto pair = [&](uint64_t dy, uint64_t dx, int64_t spanY, int64_t spanX, int64_t &y,
                  int64_t &x) {
    if (balanced && n > 0) {
      const int64_t o = option(dy, spanY * spanX);
      y = o / spanX;
      x = o % spanX;
    } else {
      y = option(dy, spanY);
      x = option(dx, spanX);
    }
  };
  AugmentDraw d;
  if (cropPadding > 0)
    pair(kDrawCropY, kDrawCropX, 2 * cropPadding + 1, 2 * cropPadding + 1, d.cropY, d.cropX);
  if (translate > 0) {
    pair(kDrawShiftY, kDrawShiftX, 2 * translate + 1, 2 * translate + 1, d.shiftY, d.shiftX);
    d.shiftY -= translate;
    d.shiftX -= translate;
  }
  if (flip && alternateFlip)
    d.flip = (uniformBelow(counterRandom(streamKey(seed, kAugmentStream, 0), row, kDrawFlip),
                           2) == 1) != (epoch % 2 == 1);
  else if (flip)
    d.flip = option(kDrawFlip, 2) == 1;
  if (cutout > 0 && h > 0 && w > 0)
    pair(kDrawCutoutY, kDrawCutoutX, h, w, d.cutoutY, d.cutoutX);
  return d;
}

/// Writes the visiting order of `epoch` to perm[0..n): perm[p] =
/// shuffledRow(seed, epoch, p, n).
template <typename Index>
inline void epochPermutation(uint64_t seed, uint64_t epoch, int64_t n,
                             Index *perm) {
  for (int64_t p = 0; p < n; ++p)
    perm[p] = static_cast<Index>(shuffledRow(seed, epoch, p, n));
}

} // namespace tcc::rt::rng

#endif // TCC_RUNTIME_COMMON_COUNTERRNG_H
