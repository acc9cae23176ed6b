//===- BuildTrainer.h - Generated source + runtime -> ./train ---*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_BUILDTRAINER_H
#define TCC_TOOLS_TCC_BUILDTRAINER_H

#include <string>
#include <vector>

namespace tcc {

/// How a target's generated source becomes a trainer: the compiler, its
/// flags, and what to link after the source.
struct TrainerBuild {
  std::string compiler;
  std::vector<std::string> flags, libraries;
  std::string suffix;  ///< of the source file: cpp, cu
  std::string summary; ///< for the progress line
};

/// The cpu target's: the host C++ compiler for the instruction set `march`.
TrainerBuild cpuTrainerBuild(const std::string &march);

/// The cuda target's: nvcc for the GPU architecture `arch` (sm_90a, sm_80),
/// with cuBLASLt. False with `error` when tcc was built without CUDA.
bool cudaTrainerBuild(const std::string &arch, TrainerBuild &build, std::string &error);

/// The nvcc a cuda trainer is built with, if this tcc was built with CUDA
/// and it is still there; else empty. `tcc compile` defaults to the cuda
/// target where it is found.
std::string cudaToolkitCompiler();

/// Compiles the generated `source` as `build` says and links it with the
/// runtime into the executable `output`, which appears only when
/// everything succeeded. Temporary files are removed on every path, Ctrl-C
/// included; a failed build keeps only its log. On failure returns false
/// with `error` one line (naming the log file with the compiler's output).
bool buildTrainer(const TrainerBuild &build, const std::string &source,
                  const std::string &output, bool progress, std::string &error);

} // namespace tcc

#endif // TCC_TOOLS_TCC_BUILDTRAINER_H
