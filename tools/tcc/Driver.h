//===- Driver.h - The tcc command line --------------------------*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_DRIVER_H
#define TCC_TOOLS_TCC_DRIVER_H

namespace tcc {

/// tcc's commands (compile, tune, plot) on the command line `argv`, with
/// the targets registered so far (target/TargetBackend.h): tcc's main
/// registers every target first; a test driver adds its own
/// (test/lib/ToyTarget).
int tccMain(int argc, char **argv);

} // namespace tcc

#endif // TCC_TOOLS_TCC_DRIVER_H
