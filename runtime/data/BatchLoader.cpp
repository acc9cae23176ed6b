//===- BatchLoader.cpp - Shuffled, augmented, normalised batches
//-----------===//
//
// See Dataset.h for the augmentation order and CounterRng.h for the random
// stream. batch() keeps no state between calls except a per-thread cache of
// the current epoch's permutation, which is a pure function of
// (seed, epoch, n) and so can never be stale.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/CounterRng.h"
#include "runtime/data/Dataset.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tcc::rt {

namespace {

/// Augmentation sizes beyond this are rejected by check() (no overflow).
constexpr int64_t kMaxAugment = int64_t(1) << 24;

/// c * h * w, or -1 when a dimension is not positive or the product
/// overflows.
int64_t planeSize(const Dataset &d) {
  if (d.c <= 0 || d.h <= 0 || d.w <= 0)
    return -1;
  const int64_t max = std::numeric_limits<int64_t>::max();
  if (d.c > max / d.h || d.c * d.h > max / d.w)
    return -1;
  return d.c * d.h * d.w;
}

/// The epoch's order, cached per thread: the permutation depends only on
/// (seed, epoch, n), so a cached one is right for any loader.
const int64_t *cachedPermutation(uint64_t seed, int64_t epoch, int64_t n) {
  struct Cache {
    bool filled = false;
    uint64_t seed = 0;
    int64_t epoch = 0, n = 0;
    std::vector<int64_t> perm;
  };
  thread_local Cache cache;
  if (!cache.filled || cache.seed != seed || cache.epoch != epoch ||
      cache.n != n) {
    cache.filled = false;
    cache.perm.resize(static_cast<size_t>(n));
    rng::epochPermutation(seed, static_cast<uint64_t>(epoch), n,
                          cache.perm.data());
    cache.seed = seed;
    cache.epoch = epoch;
    cache.n = n;
    cache.filled = true;
  }
  return cache.perm.data();
}

/// Writes one sample [c, h, w] to `dst`: the augmentation of Dataset.h (when
/// `draw` is given) and the pixel map `map(channel, value)`; `zero[ch]` is
/// the mapped value of a zero pixel.
template <typename Src, typename Map>
void fillSample(const Src *src, float *dst, int64_t c, int64_t h, int64_t w,
                const rng::AugmentDraw *draw, int64_t cropPadding,
                int64_t cutout, const Map &map, const float *zero) {
  const int64_t plane = h * w;
  if (!draw) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const Src *s = src + ch * plane;
      float *o = dst + ch * plane;
      for (int64_t i = 0; i < plane; ++i)
        o[i] = map(ch, s[i]);
    }
    return;
  }
  // Crop then translate: out(y, x) = src(y - dy + a, x - dx + b) where
  // (a, b) = crop offset - padding, defined when both the translated
  // position (y - dy, x - dx) and the source lie inside the image.
  const int64_t a = draw->cropY - cropPadding, b = draw->cropX - cropPadding;
  const int64_t dy = draw->shiftY, dx = draw->shiftX;
  const int64_t yLo = std::max<int64_t>({0, dy, dy - a});
  const int64_t yHi = std::min<int64_t>({h, dy + h, dy - a + h});
  const int64_t xLo = std::max<int64_t>({0, dx, dx - b});
  const int64_t xHi = std::min<int64_t>({w, dx + w, dx - b + w});
  // Cutout square, clipped.
  int64_t cy0 = 0, cy1 = 0, cx0 = 0, cx1 = 0;
  if (cutout > 0) {
    cy0 = std::max<int64_t>(0, draw->cutoutY - cutout / 2);
    cy1 = std::min<int64_t>(h, draw->cutoutY - cutout / 2 + cutout);
    cx0 = std::max<int64_t>(0, draw->cutoutX - cutout / 2);
    cx1 = std::min<int64_t>(w, draw->cutoutX - cutout / 2 + cutout);
  }
  for (int64_t ch = 0; ch < c; ++ch) {
    const Src *s = src + ch * plane;
    const float z = zero[ch];
    for (int64_t y = 0; y < h; ++y) {
      float *row = dst + ch * plane + y * w;
      if (y < yLo || y >= yHi || xLo >= xHi) {
        std::fill(row, row + w, z);
      } else {
        const Src *srow = s + (y - dy + a) * w;
        const int64_t shift = b - dx; // source column = x + shift
        std::fill(row, row + xLo, z);
        for (int64_t x = xLo; x < xHi; ++x)
          row[x] = map(ch, srow[x + shift]);
        std::fill(row + xHi, row + w, z);
      }
      if (draw->flip)
        std::reverse(row, row + w);
      if (y >= cy0 && y < cy1)
        std::fill(row + cx0, row + cx1, z);
    }
  }
}

} // namespace

