//===- Batch.h - One sample of a batch, element by element -------*- C++ -*-===//
//
// How the step turns rows of the resident data set into the normalised,
// augmented batch it trains on, as per-element functions that the cpu
// gather (runtime/cpu/Batch.h), a GPU kernel and the host BatchLoader
// (runtime/data/) share. The random decisions come from CounterRng.h.
//
// Augmentation, in this order, on the raw image (docs/model-format.md):
//   1. random crop: pad by `cropPadding` zeros on every side, take the h x w
//      window at offset (oy, ox), each uniform in [0, 2 * cropPadding];
//   2. random translate: shift the content by (dy, dx), each uniform in
//      [-translate, translate] (out[y][x] = in[y - dy][x - dx]), zero fill;
//   With `reflect`, crop and translate fill with the image mirrored at its
//   border instead (PyTorch's reflect padding: index -1 reads 1, h reads
//   h - 2), each coordinate reflected where it leaves the image.
//   3. horizontal flip with probability 1/2 (or alternating, CounterRng.h);
//   With `balanced`, each of these choices is dealt out evenly over the
//   epoch's samples instead of drawn for each sample (CounterRng.h);
//   4. cutout: zero the `cutout` x `cutout` square whose centre (cy, cx) is
//      uniform over the image (rows cy - cutout/2 .. cy - cutout/2 + cutout
//      - 1, likewise columns), clipped at the borders.
// "Zero" is a raw pixel value of 0, so after normalisation it reads
// -mean[c] / std[c].
//
// Normalisation, in float32: (x - mean[c]) / std[c] with x = v / 255.0f for
// uint8 pixels and x = v for float pixels.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMMON_BATCH_H
#define TCC_RUNTIME_COMMON_BATCH_H

#include "runtime/common/CounterRng.h"
#include "runtime/common/HostDevice.h"

#include <cstdint>

namespace tcc::rt {

/// model.json's data.augment.
struct AugmentConfig {
  int64_t cropPadding = 0; ///< random crop after zero padding by this much
  bool flip = false;       ///< random horizontal flip with probability 1/2
  int64_t translate = 0;   ///< random shift by up to this many pixels
  int64_t cutout = 0;      ///< zero a random square of this side
  bool alternateFlip = false; ///< flip: each image the other way each epoch
  bool reflect = false;       ///< crop and translate fill by reflection
  bool balanced = false;      ///< each option to an equal share of the epoch
};

namespace batch {

/// The epoch position that slot `slot` of batch `index` trains on, for an
/// epoch of `n` samples in batches of `size`. The step is compiled for a
/// fixed batch: a short last batch is completed with the epoch's first
/// positions (those of batch 0), cyclically.
TCC_HOST_DEVICE inline int64_t trainPosition(int64_t index, int64_t slot,
                                             int64_t size, int64_t n) {
  const int64_t position = index * size + slot;
  if (position < n)
    return position;
  const int64_t valid = n - index * size;
  const int64_t first = size < n ? size : n;
  return (slot - valid) % first;
}

/// The slot of the one-process run's step batch that slot `slot` of rank
/// `rank`'s step batch of `size` samples is. Each of the step's
/// `microBatches` micro-batches is split over the ranks in order: rank r's
/// micro-batch k is slice r of the one-process run's micro-batch k, so
/// ghost batches, dropout masks and the loss scaling are the one-process
/// run's per micro-batch.
TCC_HOST_DEVICE inline int64_t globalSlot(int64_t slot, int64_t size, int64_t rank,
                                          int64_t ranks, int64_t microBatches) {
  const int64_t micro = size / microBatches;
  return (slot / micro) * micro * ranks + rank * micro + slot % micro;
}

/// Coordinate i of a side of n mirrored at the borders without repeating
/// the edge (-1 -> 1, n -> n - 2); exact for -n < i < 2n - 1 (the frontend
/// keeps crop padding and translation below the side), clamped beyond.
TCC_HOST_DEVICE inline int64_t reflectIndex(int64_t i, int64_t n) {
  if (i < 0)
    i = -i;
  if (i >= n)
    i = 2 * (n - 1) - i;
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/// The source pixel (sy, sx) of output pixel (y, x) of an image of h x w
/// augmented by `draw`; false where the output is a zero pixel.
TCC_HOST_DEVICE inline bool augmentedSource(const rng::AugmentDraw &draw,
                                            const AugmentConfig &config,
                                            int64_t h, int64_t w, int64_t y,
                                            int64_t x, int64_t &sy,
                                            int64_t &sx) {
  if (config.cutout > 0) { // applied last: in output coordinates
    const int64_t cy0 = draw.cutoutY - config.cutout / 2;
    const int64_t cx0 = draw.cutoutX - config.cutout / 2;
    if (y >= cy0 && y < cy0 + config.cutout && x >= cx0 &&
        x < cx0 + config.cutout)
      return false;
  }
  const int64_t flipped = draw.flip ? w - 1 - x : x;
  // Translate, then crop: the translated position must lie in the image,
  // and the crop window's pixel in the unpadded source.
  int64_t ty = y - draw.shiftY, tx = flipped - draw.shiftX;
  if (config.reflect) {
    ty = reflectIndex(ty, h);
    tx = reflectIndex(tx, w);
  } else if (ty < 0 || ty >= h || tx < 0 || tx >= w) {
    return false;
  }
  sy = ty + draw.cropY - config.cropPadding;
  sx = tx + draw.cropX - config.cropPadding;
  if (config.reflect) {
    sy = reflectIndex(sy, h);
    sx = reflectIndex(sx, w);
  }
  return sy >= 0 && sy < h && sx >= 0 && sx < w;
}

/// The normalised value of raw pixel `index` of `pixels` (uint8 or float).
TCC_HOST_DEVICE inline float normalizedPixel(const void *pixels, bool isFloat,
                                             int64_t index, float mean,
                                             float std) {
  const float x =
      isFloat ? static_cast<const float *>(pixels)[index]
              : static_cast<float>(static_cast<const uint8_t *>(pixels)[index]) /
                    255.0f;
  return (x - mean) / std;
}

/// Element (ch, y, x) of the sample made from row `row` of `pixels`
/// ([n, c, h, w]); `draw` null: not augmented.
TCC_HOST_DEVICE inline float samplePixel(const void *pixels, bool isFloat,
                                         int64_t row, int64_t c, int64_t h,
                                         int64_t w, const rng::AugmentDraw *draw,
                                         const AugmentConfig &config,
                                         int64_t ch, int64_t y, int64_t x,
                                         float mean, float std) {
  int64_t sy = y, sx = x;
  if (draw && !augmentedSource(*draw, config, h, w, y, x, sy, sx))
    return (0.0f - mean) / std;
  return normalizedPixel(pixels, isFloat, ((row * c + ch) * h + sy) * w + sx,
                         mean, std);
}

} // namespace batch
} // namespace tcc::rt

#endif // TCC_RUNTIME_COMMON_BATCH_H
