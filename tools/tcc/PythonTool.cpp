//===- PythonTool.cpp - Subcommands written in Python ---------------------===//
//
// `tcc plot` and `tcc import` are Python (matplotlib; PyTorch's torch.fx):
// the driver hands the arguments over, so each is one command beside
// `tcc compile`, and the script reports its own errors.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc/PythonTool.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <iostream>

int tcc::runPythonTool(const char *command, const char *python, const char *script,
                       const std::vector<std::string> &args, const char *needs) {
  if (!llvm::sys::fs::can_execute(python)) {
    std::cerr << "error: tcc " << command << " runs " << python
              << ", which is not there; install " << needs << "\n";
    return 1;
  }
  llvm::SmallVector<llvm::StringRef> argv{python, script};
  for (const std::string &arg : args)
    argv.push_back(arg);
  std::string failure;
  int status = llvm::sys::ExecuteAndWait(python, argv, std::nullopt, {}, 0, 0, &failure);
  if (status < 0) {
    std::cerr << "error: tcc " << command << " could not run " << python << ": " << failure
              << "\n";
    return 1;
  }
  return status;
}