BatchLoader::BatchLoader(const Dataset &data, int64_t batchSize, bool shuffle,
                         bool augment, bool dropLast, uint64_t seed,
                         AugmentConfig augmentConfig, NormalizeConfig normalize)
    : data(data), batchSize(batchSize), shuffle(shuffle), augment(augment),
      dropLast(dropLast), seed(seed), augmentConfig(augmentConfig),
      normalize(std::move(normalize)) {}

int64_t BatchLoader::batchesPerEpoch() const {
  if (batchSize <= 0 || data.n <= 0)
    return 0;
  return data.n / batchSize + (!dropLast && data.n % batchSize != 0 ? 1 : 0);
}

bool BatchLoader::check(std::string &error) const {
  const Dataset &d = data;
  if (batchSize <= 0) {
    error = "batch size " + std::to_string(batchSize) + " is not positive";
    return false;
  }
  if (d.n <= 0) {
    error = "the dataset is empty";
    return false;
  }
  const int64_t plane = planeSize(d);
  const int64_t max = std::numeric_limits<int64_t>::max();
  if (plane < 0 || d.n > max / plane) {
    error = "the dataset has bad dimensions [" + std::to_string(d.n) + ", " +
            std::to_string(d.c) + ", " + std::to_string(d.h) + ", " +
            std::to_string(d.w) + "]";
    return false;
  }
  const size_t pixels = static_cast<size_t>(d.n * plane);
  const size_t held = d.isFloat ? d.f32.size() : d.u8.size();
  if (held != pixels) {
    error = "the dataset holds " + std::to_string(held) + " " +
            (d.isFloat ? "float" : "uint8") + " pixels but [" +
            std::to_string(d.n) + ", " + std::to_string(d.c) + ", " +
            std::to_string(d.h) + ", " + std::to_string(d.w) + "] needs " +
            std::to_string(pixels);
    return false;
  }
  if (d.labels.size() != static_cast<size_t>(d.n)) {
    error = "the dataset holds " + std::to_string(d.labels.size()) +
            " labels for " + std::to_string(d.n) + " images";
    return false;
  }
  const AugmentConfig &ac = augmentConfig;
  for (auto [name, value] :
       {std::pair<const char *, int64_t>{"crop padding", ac.cropPadding},
        {"translate", ac.translate},
        {"cutout", ac.cutout}}) {
    if (value < 0 || value > kMaxAugment) {
      error = std::string("augmentation ") + name + " " +
              std::to_string(value) + " is out of range [0, " +
              std::to_string(kMaxAugment) + "]";
      return false;
    }
  }
  const NormalizeConfig &nc = normalize;
  for (auto [name, values] :
       {std::pair<const char *, const std::vector<float> *>{"mean", &nc.mean},
        {"std", &nc.std}}) {
    const size_t size = values->size();
    if (size != 0 && size != 1 && size != static_cast<size_t>(d.c)) {
      error = std::string("normalisation ") + name + " has " +
              std::to_string(size) + " values for " + std::to_string(d.c) +
              " channels";
      return false;
    }
    for (float v : *values) {
      bool bad = !std::isfinite(v) || (values == &nc.std && !(v > 0));
      if (bad) {
        error = std::string("normalisation ") + name + " value " +
                std::to_string(v) + " is not " +
                (values == &nc.std ? "finite and positive" : "finite");
        return false;
      }
    }
  }
  return true;
}

