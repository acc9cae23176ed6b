//===- FileReader.cpp - Data files read front to back, gzip-aware ---------===//

#include "runtime/data/FileReader.h"

// A trainer built where zlib is missing (a source tree on a GPU machine:
// tcc compile --emit=source-tree) reads uncompressed files and says so
// for a gzip-compressed one.
#ifndef TCC_NO_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace tcc::rt::data {

namespace fs = std::filesystem;

bool isRegularFile(const std::string &path) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(path), ec);
}

bool isDirectory(const std::string &path) {
  std::error_code ec;
  return fs::is_directory(fs::path(path), ec);
}

bool pathExists(const std::string &path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string notRegularReason(const std::string &path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0)
    return "does not exist";
  std::string link;
  if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
    link = n > 0 ? std::string(target, static_cast<size_t>(n)) : "?";
    if (char *real = realpath(path.c_str(), nullptr)) {
      link = real;
      std::free(real);
    }
    if (stat(path.c_str(), &st) != 0)
      return "is a symlink to '" + link + "', which does not exist";
  }
  if (S_ISREG(st.st_mode))
    return "";
  const char *kind = S_ISDIR(st.st_mode)    ? "a directory"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  return std::string("is ") + kind +
         (link.empty() ? "" : " (a symlink to " + link + ")");
}

