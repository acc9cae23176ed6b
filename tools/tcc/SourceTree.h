//===- SourceTree.h - A trainer's sources that build without tcc -*- C++ -*-===//
//
// `tcc compile --emit=source-tree -o DIR`: the generated step, the runtime
// and the headers it needs, with a CMake project that builds the trainer
// where there is no MLIR and no tcc (the GPU machines: CUDA, CMake and a C++
// toolchain only). docs/cuda.md and the tree's README.md say how to build it.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_TOOLS_TCC_SOURCETREE_H
#define TCC_TOOLS_TCC_SOURCETREE_H

#include "target/TargetBackend.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace tcc {

/// What the tree's CMake project is told.
struct SourceTreeSpec {
  std::string model;  ///< the model's name: the step's file and the trainer's
  std::string target; ///< --target
  mlir::tcc::SourceTreeParts parts; ///< the target's (suffix, values, headers)
};

/// Writes the tree for the generated `source` into `dir`, atomically: it is
/// built beside `dir` and renamed into place, replacing an earlier tree
/// (never another directory). A target's library choices (`convPlans`,
/// when not null) go in as conv-plans.json, which a cuda tree's tcc-tune
/// target reads (docs/tuning.md).
/// False with `error` (one line).
bool writeSourceTree(const SourceTreeSpec &spec, const std::string &source,
                     const nlohmann::json &convPlans, const std::string &dir,
                     std::string &error);

} // namespace tcc

#endif // TCC_TOOLS_TCC_SOURCETREE_H
