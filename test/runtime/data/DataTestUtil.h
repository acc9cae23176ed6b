//===- DataTestUtil.h - Helpers for the data-path tests ---------*- C++ -*-===//
#ifndef TCC_TEST_RUNTIME_DATA_DATATESTUTIL_H
#define TCC_TEST_RUNTIME_DATA_DATATESTUTIL_H

#include <zlib.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace tcc::rt::test {

using Bytes = std::vector<uint8_t>;

/// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
public:
  TempDir() {
    static std::atomic<int> counter{0};
    auto base = std::filesystem::temp_directory_path();
    for (;;) {
      path_ = base / ("tcc-data-test-" + std::to_string(::getpid()) + "-" +
                      std::to_string(counter++));
      if (std::filesystem::create_directory(path_))
        break;
    }
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  std::string str() const { return path_.string(); }
  std::string file(const std::string &name) const {
    return (path_ / name).string();
  }
  /// Makes a subdirectory and returns its path.
  std::string subdir(const std::string &name) const {
    std::filesystem::create_directories(path_ / name);
    return (path_ / name).string();
  }

private:
  std::filesystem::path path_;
};

inline void writeFile(const std::string &path, const Bytes &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

inline Bytes gzipBytes(const Bytes &in) {
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK)
    throw std::runtime_error("deflateInit2");
  Bytes out(deflateBound(&zs, static_cast<uLong>(in.size())) + 64);
  zs.next_in = const_cast<Bytef *>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
    throw std::runtime_error("deflate");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline void putBE32(Bytes &b, uint32_t v) {
  b.push_back(uint8_t(v >> 24));
  b.push_back(uint8_t(v >> 16));
  b.push_back(uint8_t(v >> 8));
  b.push_back(uint8_t(v));
}

/// Pixel (i, y, x) of the synthetic images.
inline uint8_t synthPixel(int64_t i, int64_t y, int64_t x) {
  return uint8_t(i * 37 + y * 11 + x * 3 + 1);
}

inline Bytes idxImages(uint32_t n, uint32_t rows, uint32_t cols,
                       uint32_t magic = 0x00000803) {
  Bytes b;
  putBE32(b, magic);
  putBE32(b, n);
  putBE32(b, rows);
  putBE32(b, cols);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t y = 0; y < rows; ++y)
      for (uint32_t x = 0; x < cols; ++x)
        b.push_back(synthPixel(i, y, x));
  return b;
}

inline uint8_t synthLabel(int64_t i) { return uint8_t((i * 7 + 3) % 10); }

inline Bytes idxLabels(uint32_t n, uint32_t magic = 0x00000801) {
  Bytes b;
  putBE32(b, magic);
  putBE32(b, n);
  for (uint32_t i = 0; i < n; ++i)
    b.push_back(synthLabel(i));
  return b;
}

/// CIFAR-10 records: label of record r is (first + r) % 10, pixels
/// derived from (first + r).
inline Bytes cifarRecords(int records, int first) {
  Bytes b;
  for (int r = 0; r < records; ++r) {
    int id = first + r;
    b.push_back(uint8_t(id % 10));
    for (int p = 0; p < 3072; ++p)
      b.push_back(uint8_t(id * 13 + p * 7));
  }
  return b;
}

/// An .npy file: the given header dict text, padded as numpy pads it.
inline Bytes npyFile(const std::string &dict, const Bytes &data,
                     int major = 1) {
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  const size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  const size_t len = header.size();
  b.push_back(uint8_t(len));
  b.push_back(uint8_t(len >> 8));
  if (major != 1) {
    b.push_back(uint8_t(len >> 16));
    b.push_back(uint8_t(len >> 24));
  }
  b.insert(b.end(), header.begin(), header.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

inline std::string npyDict(const std::string &descr, const std::string &shape,
                           bool fortran = false) {
  return "{'descr': '" + descr +
         "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

template <typename T> Bytes rawBytes(const std::vector<T> &values) {
  Bytes b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

} // namespace tcc::rt::test

#endif // TCC_TEST_RUNTIME_DATA_DATATESTUTIL_H
