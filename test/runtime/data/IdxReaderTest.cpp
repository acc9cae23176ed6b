//===- IdxReaderTest.cpp - IDX files, gzip, and their errors --------------===//

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

/// Bytes that deflate cannot shrink.
Bytes noise(size_t n) {
  Bytes b(n);
  uint32_t x = 2463534242u;
  for (uint8_t &v : b) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    v = uint8_t(x);
  }
  return b;
}

TEST(IdxReader, GzipIsInflatedOnlyAsFarAsTheHeaderDeclares) {
  // A gzip bomb: the header declares 60 bytes of pixels, the stream holds
  // 4 MiB more. Its tail is cut off, so a reader that inflated to the end
  // would report truncated gzip data; stopping one byte past the declared
  // size reports the surplus instead.
  TempDir dir;
  writeIdxDir(dir, true);
  Bytes images = idxImages(5, 4, 3);
  Bytes tail = noise(4 << 20);
  images.insert(images.end(), tail.begin(), tail.end());
  Bytes gz = gzipBytes(images);
  gz.resize(gz.size() / 2);
  writeFile(dir.file("train-images-idx3-ubyte.gz"), gz);
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train-images-idx3-ubyte.gz") +
                ": header says 5 images of 4x3 (60 bytes of pixels) but the "
                "decompressed file holds more data after them (stopped "
                "reading there)");
  // The same for labels.
  writeIdxDir(dir, true);
  Bytes labels = idxLabels(5);
  labels.insert(labels.end(), tail.begin(), tail.end());
  gz = gzipBytes(labels);
  gz.resize(gz.size() / 2);
  writeFile(dir.file("train-labels-idx1-ubyte.gz"), gz);
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train-labels-idx1-ubyte.gz") +
                ": header says 5 labels (5 bytes of labels) but the "
                "decompressed file holds more data after them (stopped "
                "reading there)");
}

TEST(IdxReader, GzipHeaderPromisingMoreThanDeflateCanHoldIsTruncation) {
  // 2^32-1 images of 2^32-1 x 2^32-1 cannot come out of a few bytes of gzip
  // (deflate's largest ratio is 1032:1): refused before any allocation.
  TempDir dir;
  writeIdxDir(dir, true);
  Bytes images;
  putBE32(images, 0x00000803);
  putBE32(images, 0xffffffffu);
  putBE32(images, 0xffffffffu);
  putBE32(images, 0xffffffffu);
  writeFile(dir.file("train-images-idx3-ubyte.gz"), gzipBytes(images));
  std::string error = loadError(dir.str());
  EXPECT_NE(error.find(": truncated: header says 4294967295 images of "
                       "4294967295x4294967295 but the gzip file of "),
            std::string::npos)
      << error;
  // Declared sizes within reach but beyond the data: truncation, counted.
  Bytes small = idxImages(5, 4, 3);
  small.resize(16 + 7);
  writeFile(dir.file("train-images-idx3-ubyte.gz"), gzipBytes(small));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train-images-idx3-ubyte.gz") +
                ": truncated: header says 5 images of 4x3 but the file holds "
                "7 bytes of pixels");
}

TEST(IdxReader, NonRegularFilesAreNamedNotMissing) {
  TempDir dir;
  writeIdxDir(dir, false);
  std::filesystem::remove(dir.file("train-images-idx3-ubyte"));
  std::filesystem::create_symlink("/dev/zero",
                                  dir.file("train-images-idx3-ubyte"));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train-images-idx3-ubyte") +
                ": is a character device (a symlink to /dev/zero), expected "
                "a regular file");
  std::filesystem::remove(dir.file("train-images-idx3-ubyte"));
  std::filesystem::create_symlink(dir.file("gone"),
                                  dir.file("train-images-idx3-ubyte"));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("train-images-idx3-ubyte") + ": is a symlink to '" +
                dir.file("gone") +
                "', which does not exist, expected a regular file");
  std::filesystem::remove(dir.file("train-images-idx3-ubyte"));
  std::filesystem::create_directory(dir.file("train-images-idx3-ubyte"));
  EXPECT_EQ(loadError(dir.str()), dir.file("train-images-idx3-ubyte") +
                                      ": is a directory, expected a regular "
                                      "file");
  // The data directory itself.
  std::string error = loadError(dir.file("t10k-labels-idx1-ubyte"));
  EXPECT_EQ(error.rfind(dir.file("t10k-labels-idx1-ubyte") +
                            ": is a regular file, expected a directory",
                        0),
            0u)
      << error;
  error = loadError("/dev/zero");
  EXPECT_EQ(error.rfind("/dev/zero: is a character device, expected a "
                        "directory",
                        0),
            0u)
      << error;
}

TEST(FileReader, DataFileStopsWhereAsked) {
  TempDir dir;
  Bytes data = noise(300000);
  writeFile(dir.file("packed"), gzipBytes(data));
  data::DataFile file;
  std::string error;
  ASSERT_TRUE(file.open(dir.file("packed"), error)) << error;
  EXPECT_TRUE(file.isGzip());
  EXPECT_GE(file.maxDataSize(), data.size());
  std::vector<uint8_t> out;
  ASSERT_TRUE(file.read(1000, out, error)) << error;
  ASSERT_EQ(out, Bytes(data.begin(), data.begin() + 1000));
  bool more = false;
  ASSERT_TRUE(file.hasMore(more, error)) << error; // consumes byte 1000
  EXPECT_TRUE(more);
  out.clear();
  ASSERT_TRUE(file.read(1u << 30, out, error)) << error;
  EXPECT_EQ(out, Bytes(data.begin() + 1001, data.end()));
  ASSERT_TRUE(file.hasMore(more, error)) << error;
  EXPECT_FALSE(more);
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
