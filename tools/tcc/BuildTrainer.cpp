//===- BuildTrainer.cpp - Generated source + runtime -> ./train -----------===//

#include "tools/tcc/BuildTrainer.h"

#include "runtime/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;

namespace {

/// A temporary file that is removed when this object goes away and, through
/// LLVM's signal handlers, when tcc is interrupted (SIGINT, SIGTERM).
class TempFile {
public:
  explicit TempFile(std::string path) : path(std::move(path)) {
    sys::RemoveFileOnSignal(this->path);
  }
  ~TempFile() {
    if (!kept)
      sys::fs::remove(path);
    sys::DontRemoveFileOnSignal(path);
  }
  /// Leaves the file in place (the log of a failed build).
  void keep() { kept = true; }
  const std::string path;

private:
  bool kept = false;
};

/// A fresh name "<tmp>/tcc-build-XXXXXX.<suffix>" (created empty, so that no
/// other process gets it).
bool createTemp(StringRef suffix, std::string &path, std::string &error) {
  SmallString<128> name;
  int fd = -1;
  if (std::error_code ec = sys::fs::createTemporaryFile("tcc-build", suffix, fd, name)) {
    error = "cannot create a temporary file to build the trainer: " + ec.message();
    return false;
  }
  sys::Process::SafelyCloseFileDescriptor(fd);
  path = name.str().str();
  return true;
}

} // namespace

bool tcc::buildTrainer(const TrainerBuild &build, const std::string &source,
                       const std::string &output, bool progress, std::string &error) {
  std::string sourceName, logName;
  if (!createTemp(build.suffix, sourceName, error))
    return false;
  TempFile sourceFile(sourceName);
  if (!createTemp("log", logName, error))
    return false;
  TempFile log(logName);
  if (!writeFileAtomically(sourceFile.path, source, error))
    return false;

  // Link into a temporary beside the output, then rename: never a
  // half-written trainer.
  TempFile linked(output + ".tmp." + std::to_string(sys::Process::getProcessId()));
  SmallVector<std::string> args{build.compiler};
  args.append(build.flags.begin(), build.flags.end());
  args.push_back(sourceFile.path);
  args.append(build.libraries.begin(), build.libraries.end());
  args.append({"-o", linked.path});
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  if (progress)
    errs() << "tcc: building the trainer (" << build.summary << ") ...\n";
  auto start = std::chrono::steady_clock::now();
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log.path),
                                          StringRef(log.path)};
  std::string message;
  int status = sys::ExecuteAndWait(build.compiler, argRefs, std::nullopt, redirects, 0, 0,
                                   &message);
  if (status != 0) {
    log.keep();
    error = "building the trainer failed (" +
            (message.empty() ? build.compiler + " exited with " + std::to_string(status)
                             : message) +
            "); the compiler's output is in " + log.path;
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
