//===- BatchLoaderTest.cpp - Shuffle, augmentation, normalisation
//----------===//

#include "runtime/common/CounterRng.h"
#include "runtime/data/Dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <thread>

using namespace tcc::rt;

namespace {

/// n images [c, h, w] with pixel (i, ch, y, x) = pixel(i, ch, y, x) and
/// label i (so the labels identify the rows).
Dataset makeDataset(int64_t n, int64_t c, int64_t h, int64_t w) {
  Dataset d;
  d.n = n;
  d.c = c;
  d.h = h;
  d.w = w;
  d.u8.resize(size_t(n * c * h * w));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < c * h * w; ++k)
      d.u8[size_t(i * c * h * w + k)] = uint8_t(1 + (i * 31 + k * 7) % 254);
  for (int64_t i = 0; i < n; ++i)
    d.labels.push_back(i);
  return d;
}

struct Batch {
  std::vector<float> images;
  std::vector<int64_t> labels;
  int64_t valid = -1;
  bool operator==(const Batch &o) const {
    return images == o.images && labels == o.labels && valid == o.valid;
  }
};

Batch getBatch(const BatchLoader &loader, const Dataset &d, int64_t batchSize,
               int64_t epoch, int64_t index) {
  Batch b;
  b.images.assign(size_t(batchSize * d.c * d.h * d.w), -777.0f);
  b.labels.assign(size_t(batchSize), -777);
  loader.batch(epoch, index, b.images.data(), b.labels.data(), b.valid);
  return b;
}

/// Index i of a side of n in a mirror image of it that does not repeat the
/// edge (numpy's and PyTorch's "reflect"), folded until it lands inside.
int64_t mirrored(int64_t i, int64_t n) {
  while (i < 0 || i >= n)
    i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

/// The augmentation of Dataset.h done the slow, literal way on one image
/// plane: pad, crop, translate, flip, cutout. Returns raw pixel values.
/// With `reflect`, padding and translation fill with the mirror image.
std::vector<int> referenceAugment(const uint8_t *img, int64_t h, int64_t w,
                                  const rng::AugmentDraw &d, int64_t pad,
                                  int64_t cutout, bool reflect = false) {
  const int64_t ph = h + 2 * pad, pw = w + 2 * pad;
  std::vector<int> padded(size_t(ph * pw), 0);
  for (int64_t y = 0; y < ph; ++y)
    for (int64_t x = 0; x < pw; ++x) {
      const int64_t iy = y - pad, ix = x - pad;
      if (reflect)
        padded[size_t(y * pw + x)] = img[mirrored(iy, h) * w + mirrored(ix, w)];
      else if (iy >= 0 && iy < h && ix >= 0 && ix < w)
        padded[size_t(y * pw + x)] = img[iy * w + ix];
    }
  std::vector<int> cropped(size_t(h * w));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      cropped[size_t(y * w + x)] =
          padded[size_t((y + d.cropY) * pw + x + d.cropX)];
  std::vector<int> shifted(size_t(h * w), 0);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      int64_t sy = y - d.shiftY, sx = x - d.shiftX;
      if (reflect)
        shifted[size_t(y * w + x)] = cropped[size_t(mirrored(sy, h) * w + mirrored(sx, w))];
      else if (sy >= 0 && sy < h && sx >= 0 && sx < w)
        shifted[size_t(y * w + x)] = cropped[size_t(sy * w + sx)];
    }
  std::vector<int> flipped(size_t(h * w));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      flipped[size_t(y * w + x)] =
          shifted[size_t(y * w + (d.flip ? w - 1 - x : x))];
  if (cutout > 0)
    for (int64_t y = d.cutoutY - cutout / 2;
         y < d.cutoutY - cutout / 2 + cutout; ++y)
      for (int64_t x = d.cutoutX - cutout / 2;
           x < d.cutoutX - cutout / 2 + cutout; ++x)
        if (y >= 0 && y < h && x >= 0 && x < w)
          flipped[size_t(y * w + x)] = 0;
  return flipped;
}

float norm(int v, float mean, float stdev) {
  return (float(v) / 255.0f - mean) / stdev;
}

} // namespace

