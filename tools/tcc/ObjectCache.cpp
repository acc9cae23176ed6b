//===- ObjectCache.cpp - Objects every trainer of one toolchain shares ----===//

#include "tools/tcc/ObjectCache.h"

#include "runtime/AtomicFile.h"
#include "tools/tcc/Temporaries.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>

using namespace llvm;
using mlir::tcc::TrainerBuild;

namespace {

/// Enough for a few toolchains and -march values and the runtime versions
/// of a working copy (an entry is 0.2-0.5 MB); the least recently used go.
constexpr size_t kMaxEntries = 64;

/// Runs `args` with their output into `log`, and reads it into `text`.
bool outputOf(const std::vector<std::string> &args, const std::string &log,
              const std::string &folder, std::string &text, int &status, std::string &error) {
  status = tcc::runChildProcess(args, log, folder, error);
  if (status != 0)
    return false;
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(log);
  if (!buffer) {
    status = -1;
    error = "cannot read " + log + ": " + buffer.getError().message();
    return false;
  }
  text = (*buffer)->getBuffer().str();
  return true;
}

/// The hash of what decides the object's bits (ObjectCache.h), 24 hex digits.
bool cacheKey(const TrainerBuild &build, const std::string &source, const std::string &folder,
              const std::string &log, std::string &key, int &status, std::string &error) {
  SHA256 hash;
  auto add = [&](StringRef part) {
    hash.update(part);
    hash.update(StringRef("\0", 1));
  };
  add(build.compiler);
  for (const std::string &flag : build.flags)
    add(flag);
  std::vector<std::string> plan{build.compiler};
  plan.insert(plan.end(), build.flags.begin(), build.flags.end());
  std::vector<std::string> preprocess = plan;
  plan.insert(plan.end(), {"-###", "-E", "-x", "c++", "/dev/null"});
  preprocess.insert(preprocess.end(), {"-E", source});
  std::string text;
  if (!outputOf(plan, log, folder, text, status, error))
    return false;
  add(text);
  if (!outputOf(preprocess, log, folder, text, status, error))
    return false;
  add(text);
  std::array<uint8_t, 32> digest = hash.final();
  key = toHex(ArrayRef<uint8_t>(digest).take_front(12), /*LowerCase=*/true);
  return true;
}

/// A whole ELF object: a partial or foreign file in the cache is compiled
/// again, never linked. A relocatable object's section headers come last.
bool isWholeObject(const std::string &path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return false;
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() < 64 || !bytes.starts_with("\x7f" "ELF") || bytes[4] != 2 /* 64-bit */)
    return false;
  uint64_t sectionHeaders = 0;
  uint16_t entrySize = 0, entries = 0;
  std::memcpy(&sectionHeaders, bytes.data() + 0x28, 8);
  std::memcpy(&entrySize, bytes.data() + 0x3a, 2);
  std::memcpy(&entries, bytes.data() + 0x3c, 2);
  return sectionHeaders + uint64_t(entrySize) * entries <= bytes.size();
}

/// Marks an entry as used now: pruning removes the least recently used.
void touch(const std::string &path) { utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

/// Removes the least recently used objects past kMaxEntries.
void prune(const std::string &objects) {
  std::vector<std::pair<sys::TimePoint<>, std::string>> entries;
  std::error_code ec;
  for (sys::fs::directory_iterator it(objects, ec), end; it != end && !ec; it.increment(ec)) {
    sys::fs::file_status status;
    if (StringRef(it->path()).ends_with(".o") && !sys::fs::status(it->path(), status))
      entries.push_back({status.getLastModificationTime(), it->path()});
  }
  if (entries.size() <= kMaxEntries)
    return;
  std::sort(entries.begin(), entries.end());
  for (size_t i = 0; i + kMaxEntries < entries.size(); ++i)
    sys::fs::remove(entries[i].second);
}

bool compile(const TrainerBuild &build, const std::string &source, const std::string &object,
             const std::string &folder, const std::string &log, int &status,
             std::string &error) {
  std::vector<std::string> args{build.compiler};
  args.insert(args.end(), build.flags.begin(), build.flags.end());
  args.insert(args.end(), {"-c", source, "-o", object});
  status = tcc::runChildProcess(args, log, folder, error);
  return status == 0;
}

/// The cache's objects folder, or "" with `why` it cannot be used.
std::string objectsFolder(std::string &why) {
  std::string cache = tcc::objectCacheFolder();
  if (cache.empty()) {
    why = std::getenv("TCC_CACHE_DIR") ? "TCC_CACHE_DIR is empty"
                                       : "neither TCC_CACHE_DIR, XDG_CACHE_HOME nor HOME is set";
    return "";
  }
  std::string objects = cache + "/objects";
  if (std::error_code ec = sys::fs::create_directories(objects)) {
    why = "cannot create " + objects + ": " + ec.message();
    return "";
  }
  if (std::error_code ec = sys::fs::access(objects, sys::fs::AccessMode::Write)) {
    why = "cannot write to " + objects + ": " + ec.message();
    return "";
  }
  return objects;
}

} // namespace

const char *tcc::cacheUseName(CacheUse use) {
  switch (use) {
  case CacheUse::Hit:
    return "hit";
  case CacheUse::Stored:
    return "stored";
  case CacheUse::Off:
    break;
  }
  return "off";
}

std::string tcc::objectCacheFolder() {
  if (const char *dir = std::getenv("TCC_CACHE_DIR"))
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/tcc";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/tcc";
  return "";
}

bool tcc::sharedObject(const TrainerBuild &build, const std::string &source,
                       const std::string &folder, const std::string &log, SharedObject &result,
                       int &status, std::string &error) {
  result = {source, "", CacheUse::Off, ""};
  status = 0;
  const std::string stem = sys::path::stem(source).str();
  std::string objects = objectsFolder(result.why);
  if (objects.empty()) {
    result.object = folder + "/" + stem + ".o";
    return compile(build, source, result.object, folder, log, status, error);
  }
  std::string key;
  if (!cacheKey(build, source, folder, log, key, status, error))
    return false;
  result.object = objects + "/" + stem + "-" + key + ".o";
  if (isWholeObject(result.object)) {
    touch(result.object);
    result.cache = CacheUse::Hit;
    return true;
  }
  // Another tcc may be writing the same entry: each writes its own
  // temporary and renames it, and either's object is this one.
  removeStaleTemporaries(result.object);
  TempFile written(temporaryBeside(result.object));
  if (!compile(build, source, written.path, folder, log, status, error))
    return false;
  if (std::error_code ec = sys::fs::rename(written.path, result.object)) {
    status = -1;
    error = "cannot store " + result.object + ": " + ec.message();
    return false;
  }
  written.keep();
  result.cache = CacheUse::Stored;
  prune(objects);
  return true;
}
