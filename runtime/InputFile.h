//===- InputFile.h - Read an input file that cannot block or flood -*- C++ -*-===//
//
// Shared by the compiler (tuning files) and the trainer (checkpoints): only a
// regular file is read, checked with stat before it is opened and opened
// O_NONBLOCK (a FIFO swapped in between must not block open()), and never
// more than the caller's limit for its kind (docs/reliability.md lists them).
// A path such as /dev/zero, a FIFO or a 300 MB file ends in one error line
// at once instead of reading until memory runs out or waiting forever.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_INPUTFILE_H
#define TCC_RUNTIME_INPUTFILE_H

#include <cstdint>
#include <string>

namespace tcc {

/// tcc compile --tuning-db: 'tcc tune' writes about 150 KB for all the
/// examples together.
constexpr uint64_t kMaxTuningFileBytes = 64ull << 20;

/// Reads the regular file `path` into `out`. `kind` names it in errors
/// ("tuning file"), `maxBytes` is the limit for that kind. Nothing in it
/// waits, so a signal is handled as anywhere else. On failure returns false
/// with `error` one line naming the file:
///   "cannot read 'PATH' (tuning file): it is a FIFO, not a regular file"
bool readInputFile(const std::string &path, const char *kind, uint64_t maxBytes,
                   std::string &out, std::string &error);

/// Why `path` cannot be read as an input file without opening it ("it is a
/// directory", "it is a FIFO, not a regular file", strerror's text), or ""
/// when it is a regular file.
std::string notRegularInput(const std::string &path);

/// "12 MiB", "300 KiB": a limit as the documentation states it.
std::string byteSizeText(uint64_t bytes);

} // namespace tcc

#endif // TCC_RUNTIME_INPUTFILE_H