TEST(BatchLoader, BatchesPerEpochAndPadding) {
  Dataset d = makeDataset(10, 1, 2, 2);
  BatchLoader keep(d, 4, false, false, false, 0, {}, {});
  BatchLoader drop(d, 4, false, false, true, 0, {}, {});
  EXPECT_EQ(keep.batchesPerEpoch(), 3);
  EXPECT_EQ(drop.batchesPerEpoch(), 2);
  EXPECT_EQ(BatchLoader(d, 5, false, false, false, 0, {}, {}).batchesPerEpoch(),
            2);
  EXPECT_EQ(BatchLoader(d, 5, false, false, true, 0, {}, {}).batchesPerEpoch(),
            2);
  EXPECT_EQ(BatchLoader(d, 11, false, false, true, 0, {}, {}).batchesPerEpoch(),
            0);
  EXPECT_EQ(BatchLoader(d, 0, false, false, false, 0, {}, {}).batchesPerEpoch(),
            0);

  Batch last = getBatch(keep, d, 4, 0, 2);
  EXPECT_EQ(last.valid, 2);
  EXPECT_EQ(last.labels, (std::vector<int64_t>{8, 9, 0, 0}));
  for (size_t k = 8; k < 16; ++k)
    EXPECT_EQ(last.images[k], 0.0f) << k;
  EXPECT_EQ(last.images[0], norm(d.u8[32], 0, 1));

  // Out of range: all zeros, valid 0.
  for (int64_t index : {int64_t(-1), int64_t(3), int64_t(1) << 40}) {
    Batch none = getBatch(keep, d, 4, 0, index);
    EXPECT_EQ(none.valid, 0);
    EXPECT_EQ(none.labels, std::vector<int64_t>(4, 0));
    EXPECT_EQ(none.images, std::vector<float>(16, 0.0f));
  }
  Batch dropped = getBatch(drop, d, 4, 0, 2);
  EXPECT_EQ(dropped.valid, 0);
}

TEST(BatchLoader, ScaleAndNormalize) {
  Dataset d = makeDataset(3, 3, 2, 2);
  d.u8[0] = 0;
  d.u8[1] = 255;
  d.u8[2] = 128;
  const std::vector<float> mean = {0.4914f, 0.4822f, 0.4465f};
  const std::vector<float> stdev = {0.2470f, 0.2435f, 0.2616f};
  BatchLoader loader(d, 3, false, false, false, 0, {}, {mean, stdev});
  std::string error;
  ASSERT_TRUE(loader.check(error)) << error;
  Batch b = getBatch(loader, d, 3, 0, 0);
  ASSERT_EQ(b.valid, 3);
  for (size_t i = 0; i < d.u8.size(); ++i) {
    size_t ch = (i / 4) % 3;
    double expect = (d.u8[i] / 255.0 - mean[ch]) / stdev[ch];
    EXPECT_NEAR(b.images[i], expect, 1e-5) << i;
    EXPECT_EQ(b.images[i], norm(d.u8[i], mean[ch], stdev[ch])) << i;
  }
  EXPECT_NEAR(b.images[0], -0.4914 / 0.2470, 1e-6);
  EXPECT_NEAR(b.images[1], (1 - 0.4914) / 0.2470, 1e-6);

  // Empty config: v / 255. One value: every channel.
  BatchLoader plain(d, 3, false, false, false, 0, {}, {});
  Batch p = getBatch(plain, d, 3, 0, 0);
  EXPECT_EQ(p.images[1], 1.0f);
  EXPECT_EQ(p.images[2], 128.0f / 255.0f);
  BatchLoader one(d, 3, false, false, false, 0, {}, {{0.5f}, {0.25f}});
  Batch o = getBatch(one, d, 3, 0, 0);
  for (size_t i = 0; i < d.u8.size(); ++i)
    EXPECT_EQ(o.images[i], norm(d.u8[i], 0.5f, 0.25f));
  EXPECT_EQ(o.images[1], 2.0f);
  EXPECT_EQ(o.images[0], -2.0f);
}

