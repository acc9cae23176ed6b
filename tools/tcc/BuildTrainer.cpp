//===- BuildTrainer.cpp - Generated source + runtime -> ./train -----------===//

#include "tools/tcc/BuildTrainer.h"

#include "runtime/AtomicFile.h"
#include "tools/tcc/Temporaries.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;

namespace {

/// A temporary file that is removed when this object goes away and when tcc
/// is interrupted (Temporaries.h).
class TempFile {
public:
  explicit TempFile(std::string path) : path(std::move(path)) {
    tcc::removeOnSignal(this->path);
  }
  ~TempFile() {
    if (!kept && sys::fs::is_directory(path))
      sys::fs::remove_directories(path);
    else if (!kept)
      sys::fs::remove(path);
    tcc::dontRemoveOnSignal(path);
  }
  /// Leaves the file in place (the log of a failed build).
  void keep() { kept = true; }
  const std::string path;

private:
  bool kept = false;
};

/// "<output>.tmp.<pid>.XXXXXX": AtomicFile's pattern, so that the next write
/// of `output` removes it if tcc is killed (removeStaleTemporaries).
std::string linkTemporary(const std::string &output) {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string name = output + ".tmp." + std::to_string(sys::Process::getProcessId()) + ".";
  for (int i = 0; i < 6; ++i)
    name += kChars[sys::Process::GetRandomNumber() % (sizeof kChars - 1)];
  return name;
}

} // namespace

bool tcc::buildTrainer(const TrainerBuild &build, const std::string &source,
                       const std::string &output, bool progress, std::string &error) {
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

  // Link into a temporary beside the output, then rename: never a
  // half-written trainer.
  TempFile linked(linkTemporary(output));
  std::vector<std::string> args{build.compiler};
  args.insert(args.end(), build.flags.begin(), build.flags.end());
  args.push_back(sourceFile.path);
  args.insert(args.end(), build.libraries.begin(), build.libraries.end());
  args.insert(args.end(), {"-o", linked.path});
  if (progress)
    errs() << "tcc: building the trainer (" << build.summary << ") ...\n";
  auto start = std::chrono::steady_clock::now();
  std::string message;
  int status = runChildProcess(args, log.path, folder.path, message);
  if (status != 0) {
    // Kept under a name without a pid: no later tcc removes it as stale.
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
  }
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
    errs() << "tcc: built " << output << " in " << format("%.1f", seconds) << " s\n";
  }
  return true;
}
