//===- FashionMnistTest.cpp - The real Fashion-MNIST, when installed
//-------===//

#include "runtime/data/Dataset.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

using namespace tcc::rt;

namespace {
const char *const kFashionMnist = "/usr/share/datasets/fashion-mnist";
}

TEST(FashionMnist, LoadsDebianCopy) {
  if (!std::filesystem::is_directory(kFashionMnist))
    GTEST_SKIP() << kFashionMnist << " is not installed";
  DataSplit split;
  std::string error;
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(loadDataset("idx", kFashionMnist, split, error)) << error;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::printf("loaded Fashion-MNIST in %.3f s\n", seconds);
  for (auto [set, n] :
       {std::pair<const Dataset *, int64_t>{&split.train, 60000},
        {&split.test, 10000}}) {
    EXPECT_EQ(set->n, n);
    EXPECT_EQ(set->c, 1);
    EXPECT_EQ(set->h, 28);
    EXPECT_EQ(set->w, 28);
    EXPECT_FALSE(set->isFloat);
    ASSERT_EQ(set->u8.size(), size_t(n * 28 * 28));
    ASSERT_EQ(set->labels.size(), size_t(n));
    // Fashion-MNIST is balanced: n / 10 of each class 0..9.
    std::vector<int64_t> counts(10, 0);
    for (int64_t l : set->labels) {
      ASSERT_GE(l, 0);
      ASSERT_LT(l, 10);
      ++counts[l];
    }
    for (int k = 0; k < 10; ++k)
      EXPECT_EQ(counts[k], n / 10) << "class " << k;
    // Real images: neither blank nor saturated.
    double mean = 0;
    for (uint8_t v : set->u8)
      mean += v;
    mean /= double(set->u8.size()) * 255.0;
    EXPECT_GT(mean, 0.2);
    EXPECT_LT(mean, 0.4);
  }
  // The first training and test images are ankle boots (class 9).
  EXPECT_EQ(split.train.labels[0], 9);
  EXPECT_EQ(split.test.labels[0], 9);

  // One shuffled, augmented epoch of the real data.
  BatchLoader loader(split.train, 128, true, true, false, 7,
                     AugmentConfig{2, true, 1, 8},
                     NormalizeConfig{{0.2860f}, {0.3530f}});
  ASSERT_TRUE(loader.check(error)) << error;
  std::vector<float> images(128 * 28 * 28);
  std::vector<int64_t> labels(128);
  std::vector<int64_t> counts(10, 0);
  int64_t valid = 0, total = 0;
  t0 = std::chrono::steady_clock::now();
  for (int64_t b = 0; b < loader.batchesPerEpoch(); ++b) {
    loader.batch(0, b, images.data(), labels.data(), valid);
    for (int64_t k = 0; k < valid; ++k)
      ++counts[labels[k]];
    total += valid;
  }
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                .count();
  std::printf("one augmented epoch of Fashion-MNIST in %.3f s\n", seconds);
  EXPECT_EQ(total, 60000);
  for (int k = 0; k < 10; ++k)
    EXPECT_EQ(counts[k], 6000);
}