TEST(BatchLoader, FloatDataIsNotScaled) {
  Dataset d;
  d.n = 2;
  d.c = 2;
  d.h = 1;
  d.w = 2;
  d.isFloat = true;
  d.f32 = {1.5f, -2.0f, 0.25f, 3.0f, 7.0f, 8.0f, 9.0f, 10.0f};
  d.labels = {4, 2};
  BatchLoader loader(d, 2, false, false, false, 0, {},
                     {{1.0f, -1.0f}, {2.0f, 0.5f}});
  Batch b = getBatch(loader, d, 2, 0, 0);
  EXPECT_EQ(b.valid, 2);
  EXPECT_EQ(b.labels, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(b.images, (std::vector<float>{0.25f, -1.5f, 2.5f, 8.0f, 3.0f, 3.5f,
                                          20.0f, 22.0f}));
}

TEST(BatchLoader, ShuffleIsAPermutationPerEpoch) {
  Dataset d = makeDataset(1000, 1, 1, 1);
  BatchLoader loader(d, 64, true, false, false, 1234, {}, {});
  std::vector<std::vector<int64_t>> orders;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<int64_t> seen;
    for (int64_t b = 0; b < loader.batchesPerEpoch(); ++b) {
      Batch batch = getBatch(loader, d, 64, epoch, b);
      seen.insert(seen.end(), batch.labels.begin(),
                  batch.labels.begin() + batch.valid);
    }
    ASSERT_EQ(seen.size(), 1000u);
    EXPECT_EQ(seen, loader.epochOrder(epoch));
    std::vector<int64_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < 1000; ++i)
      ASSERT_EQ(sorted[size_t(i)], i) << "epoch " << epoch;
    orders.push_back(seen);
  }
  EXPECT_NE(orders[0], orders[1]);
  EXPECT_NE(orders[1], orders[2]);
  // Really shuffled: few rows stay where they were.
  int fixed = 0;
  for (int64_t i = 0; i < 1000; ++i)
    fixed += orders[0][size_t(i)] == i;
  EXPECT_LT(fixed, 10);
  // Another seed, another order; no shuffle, the identity.
  BatchLoader other(d, 64, true, false, false, 1235, {}, {});
  EXPECT_NE(other.epochOrder(0), orders[0]);
  BatchLoader sequential(d, 64, false, false, false, 1234, {}, {});
  std::vector<int64_t> identity(1000);
  for (int64_t i = 0; i < 1000; ++i)
    identity[size_t(i)] = i;
  EXPECT_EQ(sequential.epochOrder(5), identity);
}

TEST(BatchLoader, ShuffleIsUniformEnough) {
  // Row 0's position over 2000 epochs of 8 rows: each of the 8 positions
  // about 250 times.
  Dataset d = makeDataset(8, 1, 1, 1);
  BatchLoader loader(d, 8, true, false, false, 99, {}, {});
  std::vector<int> counts(8, 0);
  for (int64_t epoch = 0; epoch < 2000; ++epoch) {
    std::vector<int64_t> order = loader.epochOrder(epoch);
    ++counts[size_t(std::find(order.begin(), order.end(), 0) - order.begin())];
  }
  for (int c : counts) {
    EXPECT_GT(c, 180);
    EXPECT_LT(c, 320);
  }
}

TEST(BatchLoader, DeterministicAndResumable) {
  Dataset d = makeDataset(300, 3, 8, 8);
  AugmentConfig aug{2, true, 1, 3};
  NormalizeConfig normalize{{0.5f, 0.4f, 0.3f}, {0.2f, 0.3f, 0.4f}};
  BatchLoader a(d, 32, true, true, false, 42, aug, normalize);
  BatchLoader b(d, 32, true, true, false, 42, aug, normalize);
  // b is "resumed": it starts at (epoch 3, batch 5) with no history.
  Batch fromB = getBatch(b, d, 32, 3, 5);
  for (int64_t epoch = 0; epoch < 4; ++epoch)
    for (int64_t i = 0; i < a.batchesPerEpoch(); ++i)
      getBatch(a, d, 32, epoch, i);
  Batch fromA = getBatch(a, d, 32, 3, 5);
  EXPECT_TRUE(fromA == fromB);
  EXPECT_TRUE(getBatch(a, d, 32, 3, 5) == fromA);
  // Another epoch: other rows and other augmentation.
  EXPECT_FALSE(getBatch(a, d, 32, 4, 5) == fromA);
  EXPECT_NE(getBatch(a, d, 32, 4, 5).labels, fromA.labels);
  // Another seed.
  BatchLoader c(d, 32, true, true, false, 43, aug, normalize);
  EXPECT_FALSE(getBatch(c, d, 32, 3, 5) == fromA);
}

