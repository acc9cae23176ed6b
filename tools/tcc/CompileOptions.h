//===- CompileOptions.h - The command line of `tcc compile` -----*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_COMPILEOPTIONS_H
#define TCC_TOOLS_TCC_COMPILEOPTIONS_H

#include "runtime/Recipe.h"
#include "tools/tcc/ObjectCache.h"

#include "mlir/IR/BuiltinOps.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tcc {

struct CompileOptions {
  std::string model;          ///< MODEL.json
  std::string output;         ///< -o; "" = the default for the emit kind
  std::string emit = "exe";   ///< mlir | planned-mlir | source | exe | conv-plans
  std::string target;         ///< cuda | cpu
  bool targetGiven = false;   ///< --target was on the command line
  std::string targetReason;   ///< without --target: why this one (for stderr)
  std::string march = "native"; ///< -march of a cpu trainer's C++ build
  bool marchGiven = false;
  std::optional<::tcc::rt::Precision> precision; ///< overrides train.precision
  std::optional<int64_t> memoryBudget;  ///< bytes; overrides train.memory_budget
  std::optional<int64_t> batchSize;     ///< overrides train.batch_size
  std::optional<int64_t> ranks;         ///< overrides train.distributed.ranks
  /// --bucket-size: bytes of one bucket of gradients (tcc-bucket-collectives).
  std::optional<int64_t> bucketSize;
  std::string gpu = "h100";   ///< --gpu: the GPU a cuda step is planned for
  bool gpuGiven = false;
  /// --allow-fallback: a cuda trainer may replace a baked cuDNN engine that
  /// cannot run where it is started by cuDNN's choice, with a warning.
  bool allowFallback = false;
  std::optional<std::string> tuningDb; ///< --tuning-db: a file of 'tcc tune'
  /// --ignore-tuning-mismatch: a tuning file of another GPU or cuDNN is
  /// ignored with a warning instead of refused.
  bool ignoreTuningMismatch = false;
  std::optional<std::string> report;
  bool explain = false;       ///< --explain: what the compilation did, readable
  bool timePhases = false;    ///< --time-phases: seconds per phase on stderr
  bool printLocations = false; ///< --mlir-print-debuginfo
  /// Warn at compile time about data the trainer will not find; not a
  /// flag: tcc sample, whose trainer reads no data, turns it off.
  bool checkData = true;
  /// --disable-pass (repeatable): optimization passes to leave out.
  std::vector<std::string> disabledPasses;
  /// --enable-pass: optimization passes that are off unless named.
  std::vector<std::string> enabledPasses;
};

enum class ParseResult { Ok, Help, Error };

/// Parses the arguments after `compile`. On Error, `error` is one line
/// saying what is wrong and how to fix it.
ParseResult parseCompileOptions(const std::vector<std::string> &args,
                                CompileOptions &options, std::string &error);

/// The text of `tcc compile --help`.
std::string compileHelp();

/// What the compilation did, beyond the IR: for the report.
struct CompileFacts {
  std::string precision = "fp32";       ///< the precision the step runs in
  std::vector<std::string> passes;      ///< in the order they ran
  std::vector<std::string> warnings;    ///< as printed, without "warning: "
  /// --emit=exe: the trainer's shared runtime objects, and whether each came
  /// from the object cache (ObjectCache.h).
  std::vector<SharedObject> sharedObjects;
};

/// Prints "warning: MESSAGE" and keeps it for the report.
void warn(CompileFacts &facts, const std::string &message);

/// The --report file, as JSON: the model's parameters (counted on the
/// frontend's IR `model`), the planned step's state and scratch bytes (on
/// `planned`, the IR after the compile pipeline), the passes that ran and
/// the precision actually used.
std::string compileReport(mlir::ModuleOp model, mlir::ModuleOp planned,
                          const CompileOptions &options, const CompileFacts &facts);
nlohmann::json compileReportJson(mlir::ModuleOp model, mlir::ModuleOp planned,
                                 const CompileOptions &options, const CompileFacts &facts);

/// The text of --explain: the report (docs/report.md) for a reader.
std::string explainCompile(const nlohmann::json &report);

} // namespace tcc

#endif // TCC_TOOLS_TCC_COMPILEOPTIONS_H
