//===- SaveTarget.cpp - Where checkpoints go, checked up front -------------===//

#include "runtime/trainer/SaveTarget.h"

#include "runtime/data/FileReader.h"
#include "runtime/trainer/Text.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace tcc::rt {

namespace {

/// The checks --save and --metrics share: PATH is no directory, and its
/// directory exists and may be written.
bool checkWritable(const std::string &option, const std::string &path,
                   std::string &error) {
  const std::string what = option + " " + oneLine(path) + ": ";
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    error = what + "is a directory";
    return false;
  }
  std::string parent = parentDirectory(path);
  if (stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = what + "directory '" + oneLine(parent) + "' does not exist";
    return false;
  }
  if (access(parent.c_str(), W_OK | X_OK) != 0) {
    error = what + "cannot write in directory '" + oneLine(parent) +
            "': " + std::strerror(errno);
    return false;
  }
  return true;
}

/// The model name as a file name: no '/', never "", "." or "..".
std::string fileStem(const std::string &name) {
  std::string stem;
  for (char c : name)
    stem += c == '/' || c == '\0' ? '_' : c;
  if (stem.empty() || stem == "." || stem == "..")
    stem = "model";
  return stem;
}

} // namespace

std::optional<uint64_t> freeSpace(const std::string &dir) {
  struct statvfs fs;
  if (statvfs(dir.c_str(), &fs) != 0)
    return std::nullopt;
  return static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
}

std::string parentDirectory(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "."
         : slash == 0               ? "/"
                                    : path.substr(0, slash);
}

uint64_t checkpointSizeBound(const ModelInfo &info) {
  uint64_t bytes = 4096;
  for (const StateTensor &t : info.state)
    // Data, its header entry (name, dtype, shape, offsets) and a possible
    // num_batches_tracked scalar with its own entry.
    bytes += t.numBytes() + 2 * t.name.size() + 24 * t.shape.size() + 256;
  return bytes;
}

bool checkSaveTarget(const std::string &path, uint64_t bytes,
                     const FreeSpaceFn &free, std::string &error) {
  if (!checkWritable("--save", path, error))
    return false;
  const std::string what = "--save " + oneLine(path) + ": ";
  // A device (/dev/full, /dev/null) or a FIFO would be written in place,
  // not replaced atomically, and a full device fails only at the end.
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    error = what + data::notRegularReason(path) +
            ", not a regular file; give the path of a .safetensors file "
            "(it is written to a temporary file and renamed into place)";
    return false;
  }
  const std::string parent = parentDirectory(path);
  std::optional<uint64_t> room = free ? free(parent) : freeSpace(parent);
  if (room && *room < bytes) {
    error = what + "the checkpoint needs about " + byteText(bytes) +
            ", but the file system of '" + oneLine(parent) + "' has " +
            byteText(*room) + " free; free some space or save elsewhere";
    return false;
  }
  return true;
}

bool checkMetricsTarget(const std::string &path, std::string &error) {
  return checkWritable("--metrics", path, error);
}

bool checkProfileTarget(const std::string &path, std::string &error) {
  return checkWritable("--profile", path, error);
}

std::string interruptedSavePath(const std::string &modelName) {
  return fileStem(modelName) + ".interrupted.safetensors";
}

std::vector<std::string> fallbackSavePaths(const std::string &modelName) {
  const std::string name = fileStem(modelName) + ".rescued-" +
                           std::to_string(getpid()) + ".safetensors";
  const char *tmp = std::getenv("TMPDIR");
  std::string dir = tmp && *tmp ? tmp : "/tmp";
  if (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  return {dir + "/" + name, name};
}

std::string shellQuote(const std::string &text) {
  bool plain = !text.empty();
  for (char c : text)
    plain &= std::isalnum(static_cast<unsigned char>(c)) ||
             std::strchr("@%+=:,./-_", c) != nullptr;
  if (plain)
    return text;
  std::string out = "'";
  for (char c : text)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string byteText(uint64_t bytes) {
  char buf[32];
  if (bytes < 1000)
    std::snprintf(buf, sizeof buf, "%llu bytes",
                  static_cast<unsigned long long>(bytes));
  else if (bytes < 1000000)
    std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  else if (bytes < 1000000000)
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

} // namespace tcc::rt