TEST(BatchLoader, MatchesTheLiteralAugmentation) {
  // Every augmentation at once against the step-by-step reference, in the
  // documented order, with the documented random draws.
  Dataset d = makeDataset(64, 3, 7, 9);
  const int64_t pad = 3, translate = 2, cutout = 4;
  AugmentConfig aug{pad, true, translate, cutout};
  NormalizeConfig normalize{{0.1f, 0.2f, 0.3f}, {0.5f, 0.6f, 0.7f}};
  const int64_t batch = 16;
  BatchLoader loader(d, batch, true, true, false, 2024, aug, normalize);
  const int64_t plane = 7 * 9;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<int64_t> order = loader.epochOrder(epoch);
    for (int64_t bi = 0; bi < loader.batchesPerEpoch(); ++bi) {
      Batch b = getBatch(loader, d, batch, epoch, bi);
      for (int64_t k = 0; k < b.valid; ++k) {
        const int64_t position = bi * batch + k;
        const int64_t row = order[size_t(position)];
        ASSERT_EQ(b.labels[size_t(k)], row);
        rng::AugmentDraw draw =
            rng::drawAugment(2024, uint64_t(epoch), uint64_t(position), 7, 9,
                             pad, true, translate, cutout);
        for (int64_t ch = 0; ch < 3; ++ch) {
          std::vector<int> expect = referenceAugment(
              d.u8.data() + (row * 3 + ch) * plane, 7, 9, draw, pad, cutout);
          for (int64_t i = 0; i < plane; ++i)
            ASSERT_EQ(b.images[size_t((k * 3 + ch) * plane + i)],
                      norm(expect[size_t(i)], normalize.mean[size_t(ch)],
                           normalize.std[size_t(ch)]))
                << "epoch " << epoch << " position " << position << " ch " << ch
                << " pixel " << i;
        }
      }
    }
  }
}

TEST(BatchLoader, MatchesTheLiteralAugmentationWithReflection) {
  // Crop and translate of reflect-padded images (airbench's and myrtle.ai's
  // F.pad(mode="reflect")), padding up to the side - 1.
  Dataset d = makeDataset(48, 2, 7, 9);
  const int64_t pad = 6, translate = 3;
  AugmentConfig aug{pad, true, translate, 0, false, true};
  NormalizeConfig normalize{{0.1f, 0.2f}, {0.5f, 0.6f}};
  BatchLoader loader(d, 16, true, true, false, 77, aug, normalize);
  const int64_t plane = 7 * 9;
  int reflected = 0;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    std::vector<int64_t> order = loader.epochOrder(epoch);
    for (int64_t bi = 0; bi < loader.batchesPerEpoch(); ++bi) {
      Batch b = getBatch(loader, d, 16, epoch, bi);
      for (int64_t k = 0; k < b.valid; ++k) {
        const int64_t position = bi * 16 + k, row = order[size_t(position)];
        rng::AugmentDraw draw = rng::drawAugment(77, uint64_t(epoch), uint64_t(position), 7,
                                                 9, pad, true, translate, 0);
        reflected += draw.cropY != pad || draw.shiftX != 0;
        for (int64_t ch = 0; ch < 2; ++ch) {
          std::vector<int> expect = referenceAugment(d.u8.data() + (row * 2 + ch) * plane, 7,
                                                     9, draw, pad, 0, true);
          for (int64_t i = 0; i < plane; ++i)
            ASSERT_EQ(b.images[size_t((k * 2 + ch) * plane + i)],
                      norm(expect[size_t(i)], normalize.mean[size_t(ch)],
                           normalize.std[size_t(ch)]))
                << "epoch " << epoch << " position " << position << " pixel " << i;
        }
      }
    }
  }
  EXPECT_GT(reflected, 40); // most samples read beyond a border
}

