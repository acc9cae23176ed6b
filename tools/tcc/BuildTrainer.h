//===- BuildTrainer.h - Generated source + runtime -> ./train ---*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_BUILDTRAINER_H
#define TCC_TOOLS_TCC_BUILDTRAINER_H

#include <string>

namespace tcc {

/// Compiles the generated cpu `source` with the host C++ compiler and links
/// it with the runtime into the executable `output`, which appears only
/// when everything succeeded. On failure returns false with `error` one
/// line (naming a log file with the compiler's output).
bool buildCpuTrainer(const std::string &source, const std::string &output,
                     bool progress, std::string &error);

} // namespace tcc

#endif // TCC_TOOLS_TCC_BUILDTRAINER_H
