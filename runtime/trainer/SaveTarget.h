//===- SaveTarget.h - Where checkpoints go, checked up front --*- C++ -*-===//
//
// A trained state must not be lost to a typo or a full disk found after
// hours of training. Before the first step the trainer checks --save (its
// directory exists and is writable, it is not a directory or a device such
// as /dev/full, and its file system has room for the checkpoint) and
// --metrics (writable, not a directory). When the final write fails anyway
// (the disk filled up during training), the state goes to a fallback path
// ($TMPDIR, then the current directory) that the error names.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_SAVETARGET_H
#define TCC_RUNTIME_TRAINER_SAVETARGET_H

#include "runtime/CompiledModel.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tcc::rt {

/// Bytes an unprivileged writer may still write in directory `dir`; nullopt
/// when unknown.
using FreeSpaceFn =
    std::function<std::optional<uint64_t>(const std::string &dir)>;

/// statvfs(dir): f_bavail * f_frsize.
std::optional<uint64_t> freeSpace(const std::string &dir);

/// The directory holding `path`: "." for a bare name, "/" for "/x".
std::string parentDirectory(const std::string &path);

/// At least the size of the .safetensors file saveCheckpoint writes for
/// `info` (data, the added num_batches_tracked scalars, a generous header).
uint64_t checkpointSizeBound(const ModelInfo &info);

/// --save PATH, before training: false with `error` one line ("--save PATH:
/// ...") when a checkpoint of `bytes` bytes cannot be written there.
bool checkSaveTarget(const std::string &path, uint64_t bytes,
                     const FreeSpaceFn &free, std::string &error);

/// --metrics PATH, before training: its directory exists and is writable
/// and PATH is no directory (a FIFO or /dev/stdout is fine: lines are
/// appended). Never creates or truncates the file.
bool checkMetricsTarget(const std::string &path, std::string &error);

/// --profile PATH, before training: as --metrics (the file is written at the
/// end of the run, atomically).
bool checkProfileTarget(const std::string &path, std::string &error);

/// Where a run interrupted without --save saves its state:
/// "<model name>.interrupted.safetensors" in the current directory.
std::string interruptedSavePath(const std::string &modelName);

/// Where the state goes when writing the requested file fails, in order:
/// "$TMPDIR/<model name>.rescued-<pid>.safetensors" (TMPDIR unset: /tmp),
/// then the same name in the current directory.
std::vector<std::string> fallbackSavePaths(const std::string &modelName);

/// `text` quoted for a POSIX shell when it needs quoting.
std::string shellQuote(const std::string &text);

/// "12.3 MB" (decimal units).
std::string byteText(uint64_t bytes);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_SAVETARGET_H