TEST(BatchLoader, BalancedDrawsDealEachChoiceEvenly) {
  // myrtle.ai's cifar10-fast: each crop offset (81 for padding 4), each
  // translation (25), each flip (2) and each cutout centre (36) goes to
  // n / k or n / k + 1 of an epoch's n samples; each epoch another deal.
  const int64_t n = 2 * 81 + 5, h = 6, w = 6;
  std::map<std::pair<int64_t, int64_t>, int> firstCrops;
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    std::map<std::pair<int64_t, int64_t>, int> crops, shifts, cutouts;
    int flips = 0;
    for (int64_t p = 0; p < n; ++p) {
      rng::AugmentDraw d = rng::drawAugment(9, epoch, uint64_t(p), h, w, 4, true, 2, 3,
                                            false, 0, /*balanced=*/true, n);
      ++crops[{d.cropY, d.cropX}];
      ++shifts[{d.shiftY, d.shiftX}];
      ++cutouts[{d.cutoutY, d.cutoutX}];
      flips += d.flip;
      if (epoch == 0)
        firstCrops[{p, d.cropY * 9 + d.cropX}] = 1;
    }
    auto expectEven = [&](const std::map<std::pair<int64_t, int64_t>, int> &count, int64_t k,
                          int64_t lo, int64_t hi, const char *what) {
      ASSERT_EQ(int64_t(count.size()), k) << what << " epoch " << epoch;
      int big = 0;
      for (const auto &[option, c] : count) {
        ASSERT_GE(option.first, lo) << what;
        ASSERT_LE(option.first, hi) << what;
        ASSERT_TRUE(c == n / k || c == n / k + 1) << what << " option count " << c;
        big += c == n / k + 1;
      }
      EXPECT_EQ(big, n % k) << what;
    };
    expectEven(crops, 81, 0, 8, "crop");
    expectEven(shifts, 25, -2, 2, "translate");
    expectEven(cutouts, 36, 0, 5, "cutout");
    EXPECT_TRUE(flips == n / 2 || flips == n / 2 + 1) << flips;
    if (epoch > 0) {
      int same = 0;
      for (int64_t p = 0; p < n; ++p) {
        rng::AugmentDraw d = rng::drawAugment(9, epoch, uint64_t(p), h, w, 4, true, 2, 3,
                                              false, 0, true, n);
        same += firstCrops.count({p, d.cropY * 9 + d.cropX});
      }
      EXPECT_LT(same, 20) << "epoch " << epoch << " repeats epoch 0's deal";
    }
  }

  // The loader applies exactly these draws.
  Dataset data = makeDataset(n, 1, h, w);
  AugmentConfig aug{4, true, 0, 3, false, false, /*balanced=*/true};
  BatchLoader loader(data, n, true, true, false, 9, aug, {});
  std::vector<int64_t> order = loader.epochOrder(1);
  Batch b = getBatch(loader, data, n, 1, 0);
  for (int64_t p = 0; p < n; ++p) {
    rng::AugmentDraw draw = rng::drawAugment(9, 1, uint64_t(p), h, w, 4, true, 0, 3, false,
                                             0, true, n);
    std::vector<int> expect =
        referenceAugment(data.u8.data() + order[size_t(p)] * h * w, h, w, draw, 4, 3);
    for (int64_t i = 0; i < h * w; ++i)
      ASSERT_EQ(b.images[size_t(p * h * w + i)], norm(expect[size_t(i)], 0, 1))
          << "position " << p << " pixel " << i;
  }
}

TEST(BatchLoader, AlternatingFlipsTurnEachImageEveryEpoch) {
  // airbench: a random half of the images is flipped in the first epoch,
  // and every image the other way in each following epoch, whatever the
  // shuffle puts it.
  Dataset d = makeDataset(400, 1, 2, 3);
  AugmentConfig aug;
  aug.flip = true;
  aug.alternateFlip = true;
  BatchLoader loader(d, 400, true, true, false, 5, aug, {});
  std::vector<int> first(400, -1);
  int flippedFirst = 0;
  for (int64_t epoch = 0; epoch < 4; ++epoch) {
    Batch b = getBatch(loader, d, 400, epoch, 0);
    for (int64_t k = 0; k < 400; ++k) {
      const int64_t row = b.labels[size_t(k)];
      const uint8_t *img = d.u8.data() + row * 6;
      const float *got = b.images.data() + k * 6;
      const bool same = got[0] == norm(img[0], 0, 1) && got[2] == norm(img[2], 0, 1);
      const bool mirror = got[0] == norm(img[2], 0, 1) && got[2] == norm(img[0], 0, 1);
      ASSERT_NE(same, mirror) << "row " << row;
      if (epoch == 0) {
        first[size_t(row)] = mirror;
        flippedFirst += mirror;
      } else {
        ASSERT_EQ(mirror, (first[size_t(row)] == 1) != (epoch % 2 == 1))
            << "row " << row << " epoch " << epoch;
      }
    }
  }
  EXPECT_GT(flippedFirst, 150);
  EXPECT_LT(flippedFirst, 250);
}

