//===- RunLock.cpp - One run at a time per output path --------------------===//

#include "runtime/trainer/RunLock.h"

#include "runtime/trainer/SaveTarget.h"
#include "runtime/trainer/Text.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tcc::rt {

std::string RunLock::lockPathFor(const std::string &path) {
  // Two spellings of one file (./a, a symlink to it, one that dangles
  // because the first checkpoint is not written yet) share one lock.
  std::string target = path;
  char link[4096];
  for (int hops = 0; hops < 8; ++hops) {
    ssize_t n = readlink(target.c_str(), link, sizeof link - 1);
    if (n <= 0)
      break;
    std::string next(link, static_cast<size_t>(n));
    target = next[0] == '/' ? next : parentDirectory(target) + "/" + next;
  }
  std::string real = target;
  if (char *resolvedDir = realpath(parentDirectory(target).c_str(), nullptr)) {
    size_t slash = target.find_last_of('/');
    real = std::string(resolvedDir) + "/" +
           (slash == std::string::npos ? target : target.substr(slash + 1));
    std::free(resolvedDir);
  }
  return real + ".lock";
}

bool RunLock::acquire(const std::string &path, const std::string &option,
                      std::string &error) {
  release();
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return true;
  const std::string name = lockPathFor(path);
  // Retry while the file we locked is no longer the one at `name`: its
  // holder removed it between our open and our flock.
  for (int attempt = 0; attempt < 100; ++attempt) {
    int f = open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (f < 0) {
      error = option + " " + oneLine(path) + ": cannot create its lock file '" +
              oneLine(name) + "': " + std::strerror(errno);
      return false;
    }
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
      char text[32] = {};
      ssize_t n = pread(f, text, sizeof text - 1, 0);
      close(f);
      long pid = n > 0 ? std::strtol(text, nullptr, 10) : 0;
      error = option + " " + oneLine(path) + " is in use by another run (" +
              (pid > 0 ? "pid " + std::to_string(pid) : std::string("pid unknown")) +
              ", which holds '" + oneLine(name) +
              "'): give this run another path, or wait for that one to end";
      return false;
    }
    struct stat held, now;
    if (fstat(f, &held) == 0 && stat(name.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      // Best effort: without the pid the lock still holds.
      std::string pid = std::to_string(getpid()) + "\n";
      if (ftruncate(f, 0) == 0)
        (void)!pwrite(f, pid.data(), pid.size(), 0);
      fd = f;
      lockPath = name;
      return true;
    }
    close(f);
  }
  error = option + " " + oneLine(path) + ": its lock file '" + oneLine(name) +
          "' keeps changing; is another run starting and ending on it?";
  return false;
}

void RunLock::release() {
  if (fd < 0)
    return;
  // Unlinked while still locked: a run that opened it meanwhile sees that
  // its file is gone and makes a new one (acquire).
  unlink(lockPath.c_str());
  close(fd);
  fd = -1;
  lockPath.clear();
}

} // namespace tcc::rt
