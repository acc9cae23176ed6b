//===- AtomicFile.h - Write a file so it is never half-written --*- C++ -*-===//
//
// Shared by the compiler (its outputs) and the trainer (checkpoints): write
// to a temporary file beside the target, flush it to disk, then rename it
// over the target. A crash leaves either the old file or the new one.
//
// The temporary file is named "<target>.tmp.<pid>.XXXXXX" (pid of the
// writer, six random characters). A writer killed with SIGKILL leaves it
// behind; the next write to the same target removes every such file whose
// writer no longer runs.
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

/// Removes the temporary files that writes to `path` left behind: names
/// "<path>.tmp.<pid>.XXXXXX" whose process <pid> no longer exists (never
/// another live writer's, never a file of another pattern). Returns how many
/// were removed.
int removeStaleTemporaries(const std::string &path);

} // namespace tcc

#endif // TCC_RUNTIME_ATOMICFILE_H