TEST(BatchLoader, FlipGivesTheImageOrItsMirror) {
  // One asymmetric 3x4 image, repeated; flip only.
  Dataset d;
  d.n = 400;
  d.c = 1;
  d.h = 3;
  d.w = 4;
  const std::vector<uint8_t> image = {1, 2, 3, 4, 10, 20, 30, 40, 5, 0, 0, 9};
  const std::vector<uint8_t> mirror = {4, 3, 2, 1, 40, 30, 20, 10, 9, 0, 0, 5};
  for (int64_t i = 0; i < d.n; ++i) {
    d.u8.insert(d.u8.end(), image.begin(), image.end());
    d.labels.push_back(0);
  }
  AugmentConfig aug;
  aug.flip = true;
  BatchLoader loader(d, 100, true, true, false, 5, aug, {});
  int same = 0, flipped = 0;
  for (int64_t bi = 0; bi < 4; ++bi) {
    Batch b = getBatch(loader, d, 100, 0, bi);
    for (int64_t k = 0; k < 100; ++k) {
      std::vector<uint8_t> got;
      for (int64_t i = 0; i < 12; ++i)
        got.push_back(uint8_t(std::lround(b.images[size_t(k * 12 + i)] * 255)));
      if (got == image)
        ++same;
      else if (got == mirror)
        ++flipped;
      else
        ADD_FAILURE() << "sample " << bi * 100 + k
                      << " is neither the image nor its mirror";
    }
  }
  EXPECT_EQ(same + flipped, 400);
  EXPECT_GT(same, 150);
  EXPECT_GT(flipped, 150);
  // Without augment, never flipped.
  BatchLoader off(d, 100, true, false, false, 5, aug, {});
  Batch b = getBatch(off, d, 100, 0, 0);
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(std::lround(b.images[size_t(i)] * 255), image[size_t(i)]);
}

namespace {

/// Finds the shift (a, b) with out(y, x) = in(y + a, x + b) (zero outside),
/// or returns false.
bool findShift(const std::vector<float> &out, const Dataset &d, int64_t row,
               int64_t range, int64_t &foundA, int64_t &foundB) {
  for (int64_t a = -range; a <= range; ++a)
    for (int64_t b = -range; b <= range; ++b) {
      bool match = true;
      for (int64_t y = 0; y < d.h && match; ++y)
        for (int64_t x = 0; x < d.w && match; ++x) {
          int64_t sy = y + a, sx = x + b;
          int v = sy >= 0 && sy < d.h && sx >= 0 && sx < d.w
                      ? d.u8[size_t(row * d.h * d.w + sy * d.w + sx)]
                      : 0;
          match = out[size_t(y * d.w + x)] == float(v) / 255.0f;
        }
      if (match) {
        foundA = a;
        foundB = b;
        return true;
      }
    }
  return false;
}

void expectShifts(const AugmentConfig &aug, int64_t range) {
  Dataset d = makeDataset(50, 1, 6, 6); // pixels are never 0
  BatchLoader loader(d, 50, false, true, false, 77, aug, {});
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t epoch = 0; epoch < 8; ++epoch) {
    Batch b = getBatch(loader, d, 50, epoch, 0);
    ASSERT_EQ(b.valid, 50);
    ASSERT_EQ(b.images.size(), 50u * 36);
    for (int64_t k = 0; k < 50; ++k) {
      std::vector<float> out(b.images.begin() + k * 36,
                             b.images.begin() + (k + 1) * 36);
      int64_t a = 0, bb = 0;
      ASSERT_TRUE(findShift(out, d, k, range, a, bb))
          << "sample " << k << " of epoch " << epoch
          << " is not a zero-filled shift of its image";
      // Zero fill: exactly the pixels shifted in from outside are 0.
      int64_t zeros = std::count(out.begin(), out.end(), 0.0f);
      EXPECT_EQ(zeros, 36 - (6 - std::abs(a)) * (6 - std::abs(bb)));
      seen.insert({a, bb});
    }
  }
  EXPECT_EQ(int64_t(seen.size()), (2 * range + 1) * (2 * range + 1));
}

} // namespace

