//===- Cifar10ReaderTest.cpp - CIFAR-10 binary batches and their errors -===//

#include "DataTestUtil.h"
#include "runtime/data/Dataset.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace tcc::rt;
using namespace tcc::rt::test;

namespace {

const char *const kNames[] = {"data_batch_1.bin", "data_batch_2.bin",
                              "data_batch_3.bin", "data_batch_4.bin",
                              "data_batch_5.bin", "test_batch.bin"};
// Records per file; record ids run on across the train files.
const int kRecords[] = {2, 1, 1, 1, 3, 2};

void writeCifarDir(const std::string &dir) {
  int first = 0;
  for (int f = 0; f < 6; ++f) {
    int start = f == 5 ? 100 : first;
    writeFile(dir + "/" + kNames[f], cifarRecords(kRecords[f], start));
    if (f < 5)
      first += kRecords[f];
  }
}

std::string loadError(const std::string &dir) {
  DataSplit split;
  std::string error;
  EXPECT_FALSE(loadDataset("cifar10", dir, split, error));
  EXPECT_EQ(error.find('\n'), std::string::npos);
  return error;
}

void expectRecords(const Dataset &d, int count, int first) {
  ASSERT_EQ(d.n, count);
  EXPECT_EQ(d.c, 3);
  EXPECT_EQ(d.h, 32);
  EXPECT_EQ(d.w, 32);
  EXPECT_FALSE(d.isFloat);
  ASSERT_EQ(d.u8.size(), size_t(count) * 3072);
  ASSERT_EQ(d.labels.size(), size_t(count));
  for (int r = 0; r < count; ++r) {
    int id = first + r;
    EXPECT_EQ(d.labels[r], id % 10);
    for (int p = 0; p < 3072; p += 97)
      ASSERT_EQ(d.u8[size_t(r) * 3072 + p], uint8_t(id * 13 + p * 7))
          << "record " << r << " byte " << p;
  }
}

} // namespace

TEST(Cifar10Reader, LoadsAllBatchesInOrder) {
  TempDir dir;
  writeCifarDir(dir.str());
  DataSplit split;
  std::string error;
  ASSERT_TRUE(loadDataset("cifar10", dir.str(), split, error)) << error;
  expectRecords(split.train, 8, 0);
  expectRecords(split.test, 2, 100);
}

TEST(Cifar10Reader, AcceptsTheArchiveParentDirectory) {
  TempDir dir;
  writeCifarDir(dir.subdir("cifar-10-batches-bin"));
  DataSplit split;
  std::string error;
  ASSERT_TRUE(loadDataset("cifar10", dir.str(), split, error)) << error;
  expectRecords(split.train, 8, 0);
}

TEST(Cifar10Reader, MissingBatchIsNamed) {
  TempDir dir;
  writeCifarDir(dir.str());
  std::filesystem::remove(dir.file("data_batch_3.bin"));
  EXPECT_EQ(loadError(dir.str()),
            dir.str() + ": data_batch_3.bin is missing (expected CIFAR-10 "
                        "binary batches: data_batch_1.bin..data_batch_5.bin, "
                        "test_batch.bin)");
  writeCifarDir(dir.str());
  std::filesystem::remove(dir.file("test_batch.bin"));
  EXPECT_EQ(
      loadError(dir.str()).rfind(dir.str() + ": test_batch.bin is missing", 0),
      0u);
}

TEST(Cifar10Reader, MissingDirectory) {
  TempDir dir;
  std::string error = loadError(dir.file("absent"));
  EXPECT_EQ(error.rfind(dir.file("absent") + ": no such directory", 0), 0u)
      << error;
}

TEST(Cifar10Reader, SizeNotAMultipleOfTheRecord) {
  TempDir dir;
  writeCifarDir(dir.str());
  Bytes b = cifarRecords(2, 0);
  b.resize(b.size() - 1);
  writeFile(dir.file("data_batch_4.bin"), b);
  EXPECT_EQ(loadError(dir.str()),
            dir.file("data_batch_4.bin") +
                ": size 6145 bytes is not a multiple of 3073 (1 label byte + "
                "3072 pixel bytes per CIFAR-10 record)");
  writeFile(dir.file("data_batch_4.bin"), Bytes{});
  std::string error = loadError(dir.str());
  EXPECT_EQ(error.rfind(dir.file("data_batch_4.bin") + ": empty file", 0), 0u)
      << error;
}

TEST(Cifar10Reader, LabelOutOfRange) {
  TempDir dir;
  writeCifarDir(dir.str());
  Bytes b = cifarRecords(3, 0);
  b[2 * 3073] = 10;
  writeFile(dir.file("test_batch.bin"), b);
  EXPECT_EQ(loadError(dir.str()),
            dir.file("test_batch.bin") +
                ": record 2 has label 10 (CIFAR-10 labels are 0..9)");
}

TEST(Cifar10Reader, GzippedBatchesAreRead) {
  TempDir dir;
  writeCifarDir(dir.str());
  writeFile(dir.file("data_batch_1.bin"), gzipBytes(cifarRecords(2, 0)));
  DataSplit split;
  std::string error;
  ASSERT_TRUE(loadDataset("cifar10", dir.str(), split, error)) << error;
  expectRecords(split.train, 8, 0);
}

TEST(Cifar10Reader, NonRegularFilesAreNamedNotMissing) {
  TempDir dir;
  writeCifarDir(dir.str());
  std::filesystem::remove(dir.file("data_batch_3.bin"));
  std::filesystem::create_symlink("/dev/zero", dir.file("data_batch_3.bin"));
  EXPECT_EQ(loadError(dir.str()),
            dir.file("data_batch_3.bin") +
                ": is a character device (a symlink to /dev/zero), expected "
                "a regular file");
}
