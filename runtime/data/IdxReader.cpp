//===- IdxReader.cpp - MNIST-style IDX files ------------------------------===//
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

/// Reads and checks the magic and the dimensions that follow it into
/// `dims`; `what` is "image" or "label".
bool readHeader(DataFile &file, const std::string &path, uint32_t expected,
                const char *what, std::vector<uint64_t> &dims,
                std::string &error) {
  const size_t headerSize = 4 + 4 * (expected & 0xff);
  std::vector<uint8_t> bytes;
  if (!file.read(4, bytes, error))
    return false;
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
  if (!file.read(headerSize - 4, bytes, error))
    return false;
  if (bytes.size() < headerSize) {
    error = path + ": truncated: the IDX " + what + " header needs " +
            std::to_string(headerSize) + " bytes but the file holds " +
            std::to_string(bytes.size());
    return false;
  }
  dims.clear();
  for (size_t i = 4; i < headerSize; i += 4)
    dims.push_back(readBE32(bytes.data() + i));
  return true;
}

/// Reads exactly the `need` data bytes the header of `file` declares into
/// `out`, and not one byte further: the header fixes the size, so a
/// compressed file that holds more (a gzip bomb) is refused without being
/// inflated to its end. `declared` says what the header promises, `unit`
/// what the bytes are ("pixels", "labels").
bool readBody(DataFile &file, const std::string &path, uint64_t headerSize,
              uint64_t need, bool overflow, const std::string &declared,
              const char *unit, std::vector<uint8_t> &out,
              std::string &error) {
  const uint64_t room =
      file.maxDataSize() > headerSize ? file.maxDataSize() - headerSize : 0;
  if (overflow || need > room) {
    error = path + ": truncated: header says " + declared + " but the " +
            (file.isGzip() ? "gzip file of " + std::to_string(file.fileSize()) +
                                 " bytes can hold at most " +
                                 std::to_string(room)
                           : "file holds " + std::to_string(room)) +
            " bytes of " + unit;
    return false;
  }
  out.clear();
  if (!file.read(need, out, error))
    return false;
  if (out.size() < need) {
    error = path + ": truncated: header says " + declared +
            " but the file holds " + std::to_string(out.size()) +
            " bytes of " + unit;
    return false;
  }
  bool more = false;
  if (!file.hasMore(more, error))
    return false;
  if (more) {
    error = path + ": header says " + declared + " (" + std::to_string(need) +
            " bytes of " + unit + ") but the " +
            (file.isGzip()
                 ? std::string("decompressed file holds more data after them "
                               "(stopped reading there)")
                 : "file holds " +
                       std::to_string(file.fileSize() - headerSize) +
                       " bytes after the header");
    return false;
  }
  return true;
}

bool readImages(const std::string &path, Dataset &out, std::string &error) {
  DataFile file;
  std::vector<uint64_t> dims;
  if (!file.open(path, error) ||
      !readHeader(file, path, kImagesMagic, "image", dims, error))
    return false;
  const uint64_t n = dims[0], rows = dims[1], cols = dims[2];
  const std::string declared = std::to_string(n) + " images of " +
                               std::to_string(rows) + "x" +
                               std::to_string(cols);
  if (n == 0 || rows == 0 || cols == 0) {
    error = path + ": header says " + declared + " (an empty dataset)";
    return false;
  }
  // rows * cols < 2^64; the product with n may overflow.
  const uint64_t plane = rows * cols;
  const bool overflow = n > std::numeric_limits<uint64_t>::max() / plane;
  std::vector<uint8_t> pixels;
  if (!readBody(file, path, 16, overflow ? 0 : n * plane, overflow, declared,
                "pixels", pixels, error))
    return false;
  out.n = static_cast<int64_t>(n);
  out.c = 1;
  out.h = static_cast<int64_t>(rows);
  out.w = static_cast<int64_t>(cols);
  out.isFloat = false;
  out.f32.clear();
  out.u8 = std::move(pixels);
  return true;
}

bool readLabels(const std::string &path, std::vector<int64_t> &labels,
                std::string &error) {
  DataFile file;
  std::vector<uint64_t> dims;
  if (!file.open(path, error) ||
      !readHeader(file, path, kLabelsMagic, "label", dims, error))
    return false;
  const uint64_t n = dims[0];
  if (n == 0) {
    error = path + ": header says 0 labels (an empty dataset)";
    return false;
  }
  std::vector<uint8_t> bytes;
  if (!readBody(file, path, 8, n, false, std::to_string(n) + " labels",
                "labels", bytes, error))
    return false;
  // Labels are single bytes, so always < 256.
  labels.assign(bytes.begin(), bytes.end());
  return true;
}

const char *const kIdxFiles =
    "train-images-idx3-ubyte, train-labels-idx1-ubyte, "
    "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each optionally .gz";

bool findIdxFile(const std::string &dir, const std::string &name,
                 std::string &path, std::string &error) {
  // Anything at the name counts as found: opening it says what is wrong
  // with a symlink to /dev/zero, which is not "missing".
  for (const std::string &candidate :
       {joinPath(dir, name), joinPath(dir, name + ".gz")}) {
    if (pathExists(candidate)) {
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
    error = dir + ": " + notDirectoryReason(dir) + " (expected IDX files " +
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
