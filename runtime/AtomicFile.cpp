//===- AtomicFile.cpp - Write a file so it is never half-written ----------===//

#include "runtime/AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
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

} // namespace

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
  std::string temp = path + ".tmp.XXXXXX";
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
  return true;
}
