//===- FileReader.cpp - Whole-file reads, gzip-aware ----------------------===//

#include "runtime/data/FileReader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

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

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty())
    return name;
  if (dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

namespace {

bool readRaw(const std::string &path, std::vector<uint8_t> &out,
             std::string &error) {
  std::error_code ec;
  fs::file_status st = fs::status(fs::path(path), ec);
  if (ec || !fs::exists(st)) {
    error = path + ": no such file";
    return false;
  }
  if (fs::is_directory(st)) {
    error = path + ": is a directory, expected a file";
    return false;
  }
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  out.clear();
  // Size hint for regular files; reading to EOF is what counts.
  if (fs::is_regular_file(st)) {
    uintmax_t size = fs::file_size(fs::path(path), ec);
    if (!ec && size < std::numeric_limits<size_t>::max() / 2)
      out.reserve(static_cast<size_t>(size));
  }
  uint8_t chunk[1 << 16];
  for (;;) {
    size_t got = std::fread(chunk, 1, sizeof chunk, f);
    out.insert(out.end(), chunk, chunk + got);
    if (got < sizeof chunk) {
      if (std::ferror(f)) {
        error = path + ": read error: " + std::strerror(errno);
        std::fclose(f);
        return false;
      }
      break;
    }
  }
  std::fclose(f);
  return true;
}

bool gunzip(const std::string &path, const std::vector<uint8_t> &in,
            std::vector<uint8_t> &out, std::string &error) {
  out.clear();
  // The last member's trailer holds its size mod 2^32: a fine first guess.
  if (in.size() >= 18) {
    const uint8_t *t = in.data() + in.size() - 4;
    uint32_t isize = uint32_t(t[0]) | uint32_t(t[1]) << 8 |
                     uint32_t(t[2]) << 16 | uint32_t(t[3]) << 24;
    if (isize > in.size())
      out.reserve(isize);
  }
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    error = path + ": cannot initialise zlib";
    return false;
  }
  size_t inPos = 0;
  uint8_t chunk[1 << 16];
  bool ok = true;
  for (;;) {
    // avail_in is 32-bit: feed at most 1 GiB at a time.
    size_t feed = std::min<size_t>(in.size() - inPos, size_t(1) << 30);
    zs.next_in = const_cast<Bytef *>(in.data() + inPos);
    zs.avail_in = static_cast<uInt>(feed);
    zs.next_out = chunk;
    zs.avail_out = sizeof chunk;
    int rc = inflate(&zs, Z_NO_FLUSH);
    size_t consumed = feed - zs.avail_in;
    inPos += consumed;
    size_t produced = sizeof chunk - zs.avail_out;
    out.insert(out.end(), chunk, chunk + produced);
    if (rc == Z_STREAM_END) {
      // Another gzip member follows? (gzip -d concatenates them.) Anything
      // else after the stream is ignored, as gzip does.
      if (in.size() - inPos >= 2 && in[inPos] == 0x1f &&
          in[inPos + 1] == 0x8b) {
        if (inflateReset(&zs) != Z_OK) {
          error = path + ": cannot reset zlib";
          ok = false;
          break;
        }
        continue;
      }
      break;
    }
    if (rc == Z_OK)
      continue;
    if (rc == Z_BUF_ERROR) { // no progress possible: the input ran out
      error = path + ": truncated gzip data (the stream ends after " +
              std::to_string(out.size()) + " decompressed bytes)";
      ok = false;
      break;
    }
    error =
        path + ": corrupt gzip data (" +
        (zs.msg ? std::string(zs.msg) : "zlib error " + std::to_string(rc)) +
        ")";
    ok = false;
    break;
  }
  inflateEnd(&zs);
  return ok;
}

} // namespace

bool readWholeFile(const std::string &path, std::vector<uint8_t> &out,
                   std::string &error) {
  try {
    std::vector<uint8_t> raw;
    if (!readRaw(path, raw, error))
      return false;
    if (raw.size() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b)
      return gunzip(path, raw, out, error);
    out = std::move(raw);
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
