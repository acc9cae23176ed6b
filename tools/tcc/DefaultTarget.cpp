//===- DefaultTarget.cpp - The target a compile without --target gets -----===//
//
// The first target that prefers to be chosen where it runs (cuda, where
// this tcc has nvcc and the NVIDIA driver shows a GPU), else the first
// that runs here (cpu). Each target answers for itself (availability()).
//
//===----------------------------------------------------------------------===//

#include "tools/tcc/DefaultTarget.h"

#include "target/TargetBackend.h"

namespace {

tcc::DefaultTargetChoice choose() {
  using mlir::tcc::Availability;
  using mlir::tcc::TargetBackend;
  const TargetBackend *fallback = nullptr;
  Availability fallbackRuns;
  for (const TargetBackend *target : mlir::tcc::registeredTargetBackends()) {
    Availability runs = target->availability();
    if (runs.runsHere && !target->preferredWhereAvailable() && !fallback) {
      fallback = target;
      fallbackRuns = runs;
    }
  }
  std::string whyNot;
  for (const TargetBackend *target : mlir::tcc::registeredTargetBackends()) {
    if (!target->preferredWhereAvailable())
      continue;
    Availability runs = target->availability();
    if (runs.runsHere)
      return {target->name().str(),
              runs.why + (fallback ? "; --target=" + fallback->name().str() + " " +
                                         fallbackRuns.why
                                   : "")};
    whyNot += (whyNot.empty() ? "" : "; ") + runs.why;
  }
  if (!fallback)
    return {mlir::tcc::registeredTargetBackends().front()->name().str(),
            "no target runs here"};
  return {fallback->name().str(), whyNot};
}

} // namespace

const tcc::DefaultTargetChoice &tcc::chooseDefaultTarget() {
  static const DefaultTargetChoice chosen = choose();
  return chosen;
}
