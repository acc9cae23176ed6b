//===- InputFile.cpp - Read an input file that cannot block or flood ------===//

#include "runtime/InputFile.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

std::string kindOf(mode_t mode) {
  return S_ISDIR(mode)    ? "it is a directory"
         : S_ISCHR(mode)  ? "it is a character device, not a regular file"
         : S_ISBLK(mode)  ? "it is a block device, not a regular file"
         : S_ISFIFO(mode) ? "it is a FIFO, not a regular file"
         : S_ISSOCK(mode) ? "it is a socket, not a regular file"
                          : "it is not a regular file";
}

} // namespace

std::string tcc::byteSizeText(uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1ull << 20))
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

std::string tcc::notRegularInput(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return std::strerror(errno);
  if (S_ISREG(st.st_mode))
    return "";
  std::string why = kindOf(st.st_mode);
  if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    if (char *real = realpath(path.c_str(), nullptr)) {
      why += std::string(" (a symlink to ") + real + ")";
      std::free(real);
    }
  return why;
}

bool tcc::readInputFile(const std::string &path, const char *kind, uint64_t maxBytes,
                        std::string &out, std::string &error) {
  auto fail = [&](const std::string &why) {
    error = "cannot read '" + path + "' (" + kind + "): " + why;
    return false;
  };
  // stat first: open() itself may block (a FIFO without a writer) or have
  // side effects (a tape, a terminal).
  if (std::string why = notRegularInput(path); !why.empty())
    return fail(why);
  struct Fd {
    int fd;
    ~Fd() {
      if (fd >= 0)
        close(fd);
    }
  } file{open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0)
    return fail(std::strerror(errno));
  // The path may have been replaced between stat and open.
  struct stat st;
  if (fstat(file.fd, &st) != 0)
    return fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail(kindOf(st.st_mode));
  const std::string tooLarge = "it is larger than " + byteSizeText(maxBytes) + ", the limit for " +
                               kind + "s (docs/reliability.md)";
  if (static_cast<uint64_t>(st.st_size) > maxBytes)
    return fail(tooLarge);
  out.clear();
  out.reserve(static_cast<size_t>(st.st_size));
  // A file that grows while it is read stops one chunk past the limit.
  char buffer[1 << 16];
  while (out.size() <= maxBytes) {
    ssize_t n = read(file.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail(std::strerror(errno));
    if (n == 0)
      return true;
    out.append(buffer, static_cast<size_t>(n));
  }
  out.clear();
  return fail(tooLarge);
}
