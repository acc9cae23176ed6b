//===- BuildTrainer.cpp - Generated source + runtime -> ./train -----------===//

#include "tools/tcc/BuildTrainer.h"

#include "runtime/AtomicFile.h"
#include "tools/tcc/ObjectCache.h"
#include "tools/tcc/Temporaries.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;

namespace {

/// The end of the progress line: where the shared objects came from.
std::string cacheNote(const std::vector<tcc::SharedObject> &objects) {
  size_t hits = 0, stored = 0;
  for (const tcc::SharedObject &object : objects) {
    hits += object.cache == tcc::CacheUse::Hit;
    stored += object.cache == tcc::CacheUse::Stored;
  }
  if (objects.empty())
    return "";
  if (hits + stored < objects.size())
    return " (no object cache: " + objects.back().why + ")";
  return " (shared runtime objects: " + std::to_string(hits) + " from the cache, " +
         std::to_string(stored) + " compiled into it)";
}

} // namespace

bool tcc::buildTrainer(const TrainerBuild &build, const std::string &source,
                       const std::string &output, bool progress,
                       std::vector<SharedObject> *shared, std::string &error) {
  // Those of a tcc killed with SIGKILL (their pid is in their names).
  tcc::removeStaleBuildTemporaries();
  removeStaleTemporaries(output);
  std::string sourceName, logName, folderName;
  // The compiler's own temporaries (cc1plus's .s, nvcc's intermediates) go
  // in a folder of tcc's: a SIGKILLed tcc's is swept like its files.
  if (!createBuildFolder(folderName, error))
    return false;
  TempFile folder(folderName);
  if (!createBuildTemporary(build.suffix, sourceName, error))
    return false;
  TempFile sourceFile(sourceName);
  if (!createBuildTemporary("log", logName, error))
    return false;
  TempFile log(logName);
  if (!writeFileAtomically(sourceFile.path, source, error))
    return false;

  // A failed compile keeps its log, under a name without a pid: no later
  // tcc removes it as stale.
  auto failed = [&](int status, const std::string &message) {
    std::string kept = log.path;
    kept.replace(kept.rfind("tcc-build-"), 10, "tcc-failed-build-");
    if (sys::fs::rename(log.path, kept))
      kept = log.path;
    log.keep();
    error = "building the trainer failed (" +
            (message.empty() ? build.compiler + " exited with " + std::to_string(status)
                             : message) +
            "); the compiler's output is in " + kept;
    return false;
  };
  if (progress)
    errs() << "tcc: building the trainer (" << build.summary << ") ...\n";
  auto start = std::chrono::steady_clock::now();
  std::vector<SharedObject> objects;
  for (const std::string &source : build.sharedSources) {
    SharedObject object;
    int status = 0;
    std::string message;
    if (!sharedObject(build, source, folder.path, log.path, object, status, message))
      return failed(status, message);
    objects.push_back(std::move(object));
  }

  // Link into a temporary beside the output, then rename: never a
  // half-written trainer.
  TempFile linked(temporaryBeside(output));
  std::vector<std::string> args{build.compiler};
  args.insert(args.end(), build.flags.begin(), build.flags.end());
  args.push_back(sourceFile.path);
  for (const SharedObject &object : objects)
    args.push_back(object.object);
  args.insert(args.end(), build.libraries.begin(), build.libraries.end());
  args.insert(args.end(), {"-o", linked.path});
  std::string message;
  if (int status = runChildProcess(args, log.path, folder.path, message))
    return failed(status, message);
  // Never rename over a device or a directory (as root, `-o /dev/null`
  // would replace the device): only a regular file or nothing.
  sys::fs::file_status existing;
  if (!sys::fs::status(output, existing) && sys::fs::exists(existing) &&
      !sys::fs::is_regular_file(existing)) {
    error = "cannot write the trainer to '" + output +
            "': it exists and is not a regular file";
    return false;
  }
  if (std::error_code ec = sys::fs::rename(linked.path, output)) {
    error = "cannot write '" + output + "': " + ec.message();
    return false;
  }
  if (progress) {
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start).count();
    errs() << "tcc: built " << output << " in " << format("%.1f", seconds) << " s"
           << cacheNote(objects) << "\n";
  }
  if (shared)
    shared->insert(shared->end(), objects.begin(), objects.end());
  return true;
}