std::vector<int64_t> BatchLoader::epochOrder(int64_t epoch) const {
  std::vector<int64_t> order(static_cast<size_t>(std::max<int64_t>(data.n, 0)));
  if (shuffle)
    rng::epochPermutation(seed, static_cast<uint64_t>(epoch), data.n,
                          order.data());
  else
    std::iota(order.begin(), order.end(), int64_t(0));
  return order;
}

void BatchLoader::batch(int64_t epoch, int64_t index, float *images,
                        int64_t *labels, int64_t &valid) const {
  valid = 0;
  if (batchSize <= 0)
    return;
  const int64_t plane = planeSize(data);
  const bool sane =
      plane > 0 && batchSize <= std::numeric_limits<int64_t>::max() / plane;
  // Zeros everywhere first, so every early return leaves a padded batch.
  auto zeroFrom = [&](int64_t first) {
    if (images && sane)
      std::fill(images + first * plane, images + batchSize * plane, 0.0f);
    if (labels)
      std::fill(labels + first, labels + batchSize, int64_t(0));
  };
  std::string error;
  if (!images || !labels || !sane || !check(error) || index < 0 ||
      index >= batchesPerEpoch()) {
    zeroFrom(0);
    return;
  }
  // Only allocation can throw here (the per-thread permutation, the
  // normalisation tables); out of memory leaves an empty batch.
  try {
    const int64_t c = data.c, h = data.h, w = data.w;
    const int64_t start = index * batchSize;
    const int64_t count = std::min(batchSize, data.n - start);

    // Per-channel normalisation, in float32: (x - mean) / std.
    auto channelValue = [](const std::vector<float> &v, int64_t ch,
                           float fallback) {
      if (v.empty())
        return fallback;
      return v.size() == 1 ? v[0] : v[static_cast<size_t>(ch)];
    };
    std::vector<float> mean(static_cast<size_t>(c)),
        stdev(static_cast<size_t>(c));
    std::vector<float> zero(static_cast<size_t>(c));
    for (int64_t ch = 0; ch < c; ++ch) {
      mean[ch] = channelValue(normalize.mean, ch, 0.0f);
      stdev[ch] = channelValue(normalize.std, ch, 1.0f);
      zero[ch] = (0.0f - mean[ch]) / stdev[ch];
    }
    std::vector<float> lut;
    if (!data.isFloat) {
      lut.resize(static_cast<size_t>(c) * 256);
      for (int64_t ch = 0; ch < c; ++ch)
        for (int v = 0; v < 256; ++v)
          lut[ch * 256 + v] =
              (static_cast<float>(v) / 255.0f - mean[ch]) / stdev[ch];
    }

    const int64_t *order =
        shuffle ? cachedPermutation(seed, epoch, data.n) : nullptr;
    const AugmentConfig &ac = augmentConfig;
    for (int64_t k = 0; k < count; ++k) {
      const int64_t position = start + k;
      const int64_t row = order ? order[position] : position;
      labels[k] = data.labels[static_cast<size_t>(row)];
      rng::AugmentDraw draw;
      if (augment)
        draw = rng::drawAugment(
            seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(position),
            h, w, ac.cropPadding, ac.flip, ac.translate, ac.cutout);
      const rng::AugmentDraw *d = augment ? &draw : nullptr;
      float *dst = images + k * plane;
      if (data.isFloat) {
        const float *m = mean.data(), *s = stdev.data();
        fillSample(
            data.f32.data() + row * plane, dst, c, h, w, d, ac.cropPadding,
            ac.cutout,
            [m, s](int64_t ch, float v) { return (v - m[ch]) / s[ch]; },
            zero.data());
      } else {
        const float *table = lut.data();
        fillSample(
            data.u8.data() + row * plane, dst, c, h, w, d, ac.cropPadding,
            ac.cutout,
            [table](int64_t ch, uint8_t v) { return table[ch * 256 + v]; },
            zero.data());
      }
    }
    zeroFrom(count);
    valid = count;
  } catch (const std::exception &) {
    zeroFrom(0);
    valid = 0;
  }
}

} // namespace tcc::rt
