//===- RunLock.h - One run at a time per output path ----------*- C++ -*-===//
//
// Two runs given the same --save (or --metrics) path would overwrite each
// other's checkpoints (the last rename wins) and interleave their metrics.
// A run holds an advisory lock (flock) on "<path>.lock" from before its
// first step to its end; a second run is refused with one line naming the
// first one's pid, which the lock file holds. The checkpoint itself cannot
// carry the lock: every save renames a new file over it. The lock file is
// removed when the run ends; one left by a killed run is taken over (the
// kernel drops a dead process's locks).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_RUNLOCK_H
#define TCC_RUNTIME_TRAINER_RUNLOCK_H

#include <string>

namespace tcc::rt {

class RunLock {
public:
  RunLock() = default;
  RunLock(const RunLock &) = delete;
  RunLock &operator=(const RunLock &) = delete;
  ~RunLock() { release(); }

  /// Locks `path` for this process; `option` names it in errors
  /// ("--save"). A path that is not a regular file (/dev/stdout, a FIFO)
  /// is not locked. False with `error` one line when another process holds
  /// it or the lock file cannot be created.
  bool acquire(const std::string &path, const std::string &option, std::string &error);

  /// Removes the lock file and drops the lock (also done on destruction).
  void release();

  /// "<path>.lock" for `path`, through symlinks: the file the lock is on.
  static std::string lockPathFor(const std::string &path);

private:
  int fd = -1;
  std::string lockPath;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_RUNLOCK_H
