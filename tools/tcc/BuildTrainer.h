//===- BuildTrainer.h - Generated source + runtime -> ./train ---*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_BUILDTRAINER_H
#define TCC_TOOLS_TCC_BUILDTRAINER_H

#include "target/TargetBackend.h"
#include "tools/tcc/ObjectCache.h"

#include <string>
#include <vector>

namespace tcc {

/// How a target's generated source becomes a trainer (its backend says).
using TrainerBuild = mlir::tcc::TrainerBuild;

/// Compiles the generated `source` as `build` says and links it with the
/// runtime into the executable `output`, which appears only when
/// everything succeeded. Temporary files are removed on every path, Ctrl-C
/// included; a failed build keeps only its log. The build's shared sources
/// come from the object cache (ObjectCache.h); what became of each is added
/// to `shared` when given. On failure returns false with `error` one line
/// (naming the log file with the compiler's output).
bool buildTrainer(const TrainerBuild &build, const std::string &source,
                  const std::string &output, bool progress, std::vector<SharedObject> *shared,
                  std::string &error);

} // namespace tcc

#endif // TCC_TOOLS_TCC_BUILDTRAINER_H
