//===- AtomicFile.h - Write a file so it is never half-written --*- C++ -*-===//
//
// Shared by the compiler (its outputs) and the trainer (checkpoints): write
// to a temporary file beside the target, flush it to disk, then rename it
// over the target. A crash leaves either the old file or the new one.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_ATOMICFILE_H
#define TCC_RUNTIME_ATOMICFILE_H

#include <string>
#include <string_view>

namespace tcc {

/// Replaces `path` with `contents` atomically. On failure returns false,
/// leaves `path` untouched and sets `error` to one line naming the file.
bool writeFileAtomically(const std::string &path, std::string_view contents,
                         std::string &error);

} // namespace tcc

#endif // TCC_RUNTIME_ATOMICFILE_H
