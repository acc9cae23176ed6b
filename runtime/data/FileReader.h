//===- FileReader.h - Whole-file reads, gzip-aware -------------*- C++ -*-===//
//
// Internal to the data path. A file is gzip if it starts with 1f 8b (whatever
// its name); it is then inflated (concatenated gzip members included).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_DATA_FILEREADER_H
#define TCC_RUNTIME_DATA_FILEREADER_H

#include <cstdint>
#include <string>
#include <vector>

namespace tcc::rt::data {

/// Reads all of `path` into `out`, inflating it when it is gzip. On failure
/// returns false with `error` one line starting with the path.
bool readWholeFile(const std::string &path, std::vector<uint8_t> &out,
                   std::string &error);

/// True when `path` names a regular file (following symlinks).
bool isRegularFile(const std::string &path);

/// True when `path` names a directory (following symlinks).
bool isDirectory(const std::string &path);

/// `dir` + "/" + `name` (no separator added when `dir` ends with one).
std::string joinPath(const std::string &dir, const std::string &name);

} // namespace tcc::rt::data

#endif // TCC_RUNTIME_DATA_FILEREADER_H
