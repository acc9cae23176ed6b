//===- IdxReaderTest.cpp - IDX files, gzip, and their errors
//---------------===//

#include "DataTestUtil.h"
#include "runtime/data/Dataset.h"
#include "runtime/data/FileReader.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace tcc::rt;
using namespace tcc::rt::test;

namespace {

/// Writes a complete IDX directory: train 5 images, test 3, of 4x3.
void writeIdxDir(const TempDir &dir, bool gz, uint32_t trainN = 5,
                 uint32_t testN = 3) {
  auto put = [&](const std::string &name, const Bytes &b) {
    if (gz)
      writeFile(dir.file(name + ".gz"), gzipBytes(b));
    else
      writeFile(dir.file(name), b);
  };
  put("train-images-idx3-ubyte", idxImages(trainN, 4, 3));
  put("train-labels-idx1-ubyte", idxLabels(trainN));
  put("t10k-images-idx3-ubyte", idxImages(testN, 4, 3));
  put("t10k-labels-idx1-ubyte", idxLabels(testN));
}

void expectSynthetic(const Dataset &d, int64_t n) {
  ASSERT_EQ(d.n, n);
  EXPECT_EQ(d.c, 1);
  EXPECT_EQ(d.h, 4);
  EXPECT_EQ(d.w, 3);
  EXPECT_FALSE(d.isFloat);
  ASSERT_EQ(d.u8.size(), size_t(n * 12));
  ASSERT_EQ(d.labels.size(), size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(d.labels[i], synthLabel(i));
    for (int64_t y = 0; y < 4; ++y)
      for (int64_t x = 0; x < 3; ++x)
        ASSERT_EQ(d.u8[i * 12 + y * 3 + x], synthPixel(i, y, x))
            << "image " << i << " (" << y << ", " << x << ")";
  }
}

std::string loadError(const std::string &dir) {
  DataSplit split;
  std::string error;
  EXPECT_FALSE(loadDataset("idx", dir, split, error));
  EXPECT_EQ(error.find('\n'), std::string::npos);
  return error;
}

} // namespace

TEST(IdxReader, LoadsPlainFiles) {
  TempDir dir;
  writeIdxDir(dir, /*gz=*/false);
  DataSplit split;
  std::string error;
  ASSERT_TRUE(loadDataset("idx", dir.str(), split, error)) << error;
  expectSynthetic(split.train, 5);
  expectSynthetic(split.test, 3);
}

TEST(IdxReader, LoadsGzipFiles) {
  TempDir dir;
  writeIdxDir(dir, /*gz=*/true);
  DataSplit split;
  std::string error;
  ASSERT_TRUE(loadDataset("idx", dir.str(), split, error)) << error;
  expectSynthetic(split.train, 5);
  expectSynthetic(split.test, 3);
}

TEST(IdxReader, GzipIsDetectedByContentNotName) {
  TempDir dir;
  // Gzip data without .gz, and plain data named .gz.
  writeFile(dir.file("train-images-idx3-ubyte"), gzipBytes(idxImages(5, 4, 3)));
  writeFile(dir.file("train-labels-idx1-ubyte.gz"), idxLabels(5));
  writeFile(dir.file("t10k-images-idx3-ubyte.gz"), idxImages(3, 4, 3));
  writeFile(dir.file("t10k-labels-idx1-ubyte"), gzipBytes(idxLabels(3)));
  DataSplit split;
  std::string error;
  ASSERT_TRUE(loadDataset("idx", dir.str(), split, error)) << error;
  expectSynthetic(split.train, 5);
  expectSynthetic(split.test, 3);
}

TEST(IdxReader, ConcatenatedGzipMembers) {
  TempDir dir;
  writeIdxDir(dir, false);
  Bytes images = idxImages(5, 4, 3);
  Bytes first(images.begin(), images.begin() + 20),
      rest(images.begin() + 20, images.end());
  Bytes gz = gzipBytes(first), gz2 = gzipBytes(rest);
  gz.insert(gz.end(), gz2.begin(), gz2.end());
  writeFile(dir.file("train-images-idx3-ubyte"), gz);
  DataSplit split;
  std::string error;
  ASSERT_TRUE(loadDataset("idx", dir.str(), split, error)) << error;
  expectSynthetic(split.train, 5);
}

