//===- PythonTool.h - Subcommands written in Python -------------*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_PYTHONTOOL_H
#define TCC_TOOLS_TCC_PYTHONTOOL_H

#include <string>
#include <vector>

namespace tcc {

/// Runs `python script args...` and returns its exit status. When python is
/// missing or cannot start, prints one "error:" line (saying that `needs`
/// must be installed) and returns 1.
int runPythonTool(const char *command, const char *python, const char *script,
                  const std::vector<std::string> &args, const char *needs);

} // namespace tcc

#endif // TCC_TOOLS_TCC_PYTHONTOOL_H