std::string notDirectoryReason(const std::string &dir) {
  if (!pathExists(dir))
    return "no such directory";
  std::string why = notRegularReason(dir);
  return (why.empty() ? "is a regular file" : why) + ", expected a directory";
}

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty())
    return name;
  if (dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

//===----------------------------------------------------------------------===//
// DataFile
//===----------------------------------------------------------------------===//

struct DataFile::Impl {
  std::string path;
  int fd = -1;
  uint64_t size = 0;
  bool gzip = false;
#ifndef TCC_NO_ZLIB
  z_stream zs;
  bool zInit = false;
#endif
  std::vector<uint8_t> in = std::vector<uint8_t>(1 << 16);
  bool inEof = false;
  bool done = false;     ///< the last gzip member ended
  uint64_t produced = 0; ///< data bytes handed out so far

  ~Impl() {
#ifndef TCC_NO_ZLIB
    if (zInit)
      inflateEnd(&zs);
#endif
    if (fd >= 0)
      close(fd);
  }

  bool fail(std::string &error, const std::string &message) {
    error = path + ": " + message;
    return false;
  }

#ifndef TCC_NO_ZLIB
  /// Appends file bytes after the unconsumed input.
  bool refill(std::string &error) {
    size_t left = zs.avail_in;
    if (left > 0 && zs.next_in != in.data())
      std::memmove(in.data(), zs.next_in, left);
    zs.next_in = in.data();
    for (;;) {
      ssize_t n = ::read(fd, in.data() + left, in.size() - left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return fail(error, std::string("read error: ") + std::strerror(errno));
      inEof = n == 0;
      zs.avail_in = static_cast<uInt>(left + static_cast<size_t>(n));
      return true;
    }
  }
#endif

  /// Reads up to `len` bytes into `dst`; `got` < `len` only at the end.
  bool fill(uint8_t *dst, size_t len, size_t &got, std::string &error) {
    got = 0;
    if (!gzip) {
      while (got < len) {
        ssize_t n = ::read(fd, dst + got, len - got);
        if (n < 0 && errno == EINTR)
          continue;
        if (n < 0)
          return fail(error,
                      std::string("read error: ") + std::strerror(errno));
        if (n == 0)
          break;
        got += static_cast<size_t>(n);
      }
      produced += got;
      return true;
    }
#ifndef TCC_NO_ZLIB
    while (got < len && !done) {
      if (zs.avail_in == 0 && !inEof && !refill(error))
        return false;
      zs.next_out = dst + got;
      zs.avail_out = static_cast<uInt>(std::min<size_t>(len - got, 1u << 30));
      uInt before = zs.avail_out;
      int rc = inflate(&zs, Z_NO_FLUSH);
      got += before - zs.avail_out;
      produced += before - zs.avail_out;
      if (rc == Z_OK)
        continue;
      if (rc == Z_STREAM_END) {
        // Another gzip member follows? (gzip -d concatenates them.)
        // Anything else after the stream is ignored, as gzip does.
        if (zs.avail_in < 2 && !inEof && !refill(error))
          return false;
        if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
          if (inflateReset(&zs) != Z_OK)
            return fail(error, "cannot reset zlib");
          continue;
        }
        done = true;
        break;
      }
      if (rc == Z_BUF_ERROR && zs.avail_in == 0 && !inEof)
        continue; // needs more input
      if (rc == Z_BUF_ERROR)
        return fail(error, "truncated gzip data (the stream ends after " +
                               std::to_string(produced) +
                               " decompressed bytes)");
      return fail(error, "corrupt gzip data (" +
                             (zs.msg ? std::string(zs.msg)
                                     : "zlib error " + std::to_string(rc)) +
                             ")");
    }
#endif
    return true;
  }
};

DataFile::DataFile() : impl(std::make_unique<Impl>()) {}
DataFile::~DataFile() = default;

bool DataFile::open(const std::string &path, std::string &error) {
  Impl &f = *impl;
  f.path = path;
  if (!pathExists(path))
    return f.fail(error, "no such file");
  if (std::string why = notRegularReason(path); !why.empty())
    return f.fail(error, why + ", expected a regular file");
  // O_NONBLOCK: a FIFO swapped in after the check must not block open().
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f.fd < 0)
    return f.fail(error, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return f.fail(error, "changed while being opened, expected a regular file");
  f.size = static_cast<uint64_t>(st.st_size);
  uint8_t magic[2];
  ssize_t n = pread(f.fd, magic, 2, 0);
  if (n < 0)
    return f.fail(error, std::string("read error: ") + std::strerror(errno));
  f.gzip = n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (f.gzip) {
#ifdef TCC_NO_ZLIB
    return f.fail(error, "is gzip-compressed, and this trainer was built without zlib; "
                         "decompress it (gunzip -k) and give the plain file");
#else
    std::memset(&f.zs, 0, sizeof f.zs);
    if (inflateInit2(&f.zs, 16 + MAX_WBITS) != Z_OK)
      return f.fail(error, "cannot initialise zlib");
    f.zInit = true;
#endif
  }
  return true;
}

bool DataFile::read(uint64_t n, std::vector<uint8_t> &out,
                    std::string &error) {
  // Grow step by step: `n` comes from a header and may be a lie.
  while (n > 0) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, 1u << 24));
    size_t base = out.size();
    out.resize(base + chunk);
    size_t got = 0;
    bool ok = impl->fill(out.data() + base, chunk, got, error);
    out.resize(base + got);
    if (!ok)
      return false;
    if (got < chunk)
      break;
    n -= got;
  }
  return true;
}

bool DataFile::hasMore(bool &more, std::string &error) {
  uint8_t byte;
  size_t got = 0;
  if (!impl->fill(&byte, 1, got, error))
    return false;
  more = got > 0;
  return true;
}

bool DataFile::isGzip() const { return impl->gzip; }
uint64_t DataFile::fileSize() const { return impl->size; }

uint64_t DataFile::maxDataSize() const {
  if (!impl->gzip)
    return impl->size;
  uint64_t bound;
  if (__builtin_mul_overflow(impl->size, uint64_t(1032), &bound))
    return UINT64_MAX;
  return bound + 1024;
}

bool readWholeFile(const std::string &path, std::vector<uint8_t> &out,
                   std::string &error) {
  out.clear();
  try {
    DataFile file;
    if (!file.open(path, error))
      return false;
    if (!file.isGzip())
      out.reserve(static_cast<size_t>(file.fileSize()));
    if (file.read(UINT64_MAX, out, error))
      return true;
  } catch (const std::bad_alloc &) {
    error = path + ": out of memory while reading the file";
  } catch (const std::exception &e) {
    error = path + ": cannot read: " + e.what();
  }
  out.clear();
  return false;
}

} // namespace tcc::rt::data