TEST(BatchLoader, CropKeepsShapeAndZeroFills) {
  AugmentConfig aug;
  aug.cropPadding = 2;
  expectShifts(aug, 2);
}

TEST(BatchLoader, TranslateKeepsShapeAndZeroFills) {
  AugmentConfig aug;
  aug.translate = 1;
  expectShifts(aug, 1);
}

TEST(BatchLoader, CutoutZeroesASquare) {
  Dataset d;
  d.n = 200;
  d.c = 2;
  d.h = 8;
  d.w = 8;
  d.u8.assign(size_t(200 * 2 * 64), 200);
  d.labels.assign(200, 1);
  AugmentConfig aug;
  aug.cutout = 3;
  BatchLoader loader(d, 200, false, true, false, 3, aug, {});
  Batch b = getBatch(loader, d, 200, 0, 0);
  int full = 0, clipped = 0;
  std::set<std::pair<int64_t, int64_t>> centres;
  for (int64_t k = 0; k < 200; ++k) {
    // The zeros' bounding box is all zero, at most 3x3, the same in both
    // channels.
    int64_t y0 = 8, y1 = -1, x0 = 8, x1 = -1, zeros = 0;
    for (int64_t y = 0; y < 8; ++y)
      for (int64_t x = 0; x < 8; ++x) {
        float v0 = b.images[size_t(k * 128 + y * 8 + x)];
        float v1 = b.images[size_t(k * 128 + 64 + y * 8 + x)];
        ASSERT_EQ(v0, v1);
        if (v0 == 0.0f) {
          ++zeros;
          y0 = std::min(y0, y);
          y1 = std::max(y1, y);
          x0 = std::min(x0, x);
          x1 = std::max(x1, x);
        } else {
          ASSERT_EQ(v0, 200.0f / 255.0f);
        }
      }
    ASSERT_GT(zeros, 0) << "sample " << k;
    ASSERT_LE(y1 - y0 + 1, 3);
    ASSERT_LE(x1 - x0 + 1, 3);
    ASSERT_EQ(zeros, (y1 - y0 + 1) * (x1 - x0 + 1)) << "not a rectangle";
    bool touches = y0 == 0 || x0 == 0 || y1 == 7 || x1 == 7;
    if (zeros == 9)
      ++full;
    else {
      ASSERT_TRUE(touches) << "a short side away from the border";
      ++clipped;
    }
    rng::AugmentDraw draw =
        rng::drawAugment(3, 0, uint64_t(k), 8, 8, 0, false, 0, 3);
    EXPECT_EQ(std::max<int64_t>(0, draw.cutoutY - 1), y0);
    EXPECT_EQ(std::max<int64_t>(0, draw.cutoutX - 1), x0);
    centres.insert({draw.cutoutY, draw.cutoutX});
  }
  EXPECT_GT(full, 50);
  EXPECT_GT(clipped, 20);
  EXPECT_GT(centres.size(), 50u); // spread over the 64 pixels
}

TEST(BatchLoader, ZeroFillIsARawZeroPixel) {
  // With normalisation, padding reads (0 - mean) / std.
  Dataset d = makeDataset(20, 1, 4, 4);
  AugmentConfig aug;
  aug.translate = 3;
  BatchLoader loader(d, 20, false, true, false, 8, aug, {{0.5f}, {0.25f}});
  Batch b = getBatch(loader, d, 20, 0, 0);
  int64_t filled = std::count(b.images.begin(), b.images.end(), -2.0f);
  EXPECT_GT(filled, 20);
}

TEST(BatchLoader, AugmentDrawsAreIndependentOfEachOther) {
  // Turning cutout or crop on does not change the flip decisions.
  for (uint64_t p = 0; p < 200; ++p) {
    rng::AugmentDraw a = rng::drawAugment(11, 2, p, 32, 32, 0, true, 0, 0);
    rng::AugmentDraw b = rng::drawAugment(11, 2, p, 32, 32, 4, true, 2, 8);
    ASSERT_EQ(a.flip, b.flip);
    ASSERT_GE(b.cropY, 0);
    ASSERT_LE(b.cropY, 8);
    ASSERT_GE(b.shiftX, -2);
    ASSERT_LE(b.shiftX, 2);
    ASSERT_LT(b.cutoutY, 32);
  }
}

