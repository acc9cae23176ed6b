//===- BatchLoader.cpp - Shuffled, augmented, normalised batches -----------===//
//
// The samples are made by runtime/common/Batch.h, element by element, as
// the compiled step's gather makes them; the random stream is CounterRng.h.
//
//===----------------------------------------------------------------------===//

#include "runtime/common/CounterRng.h"
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
  if (d.targets < 1 || d.labels.size() != static_cast<size_t>(d.n * d.targets)) {
    error = "the dataset holds " + std::to_string(d.labels.size()) + " labels for " +
            std::to_string(d.n) + " images of " + std::to_string(d.targets) + " targets each";
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
      std::fill(labels + first * data.targets, labels + batchSize * data.targets, int64_t(0));
  };
  std::string error;
  if (!images || !labels || !sane || !check(error) || index < 0 ||
      index >= batchesPerEpoch()) {
    zeroFrom(0);
    return;
  }
  // Only allocation can throw here (the normalisation tables); out of
  // memory leaves an empty batch.
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
    for (int64_t ch = 0; ch < c; ++ch) {
      mean[ch] = channelValue(normalize.mean, ch, 0.0f);
      stdev[ch] = channelValue(normalize.std, ch, 1.0f);
    }
    const void *pixels = data.isFloat ? static_cast<const void *>(data.f32.data())
                                      : static_cast<const void *>(data.u8.data());
    const AugmentConfig &ac = augmentConfig;
    for (int64_t k = 0; k < count; ++k) {
      const int64_t position = start + k;
      const int64_t row =
          shuffle ? rng::shuffledRow(seed, static_cast<uint64_t>(epoch),
                                     position, data.n)
                  : position;
      std::copy_n(data.labels.begin() + row * data.targets, data.targets,
                  labels + k * data.targets);
      rng::AugmentDraw draw;
      if (augment)
        draw = rng::drawAugment(
            seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(position),
            h, w, ac.cropPadding, ac.flip, ac.translate, ac.cutout, ac.alternateFlip,
            static_cast<uint64_t>(row), ac.balanced, data.n);
      float *dst = images + k * plane;
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t y = 0; y < h; ++y)
          for (int64_t x = 0; x < w; ++x)
            *dst++ = batch::samplePixel(pixels, data.isFloat, row, c, h, w,
                                        augment ? &draw : nullptr, ac, ch, y,
                                        x, mean[ch], stdev[ch]);
    }
    zeroFrom(count);
    valid = count;
  } catch (const std::exception &) {
    zeroFrom(0);
    valid = 0;
  }
}

} // namespace tcc::rt
