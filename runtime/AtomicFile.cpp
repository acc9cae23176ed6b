//===- AtomicFile.cpp - Write a file so it is never half-written ----------===//

#include "runtime/AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

/// Writes `contents` straight into an existing non-regular file (/dev/null,
/// a FIFO, a terminal): renaming over such a file would replace it.
bool writeInPlace(const std::string &path, std::string_view contents,
                  std::string &error) {
  int fd = open(path.c_str(), O_WRONLY);
  if (fd < 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  const char *data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = write(fd, data, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = "cannot write '" + path + "': " + std::strerror(errno);
      close(fd);
      return false;
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  close(fd);
  return true;
}

std::string parentOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "."
         : slash == 0               ? "/"
                                    : path.substr(0, slash);
}

/// Flushes a rename in `dir` to disk; best effort (some file systems refuse
/// fsync on a directory, and the data itself is already safe).
void syncDirectory(const std::string &dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

/// The pid in "<pid>.XXXXXX" (the part after "<target>.tmp."), or -1.
long tempOwner(const char *rest) {
  long pid = 0;
  const char *p = rest;
  for (; *p >= '0' && *p <= '9'; ++p) {
    pid = pid * 10 + (*p - '0');
    if (pid > 1L << 31)
      return -1;
  }
  if (p == rest || *p != '.' || std::strlen(p + 1) != 6)
    return -1;
  for (const char *c = p + 1; *c; ++c)
    if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
          (*c >= 'A' && *c <= 'Z')))
      return -1;
  return pid;
}

} // namespace

int tcc::removeStaleTemporaries(const std::string &path) {
  const std::string dir = parentOf(path);
  const size_t slash = path.find_last_of('/');
  const std::string prefix =
      (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp.";
  DIR *d = opendir(dir.c_str());
  if (!d)
    return 0;
  int removed = 0;
  while (dirent *e = readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) != 0)
      continue;
    long pid = tempOwner(e->d_name + prefix.size());
    // kill(pid, 0) fails with ESRCH only when no such process exists; a
    // live writer (or one we may not signal: EPERM) keeps its file.
    if (pid <= 0 || pid == getpid() || kill(static_cast<pid_t>(pid), 0) == 0 ||
        errno != ESRCH)
      continue;
    std::string name = dir + "/" + e->d_name;
    struct stat st;
    if (lstat(name.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        unlink(name.c_str()) == 0)
      ++removed;
  }
  closedir(d);
  return removed;
}

bool tcc::writeFileAtomically(const std::string &requested,
                              std::string_view contents, std::string &error) {
  // Through a symlink, replace the file it points to, not the link.
  std::string path = requested;
  if (char *real = realpath(requested.c_str(), nullptr)) {
    path = real;
    free(real);
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      error = "cannot write '" + requested + "': it is a directory";
      return false;
    }
    return writeInPlace(path, contents, error);
  }
  removeStaleTemporaries(path);
  std::string temp = path + ".tmp." + std::to_string(getpid()) + ".XXXXXX";
  int fd = mkstemp(temp.data());
  if (fd < 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  auto cleanup = [&](const char *what) {
    error = "cannot write '" + path + "' (" + what + "): " + std::strerror(errno);
    close(fd);
    unlink(temp.c_str());
    return false;
  };
  const char *data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return cleanup("write");
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  // mkstemp creates 0600; outputs get the usual umask-governed permissions.
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0 || fsync(fd) != 0)
    return cleanup("sync");
  if (close(fd) != 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    unlink(temp.c_str());
    return false;
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    unlink(temp.c_str());
    return false;
  }
  syncDirectory(parentOf(path));
  return true;
}
