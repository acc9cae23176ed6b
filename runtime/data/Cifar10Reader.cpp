//===- Cifar10Reader.cpp - CIFAR-10 binary batches ------------------------===//
//
// Each record is 1 label byte (0..9) and 3072 pixel bytes: the 32x32 red
// plane, then green, then blue (row-major), i.e. [3, 32, 32].
//
//===----------------------------------------------------------------------===//

#include "runtime/data/FileReader.h"
#include "runtime/data/Readers.h"

#include <algorithm>

namespace tcc::rt::data {

namespace {

constexpr int64_t kRecordPixels = 3 * 32 * 32;
constexpr int64_t kRecordBytes = 1 + kRecordPixels;
constexpr int kClasses = 10;

const char *const kExpected = "(expected CIFAR-10 binary batches: "
                              "data_batch_1.bin..data_batch_5.bin, "
                              "test_batch.bin)";

} // namespace

bool loadCifar10Files(const std::vector<std::string> &paths, Dataset &out,
                      std::string &error) {
  Dataset d;
  d.c = 3;
  d.h = 32;
  d.w = 32;
  d.isFloat = false;
  std::vector<uint8_t> bytes;
  for (const std::string &path : paths) {
    if (!readWholeFile(path, bytes, error))
      return false;
    const int64_t size = static_cast<int64_t>(bytes.size());
    if (size == 0) {
      error = path + ": empty file (a CIFAR-10 batch holds records of 3073 "
                     "bytes: 1 label byte + 3072 pixel bytes)";
      return false;
    }
    if (size % kRecordBytes != 0) {
      error = path + ": size " + std::to_string(size) +
              " bytes is not a multiple of 3073 (1 label byte + 3072 pixel "
              "bytes per CIFAR-10 record)";
      return false;
    }
    const int64_t records = size / kRecordBytes;
    const size_t base = d.u8.size();
    d.u8.resize(base + static_cast<size_t>(records * kRecordPixels));
    d.labels.reserve(d.labels.size() + static_cast<size_t>(records));
    for (int64_t r = 0; r < records; ++r) {
      const uint8_t *rec = bytes.data() + r * kRecordBytes;
      if (rec[0] >= kClasses) {
        error = path + ": record " + std::to_string(r) + " has label " +
                std::to_string(rec[0]) + " (CIFAR-10 labels are 0..9)";
        return false;
      }
      d.labels.push_back(rec[0]);
      std::copy(rec + 1, rec + kRecordBytes,
                d.u8.begin() +
                    static_cast<std::ptrdiff_t>(base + r * kRecordPixels));
    }
    d.n += records;
  }
  if (d.n == 0) {
    error = "no CIFAR-10 batch files given";
    return false;
  }
  out = std::move(d);
  return true;
}

bool loadCifar10(const std::string &path, DataSplit &out, std::string &error) {
  if (!isDirectory(path)) {
    error = path + ": " + notDirectoryReason(path) + " " + kExpected;
    return false;
  }
  // Accept the directory that holds the extracted archive as well.
  std::string dir = path;
  if (!isRegularFile(joinPath(dir, "data_batch_1.bin")) &&
      isRegularFile(
          joinPath(joinPath(dir, "cifar-10-batches-bin"), "data_batch_1.bin")))
    dir = joinPath(dir, "cifar-10-batches-bin");
  const char *const names[] = {"data_batch_1.bin", "data_batch_2.bin",
                               "data_batch_3.bin", "data_batch_4.bin",
                               "data_batch_5.bin", "test_batch.bin"};
  std::vector<std::string> train;
  for (const char *name : names) {
    std::string file = joinPath(dir, name);
    // Anything there counts as found: reading it says what is wrong with,
    // say, a symlink to /dev/zero.
    if (!pathExists(file)) {
      error = dir + ": " + name + " is missing " + kExpected;
      return false;
    }
    train.push_back(file);
  }
  std::vector<std::string> test = {train.back()};
  train.pop_back();
  DataSplit split;
  if (!loadCifar10Files(train, split.train, error) ||
      !loadCifar10Files(test, split.test, error))
    return false;
  out = std::move(split);
  return true;
}

} // namespace tcc::rt::data
