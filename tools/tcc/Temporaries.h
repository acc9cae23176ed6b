//===- Temporaries.h - What a killed tcc must not leave behind -*- C++ -*-===//
//
// tcc builds a trainer with a child compiler and writes its outputs through
// temporaries (OUT.tmp.PID.XXXXXX, DIR.tmp.PID, $TMPDIR/tcc-build-PID-*).
// On SIGINT, SIGTERM or SIGHUP it terminates the child's process group (the
// compiler driver and everything it started) and removes the temporaries,
// then dies of the signal as it would have. SIGKILL cannot be caught: every
// temporary carries tcc's pid in its name, and a later tcc removes those
// whose process is gone (docs/reliability.md).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TOOLS_TCC_TEMPORARIES_H
#define TCC_TOOLS_TCC_TEMPORARIES_H

#include <string>
#include <sys/types.h>
#include <vector>

namespace tcc {

/// Removes `path` (a file, or a folder with everything in it) if tcc is
/// interrupted, until dontRemoveOnSignal(path).
void removeOnSignal(const std::string &path);
void dontRemoveOnSignal(const std::string &path);

/// Runs `args` (args[0] the program) in a process group of its own, with
/// stdin from /dev/null, stdout and stderr into the file `log` and, when
/// `tmpdir` is given, TMPDIR set to it (so that the compiler's own
/// temporaries are tcc's to remove); an interrupted tcc terminates the
/// group. The exit status, or -1 with `error` set when it could not run or
/// died of a signal.
int runChildProcess(const std::vector<std::string> &args, const std::string &log,
                    const std::string &tmpdir, std::string &error);

/// "<tmp>/tcc-build-<pid>-XXXXXX", a new folder (0700) for a child's
/// temporaries.
bool createBuildFolder(std::string &path, std::string &error);

/// "<dir>/tcc-build-<pid>-XXXXXX.<suffix>", created empty (0600).
bool createBuildTemporary(const std::string &suffix, std::string &path, std::string &error);

/// A temporary file or folder that is removed when this object goes away
/// and when tcc is interrupted (removeOnSignal).
class TempFile {
public:
  explicit TempFile(std::string path);
  ~TempFile();
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  /// Leaves the file in place (the log of a failed build, a renamed file).
  void keep() { kept = true; }
  const std::string path;

private:
  bool kept = false;
};

/// "<path>.tmp.<pid>.XXXXXX": AtomicFile's pattern, so that the next write
/// of `path` removes it if tcc is killed (removeStaleTemporaries).
std::string temporaryBeside(const std::string &path);

/// Removes the files and folders "tcc-build-<pid>-*" in the temporary folder, and the
/// folders "<dir>.tmp.<pid>" beside `dir` when `dir` is given, whose
/// process <pid> is gone and which this user owns. Returns how many.
int removeStaleBuildTemporaries(const std::string &dir = "");

} // namespace tcc

#endif // TCC_TOOLS_TCC_TEMPORARIES_H
