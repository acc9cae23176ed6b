//===- IdxReader.cpp - MNIST-style IDX files
//-------------------------------===//
//
// An IDX file is a big-endian header, magic 0x000008NN (type 0x08: unsigned
// bytes, NN dimensions), NN 32-bit dimensions, then the data. Images are
// 0x00000803 [n, rows, cols]; labels are 0x00000801 [n].
//
//===----------------------------------------------------------------------===//

#include "runtime/data/FileReader.h"
#include "runtime/data/Readers.h"

#include <cstdio>
#include <limits>

namespace tcc::rt::data {

namespace {

constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;

uint32_t readBE32(const uint8_t *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 |
         uint32_t(p[3]);
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

/// Checks the magic and that the header fits; `what` is "image" or "label".
bool checkHeader(const std::string &path, const std::vector<uint8_t> &bytes,
                 uint32_t expected, const char *what, std::string &error) {
  const size_t headerSize = 4 + 4 * (expected & 0xff);
  if (bytes.size() < 4) {
    error = path + ": not an IDX " + what + " file (" +
            std::to_string(bytes.size()) + " bytes, too short for a header)";
    return false;
  }
  uint32_t magic = readBE32(bytes.data());
  if (magic != expected) {
    error = path + ": not an IDX " + what + " file (magic " + hex32(magic) +
            ", expected " + hex32(expected) + ")";
    return false;
  }
  if (bytes.size() < headerSize) {
    error = path + ": truncated: the IDX " + what + " header needs " +
            std::to_string(headerSize) + " bytes but the file holds " +
            std::to_string(bytes.size());
    return false;
  }
  return true;
}

bool readImages(const std::string &path, Dataset &out, std::string &error) {
  std::vector<uint8_t> bytes;
  if (!readWholeFile(path, bytes, error))
    return false;
  if (!checkHeader(path, bytes, kImagesMagic, "image", error))
    return false;
  const uint64_t n = readBE32(bytes.data() + 4);
  const uint64_t rows = readBE32(bytes.data() + 8);
  const uint64_t cols = readBE32(bytes.data() + 12);
  const std::string dims = std::to_string(n) + " images of " +
                           std::to_string(rows) + "x" + std::to_string(cols);
  if (n == 0 || rows == 0 || cols == 0) {
    error = path + ": header says " + dims + " (an empty dataset)";
    return false;
  }
  // rows * cols < 2^64; the product with n may overflow.
  const uint64_t plane = rows * cols;
  const uint64_t held = bytes.size() - 16;
  if (n > std::numeric_limits<uint64_t>::max() / plane || n * plane > held) {
    error = path + ": truncated: header says " + dims + " but the file holds " +
            std::to_string(held) + " bytes of pixels";
    return false;
  }
  const uint64_t need = n * plane;
  if (held != need) {
    error = path + ": header says " + dims + " (" + std::to_string(need) +
            " bytes of pixels) but the file holds " + std::to_string(held) +
            " bytes after the header";
    return false;
  }
  bytes.erase(bytes.begin(), bytes.begin() + 16);
  out.n = static_cast<int64_t>(n);
  out.c = 1;
  out.h = static_cast<int64_t>(rows);
  out.w = static_cast<int64_t>(cols);
  out.isFloat = false;
  out.f32.clear();
  out.u8 = std::move(bytes);
  return true;
}

bool readLabels(const std::string &path, std::vector<int64_t> &labels,
                std::string &error) {
  std::vector<uint8_t> bytes;
  if (!readWholeFile(path, bytes, error))
    return false;
  if (!checkHeader(path, bytes, kLabelsMagic, "label", error))
    return false;
  const uint64_t n = readBE32(bytes.data() + 4);
  const uint64_t held = bytes.size() - 8;
  if (n == 0) {
    error = path + ": header says 0 labels (an empty dataset)";
    return false;
  }
  if (held < n) {
    error = path + ": truncated: header says " + std::to_string(n) +
            " labels but the file holds " + std::to_string(held) +
            " bytes of labels";
    return false;
  }
  if (held > n) {
    error = path + ": header says " + std::to_string(n) +
            " labels but the file holds " + std::to_string(held) +
            " bytes after the header";
    return false;
  }
  // Labels are single bytes, so always < 256.
  labels.assign(bytes.begin() + 8, bytes.end());
  return true;
}

const char *const kIdxFiles =
    "train-images-idx3-ubyte, train-labels-idx1-ubyte, "
    "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each optionally .gz";

bool findIdxFile(const std::string &dir, const std::string &name,
                 std::string &path, std::string &error) {
  for (const std::string &candidate :
       {joinPath(dir, name), joinPath(dir, name + ".gz")}) {
    if (isRegularFile(candidate)) {
      path = candidate;
      return true;
    }
  }
  error = dir + ": " + name + " is missing (looked for " + name + " and " +
          name + ".gz; expected IDX files " + kIdxFiles + ")";
  return false;
}

} // namespace

bool loadIdxPair(const std::string &imagesPath, const std::string &labelsPath,
                 Dataset &out, std::string &error) {
  Dataset d;
  if (!readImages(imagesPath, d, error) ||
      !readLabels(labelsPath, d.labels, error))
    return false;
  if (static_cast<int64_t>(d.labels.size()) != d.n) {
    error = labelsPath + ": holds " + std::to_string(d.labels.size()) +
            " labels but " + imagesPath + " holds " + std::to_string(d.n) +
            " images";
    return false;
  }
  out = std::move(d);
  return true;
}

bool loadIdx(const std::string &dir, DataSplit &out, std::string &error) {
  if (!isDirectory(dir)) {
    error = dir + ": no such directory (expected IDX files " +
            std::string(kIdxFiles) + ")";
    return false;
  }
  std::string trainImages, trainLabels, testImages, testLabels;
  if (!findIdxFile(dir, "train-images-idx3-ubyte", trainImages, error) ||
      !findIdxFile(dir, "train-labels-idx1-ubyte", trainLabels, error) ||
      !findIdxFile(dir, "t10k-images-idx3-ubyte", testImages, error) ||
      !findIdxFile(dir, "t10k-labels-idx1-ubyte", testLabels, error))
    return false;
  DataSplit split;
  if (!loadIdxPair(trainImages, trainLabels, split.train, error) ||
      !loadIdxPair(testImages, testLabels, split.test, error))
    return false;
  if (split.train.h != split.test.h || split.train.w != split.test.w) {
    error = testImages + ": images are " + std::to_string(split.test.h) + "x" +
            std::to_string(split.test.w) + " but " + trainImages + " holds " +
            std::to_string(split.train.h) + "x" + std::to_string(split.train.w);
    return false;
  }
  out = std::move(split);
  return true;
}

} // namespace tcc::rt::data
