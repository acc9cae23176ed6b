//===- BuildTrainer.cpp - Generated source + runtime -> ./train -----------===//

#include "tools/tcc/BuildTrainer.h"

#include "runtime/AtomicFile.h"
#include "tools/tcc/RuntimePaths.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace llvm;

bool tcc::buildCpuTrainer(const std::string &source, const std::string &output,
                          bool progress, std::string &error) {
  SmallString<128> dir;
  if (sys::fs::createUniqueDirectory("tcc-build", dir)) {
    error = "cannot create a temporary directory to build the trainer";
    return false;
  }
  std::string sourcePath = (dir + "/model.cpp").str();
  std::string logPath = (dir + "/build.log").str();
  if (!writeFileAtomically(sourcePath, source, error))
    return false;

  // Link into a temporary beside the output, then rename: never a
  // half-written trainer.
  std::string temp = output + ".tmp." + std::to_string(sys::Process::getProcessId());
  // -march=native: a cpu trainer runs on the machine that builds it.
  SmallVector<std::string> args{TCC_CXX, "-std=c++17", "-O3", "-march=native", "-fopenmp",
                                "-I" TCC_RUNTIME_INCLUDE_DIR, sourcePath};
  for (StringRef lib : llvm::split(StringRef(TCC_RUNTIME_LIBS), ';'))
    args.push_back(lib.str());
  args.append({"-lz", "-o", temp});
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  if (progress)
    errs() << "tcc: building the trainer with " << TCC_CXX << " ...\n";
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string message;
  int status = sys::ExecuteAndWait(TCC_CXX, argRefs, std::nullopt, redirects, 0, 0,
                                   &message);
  if (status != 0) {
    sys::fs::remove(temp);
    error = "building the trainer failed (" +
            (message.empty() ? TCC_CXX " exited with " + std::to_string(status)
                             : message) +
            "); the compiler's output is in " + logPath;
    return false;
  }
  // Never rename over a device or a directory (as root, `-o /dev/null`
  // would replace the device): only a regular file or nothing.
  sys::fs::file_status existing;
  if (!sys::fs::status(output, existing) && sys::fs::exists(existing) &&
      !sys::fs::is_regular_file(existing)) {
    sys::fs::remove(temp);
    error = "cannot write the trainer to '" + output +
            "': it exists and is not a regular file";
    return false;
  }
  if (std::error_code ec = sys::fs::rename(temp, output)) {
    sys::fs::remove(temp);
    error = "cannot write '" + output + "': " + ec.message();
    return false;
  }
  sys::fs::remove_directories(dir);
  return true;
}
