//===- FileReader.h - Data files read front to back, gzip-aware -*- C++ -*-===//
//
// Internal to the data path (and the trainer's --save checks, which use
// notRegularReason). A file is gzip if it starts with 1f 8b (whatever
// its name); it is then inflated as it is read (concatenated gzip members
// included). Readers whose header declares the data size read exactly that
// much through DataFile, so a gzip bomb is never inflated past what the
// header promises.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_DATA_FILEREADER_H
#define TCC_RUNTIME_DATA_FILEREADER_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tcc::rt::data {

/// One data file, read sequentially and inflated on the fly when it is gzip.
/// Every error is one line starting with the path.
class DataFile {
public:
  DataFile();
  ~DataFile();
  DataFile(const DataFile &) = delete;
  DataFile &operator=(const DataFile &) = delete;

  /// Opens `path`, which must be a regular file after symlinks: /dev/zero, a
  /// FIFO or a directory would never end or is not data.
  bool open(const std::string &path, std::string &error);

  /// Appends up to `n` more bytes of data to `out`; fewer only where the
  /// data ends. False on a read error or corrupt/truncated gzip.
  bool read(uint64_t n, std::vector<uint8_t> &out, std::string &error);

  /// Sets `more` to whether any data follows what was read (reads at most
  /// one more byte).
  bool hasMore(bool &more, std::string &error);

  bool isGzip() const;
  /// The file's size on disk.
  uint64_t fileSize() const;
  /// The most data the file can hold: its size, or for gzip the size times
  /// deflate's largest ratio (1032:1), so a header that promises more is
  /// known to be wrong before anything is allocated.
  uint64_t maxDataSize() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Reads all of `path` into `out`, inflating it when it is gzip. On failure
/// returns false with `error` one line starting with the path.
bool readWholeFile(const std::string &path, std::vector<uint8_t> &out,
                   std::string &error);

/// True when `path` names a regular file (following symlinks).
bool isRegularFile(const std::string &path);

/// True when `path` names a directory (following symlinks).
bool isDirectory(const std::string &path);

/// True when something is at `path` (a dangling symlink included).
bool pathExists(const std::string &path);

/// Why `path` is not a regular file, e.g. "is a character device (a symlink
/// to /dev/zero)", "is a directory", "is a symlink to 'x', which does not
/// exist"; empty when it is one.
std::string notRegularReason(const std::string &path);

/// Why `dir` cannot be a data directory: "no such directory", or e.g. "is
/// a regular file, expected a directory".
std::string notDirectoryReason(const std::string &dir);

/// `dir` + "/" + `name` (no separator added when `dir` ends with one).
std::string joinPath(const std::string &dir, const std::string &name);

} // namespace tcc::rt::data

#endif // TCC_RUNTIME_DATA_FILEREADER_H