TEST(IdxReader, WrongMagic) {
  TempDir dir;
  writeIdxDir(dir, true);
  // A labels file where the images belong.
  writeFile(dir.file("train-images-idx3-ubyte.gz"), gzipBytes(idxLabels(5)));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train-images-idx3-ubyte.gz") +
                ": not an IDX image file (magic 0x00000801, expected "
                "0x00000803)");
  writeFile(dir.file("train-images-idx3-ubyte.gz"),
            gzipBytes(idxImages(5, 4, 3)));
  writeFile(dir.file("t10k-labels-idx1-ubyte.gz"),
            gzipBytes(idxImages(3, 4, 3)));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("t10k-labels-idx1-ubyte.gz") +
                ": not an IDX label file (magic 0x00000803, expected "
                "0x00000801)");
}

TEST(IdxReader, TruncatedImages) {
  TempDir dir;
  writeIdxDir(dir, false);
  Bytes images = idxImages(5, 4, 3);
  images.resize(16 + 50);
  writeFile(dir.file("train-images-idx3-ubyte"), images);
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train-images-idx3-ubyte") +
                ": truncated: header says 5 images of 4x3 but the file holds "
                "50 bytes of pixels");
}

TEST(IdxReader, TruncatedHeaderAndTinyFiles) {
  TempDir dir;
  writeIdxDir(dir, false);
  Bytes images = idxImages(5, 4, 3);
  images.resize(10);
  writeFile(dir.file("train-images-idx3-ubyte"), images);
  std::string error = loadError(dir.str());
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  writeFile(dir.file("train-images-idx3-ubyte"), Bytes{0, 0});
  error = loadError(dir.str());
  EXPECT_NE(error.find("not an IDX image file"), std::string::npos) << error;
  writeFile(dir.file("train-images-idx3-ubyte"), Bytes{});
  error = loadError(dir.str());
  EXPECT_NE(error.find("not an IDX image file"), std::string::npos) << error;
}

TEST(IdxReader, TruncatedLabels) {
  TempDir dir;
  writeIdxDir(dir, false);
  Bytes labels = idxLabels(3);
  labels.pop_back();
  writeFile(dir.file("t10k-labels-idx1-ubyte"), labels);
  EXPECT_EQ(loadError(dir.str()),
            dir.file("t10k-labels-idx1-ubyte") +
                ": truncated: header says 3 labels but the file holds 2 "
                "bytes of labels");
}

TEST(IdxReader, TrailingData) {
  TempDir dir;
  writeIdxDir(dir, false);
  Bytes images = idxImages(5, 4, 3);
  images.push_back(0);
  writeFile(dir.file("train-images-idx3-ubyte"), images);
  std::string error = loadError(dir.str());
  EXPECT_EQ(error, dir.file("train-images-idx3-ubyte") +
                       ": header says 5 images of 4x3 (60 bytes of pixels) "
                       "but the file holds 61 bytes after the header");
}

TEST(IdxReader, HugeHeaderDimensionsAreTruncationNotOverflow) {
  TempDir dir;
  writeIdxDir(dir, false);
  Bytes images = idxImages(0, 0, 0);
  images.resize(4);
  putBE32(images, 0xffffffffu);
  putBE32(images, 0xffffffffu);
  putBE32(images, 0xffffffffu);
  writeFile(dir.file("train-images-idx3-ubyte"), images);
  std::string error = loadError(dir.str());
  EXPECT_NE(error.find("truncated: header says 4294967295 images of "
                       "4294967295x4294967295"),
            std::string::npos)
      << error;
}

TEST(IdxReader, EmptyDataset) {
  TempDir dir;
  writeIdxDir(dir, false, 0, 3);
  std::string error = loadError(dir.str());
  EXPECT_NE(error.find("0 images"), std::string::npos) << error;
}

TEST(IdxReader, MissingFile) {
  TempDir dir;
  writeIdxDir(dir, true);
  std::filesystem::remove(dir.file("t10k-labels-idx1-ubyte.gz"));
  std::string error = loadError(dir.str());
  EXPECT_EQ(error.rfind(dir.str() + ": t10k-labels-idx1-ubyte is missing", 0),
            0u)
      << error;
}

