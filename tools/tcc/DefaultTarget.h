//===- DefaultTarget.h - The target `tcc compile` builds for by default -*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_DEFAULTTARGET_H
#define TCC_TOOLS_TCC_DEFAULTTARGET_H

#include <string>

namespace tcc {

/// The target a compile without --target builds for, and why: cuda only
/// where this tcc can build cuda trainers (nvcc) and the driver shows a GPU,
/// so that the trainer runs where it was built; cpu otherwise.
struct DefaultTargetChoice {
  std::string name;   ///< "cuda" or "cpu"
  std::string reason; ///< for the stderr line, e.g. "no NVIDIA driver here (...)"
};

/// Asks the registered targets once per process (the cuda target asks the
/// NVIDIA driver, loaded at run time: tcc itself does not link it).
const DefaultTargetChoice &chooseDefaultTarget();

} // namespace tcc

#endif // TCC_TOOLS_TCC_DEFAULTTARGET_H