TEST(BatchLoader, CheckRejectsBadConfigurations) {
  Dataset d = makeDataset(4, 3, 2, 2);
  std::string error;
  EXPECT_TRUE(BatchLoader(d, 2, true, true, false, 0, {}, {}).check(error));
  EXPECT_FALSE(BatchLoader(d, 0, true, true, false, 0, {}, {}).check(error));
  EXPECT_EQ(error, "batch size 0 is not positive");
  EXPECT_FALSE(BatchLoader(d, 2, true, true, false, 0, {}, {{0.1f, 0.2f}, {}})
                   .check(error));
  EXPECT_EQ(error, "normalisation mean has 2 values for 3 channels");
  EXPECT_FALSE(
      BatchLoader(d, 2, true, true, false, 0, {}, {{}, {1.0f, 0.0f, 1.0f}})
          .check(error));
  EXPECT_NE(error.find("not finite and positive"), std::string::npos);
  AugmentConfig negative;
  negative.cutout = -1;
  EXPECT_FALSE(
      BatchLoader(d, 2, true, true, false, 0, negative, {}).check(error));
  EXPECT_NE(error.find("cutout -1"), std::string::npos) << error;

  // An inconsistent dataset: batch() pads with zeros and says 0 valid.
  Dataset broken = d;
  broken.u8.pop_back();
  BatchLoader bad(broken, 2, true, true, false, 0, {}, {});
  EXPECT_FALSE(bad.check(error));
  EXPECT_NE(error.find("needs 48"), std::string::npos) << error;
  Batch b = getBatch(bad, broken, 2, 0, 0);
  EXPECT_EQ(b.valid, 0);
  EXPECT_EQ(b.images, std::vector<float>(24, 0.0f));
  Dataset fewLabels = d;
  fewLabels.labels.pop_back();
  EXPECT_FALSE(
      BatchLoader(fewLabels, 2, true, true, false, 0, {}, {}).check(error));
  Dataset empty;
  EXPECT_FALSE(
      BatchLoader(empty, 2, true, true, false, 0, {}, {}).check(error));
  int64_t valid = 5;
  BatchLoader(empty, 2, true, true, false, 0, {}, {})
      .batch(0, 0, nullptr, nullptr, valid);
  EXPECT_EQ(valid, 0);
}

TEST(BatchLoader, ConcurrentCallsMatchSerialOnes) {
  Dataset d = makeDataset(2000, 3, 8, 8);
  BatchLoader loader(d, 50, true, true, false, 9, AugmentConfig{2, true, 1, 4},
                     NormalizeConfig{{0.5f}, {0.2f}});
  const int64_t batches = loader.batchesPerEpoch();
  std::vector<Batch> serial;
  for (int64_t epoch = 0; epoch < 2; ++epoch)
    for (int64_t i = 0; i < batches; ++i)
      serial.push_back(getBatch(loader, d, 50, epoch, i));
  std::vector<Batch> parallel(serial.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      // Threads interleave epochs so their permutation caches churn.
      for (size_t j = size_t(t); j < parallel.size(); j += 4) {
        size_t k = (j * 7) % parallel.size();
        parallel[k] =
            getBatch(loader, d, 50, int64_t(k) / batches, int64_t(k) % batches);
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (size_t k = 0; k < serial.size(); ++k)
    ASSERT_TRUE(serial[k] == parallel[k]) << "batch " << k;
}

TEST(BatchLoader, EpochOfMnistSizeIsFast) {
  Dataset d = makeDataset(60000, 1, 28, 28);
  BatchLoader loader(d, 128, true, true, false, 1, AugmentConfig{2, true, 2, 8},
                     NormalizeConfig{{0.1307f}, {0.3081f}});
  std::vector<float> images(128 * 28 * 28);
  std::vector<int64_t> labels(128);
  int64_t valid = 0, total = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < loader.batchesPerEpoch(); ++i) {
    loader.batch(0, i, images.data(), labels.data(), valid);
    total += valid;
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::printf("60000 28x28 augmented samples in %.3f s\n", seconds);
  EXPECT_EQ(total, 60000);
  // The target is well under a second; the bound leaves room for a loaded
  // or unoptimised CI machine.
  EXPECT_LT(seconds, 3.0);
}
