//===- DefaultTarget.cpp - The target a compile without --target gets -----===//
//
// The first target that prefers to be chosen where it runs (cuda, where
// this tcc has nvcc and the NVIDIA driver shows a GPU), else the first
// that runs here (cpu). Each target answers for itself (availability()).
//
//===----------------------------------------------------------------------===//

#include "tools/tcc/DefaultTarget.h"

#include "target/TargetBackend.h"

#include <utility>
#include <vector>

namespace {

tcc::DefaultTargetChoice choose() {
  using mlir::tcc::Availability;
  using mlir::tcc::TargetBackend;
  // Each target is asked once (the cuda target starts the NVIDIA driver).
  std::vector<std::pair<const TargetBackend *, Availability>> targets;
  for (const TargetBackend *target : mlir::tcc::registeredTargetBackends())
    targets.push_back({target, target->availability()});
  const std::pair<const TargetBackend *, Availability> *fallback = nullptr;
  for (const auto &entry : targets)
    if (entry.second.runsHere && !entry.first->preferredWhereAvailable()) {
      fallback = &entry;
      break;
    }
  std::string whyNot;
  for (const auto &[target, runs] : targets) {
    if (!target->preferredWhereAvailable())
      continue;
    if (runs.runsHere)
      return {target->name().str(),
              runs.why + (fallback ? "; --target=" + fallback->first->name().str() + " " +
                                         fallback->second.why
                                   : "")};
    whyNot += (whyNot.empty() ? "" : "; ") + runs.why;
  }
  if (!fallback)
    return {targets.front().first->name().str(), "no target runs here"};
  return {fallback->first->name().str(), whyNot};
}

} // namespace

const tcc::DefaultTargetChoice &tcc::chooseDefaultTarget() {
  static const DefaultTargetChoice chosen = choose();
  return chosen;
}
