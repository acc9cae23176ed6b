//===- CompileOptions.h - The command line of `tcc compile` -----*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_COMPILEOPTIONS_H
#define TCC_TOOLS_TCC_COMPILEOPTIONS_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tcc {

struct CompileOptions {
  std::string model;          ///< MODEL.json
  std::string output;         ///< -o; "" = the default for the emit kind
  std::string emit = "exe";   ///< mlir | source | exe
  std::string target;         ///< cuda | cpu
  std::optional<std::string> precision; ///< overrides train.precision
  std::optional<int64_t> memoryBudget;  ///< bytes; overrides train.memory_budget
  std::optional<std::string> tuningDb;
  std::optional<std::string> report;
};

enum class ParseResult { Ok, Help, Error };

/// Parses the arguments after `compile`. On Error, `error` is one line
/// saying what is wrong and how to fix it.
ParseResult parseCompileOptions(const std::vector<std::string> &args,
                                CompileOptions &options, std::string &error);

/// The text of `tcc compile --help`.
std::string compileHelp();

/// The --report file: what was compiled and what it contains, as JSON.
std::string compileReport(mlir::ModuleOp module, const CompileOptions &options);

} // namespace tcc

#endif // TCC_TOOLS_TCC_COMPILEOPTIONS_H