TEST(IdxReader, MissingDirectory) {
  TempDir dir;
  std::string error = loadError(dir.file("nope"));
  EXPECT_EQ(error.rfind(dir.file("nope") + ": no such directory", 0), 0u)
      << error;
}

TEST(IdxReader, CountMismatch) {
  TempDir dir;
  writeIdxDir(dir, false);
  writeFile(dir.file("train-labels-idx1-ubyte"), idxLabels(4));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train-labels-idx1-ubyte") + ": holds 4 labels but " +
                dir.file("train-images-idx3-ubyte") + " holds 5 images");
}

TEST(IdxReader, TrainTestSizeMismatch) {
  TempDir dir;
  writeIdxDir(dir, false);
  writeFile(dir.file("t10k-images-idx3-ubyte"), idxImages(3, 3, 4));
  std::string error = loadError(dir.str());
  EXPECT_NE(error.find("images are 3x4"), std::string::npos) << error;
}

TEST(IdxReader, CorruptGzip) {
  TempDir dir;
  writeIdxDir(dir, true);
  Bytes gz = gzipBytes(idxImages(5, 4, 3));
  Bytes corrupt = gz;
  for (size_t i = 12; i < corrupt.size() - 8; ++i)
    corrupt[i] ^= 0x5a;
  writeFile(dir.file("train-images-idx3-ubyte.gz"), corrupt);
  std::string error = loadError(dir.str());
  EXPECT_EQ(error.rfind(dir.file("train-images-idx3-ubyte.gz") + ": ", 0), 0u)
      << error;
  EXPECT_NE(error.find("gzip"), std::string::npos) << error;

  Bytes truncated(gz.begin(), gz.begin() + gz.size() / 2);
  writeFile(dir.file("train-images-idx3-ubyte.gz"), truncated);
  error = loadError(dir.str());
  EXPECT_EQ(error.rfind(dir.file("train-images-idx3-ubyte.gz") +
                            ": truncated gzip data",
                        0),
            0u)
      << error;
}

TEST(IdxReader, EveryTruncationFailsCleanly) {
  // Never crash: each prefix of a valid file (plain and gzip) is an error.
  TempDir dir;
  writeIdxDir(dir, false);
  const Bytes images = idxImages(5, 4, 3);
  const Bytes gz = gzipBytes(images);
  for (const Bytes *full : {&images, &gz}) {
    for (size_t len = 0; len < full->size(); ++len) {
      writeFile(dir.file("train-images-idx3-ubyte"),
                Bytes(full->begin(), full->begin() + len));
      DataSplit split;
      std::string error;
      ASSERT_FALSE(loadDataset("idx", dir.str(), split, error)) << len;
      ASSERT_FALSE(error.empty());
    }
  }
}

TEST(FileReader, ReadsPlainAndGzipAndReportsMissing) {
  TempDir dir;
  Bytes data;
  for (int i = 0; i < 300000; ++i)
    data.push_back(uint8_t(i * 31 + (i >> 9)));
  writeFile(dir.file("plain"), data);
  writeFile(dir.file("packed"), gzipBytes(data));
  std::vector<uint8_t> out;
  std::string error;
  ASSERT_TRUE(data::readWholeFile(dir.file("plain"), out, error)) << error;
  EXPECT_EQ(out, data);
  ASSERT_TRUE(data::readWholeFile(dir.file("packed"), out, error)) << error;
  EXPECT_EQ(out, data);
  EXPECT_FALSE(data::readWholeFile(dir.file("absent"), out, error));
  EXPECT_EQ(error, dir.file("absent") + ": no such file");
  EXPECT_FALSE(data::readWholeFile(dir.str(), out, error));
  EXPECT_NE(error.find("is a directory"), std::string::npos) << error;
}

TEST(LoadDataset, UnknownFormat) {
  DataSplit split;
  std::string error;
  EXPECT_FALSE(loadDataset("jpeg", "/tmp", split, error));
  EXPECT_EQ(
      error,
      "/tmp: unknown dataset format 'jpeg' (expected idx, cifar10 or npy)");
}
