//===- BuildTrainer.h - Generated source + runtime -> ./train ---*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_BUILDTRAINER_H
#define TCC_TOOLS_TCC_BUILDTRAINER_H

#include <string>

namespace tcc {

/// Compiles the generated cpu `source` with the host C++ compiler for the
/// instruction set `march` (its -march) and links it with the runtime into
/// the executable `output`, which appears only when everything succeeded.
/// Temporary files are removed on every path, Ctrl-C included; a failed
/// build keeps only its log. On failure returns false with `error` one line
/// (naming the log file with the compiler's output).
bool buildCpuTrainer(const std::string &source, const std::string &output,
                     const std::string &march, bool progress, std::string &error);

} // namespace tcc

#endif // TCC_TOOLS_TCC_BUILDTRAINER_H
