//===- tcc.cpp - The tcc driver -------------------------------------------===//
//
// tcc compile MODEL.json: model.json -> ModelSpec -> tcc IR -> (passes,
// codegen) -> output. Every user mistake ends in one "error:" line and exit
// status 1, and nothing is written unless the whole compilation succeeded.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportModel.h"
#include "frontend/ModelSpec.h"
#include "codegen/Codegen.h"
#include "passes/InitAll.h"
#include "tools/tcc/CompileOptions.h"
#include "runtime/AtomicFile.h"
#include "tools/tcc/BuildTrainer.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <unistd.h>
#include <iostream>

using mlir::DialectRegistry;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::OwningOpRef;

namespace {

constexpr const char *kVersion = "0.1.0";

const char *kTopHelp = R"(tcc - ahead-of-time compiler for neural-network training steps

Usage:
  tcc compile MODEL.json [options]   compile a model and its training recipe
  tcc --help                         show this help
  tcc --version                      show the version

Run 'tcc compile --help' for the compile options. The model format is
described in docs/model-format.md.
)";

int fail(const std::string &message) {
  std::cerr << "error: " << message << "\n";
  return 1;
}

/// The passes from the frontend's IR to the planned step functions; the
/// first diagnostic becomes the error.
mlir::LogicalResult runPipeline(ModuleOp module, const std::string &model,
                                std::string &error) {
  mlir::PassManager pm(module->getContext());
  mlir::tcc::buildCompilePipeline(pm);
  mlir::ScopedDiagnosticHandler handler(
      module->getContext(), [&](mlir::Diagnostic &diag) {
        if (diag.getSeverity() == mlir::DiagnosticSeverity::Error && error.empty())
          error = model + ": " + diag.str();
        return mlir::success();
      });
  if (mlir::succeeded(pm.run(module)))
    return mlir::success();
  if (error.empty())
    error = model + ": compilation failed";
  return mlir::failure();
}

bool emitSource(ModuleOp module, llvm::raw_ostream &os, std::string &error) {
  mlir::ScopedDiagnosticHandler handler(
      module->getContext(), [&](mlir::Diagnostic &diag) {
        if (error.empty())
          error = diag.str();
        return mlir::success();
      });
  return mlir::succeeded(mlir::tcc::emitCpuSource(module, os));
}

std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo(false));
  os << "\n";
  return text;
}

/// The --report file, written last: only a compilation whose outputs were
/// all written gets one.
int writeReport(ModuleOp module, const tcc::CompileOptions &options) {
  std::string error;
  if (options.report &&
      !tcc::writeFileAtomically(*options.report,
                                tcc::compileReport(module, options), error))
    return fail(error);
  return 0;
}

int runCompile(const tcc::CompileOptions &options) {
  ::tcc::frontend::ModelSpec spec;
  std::string error;
  if (!::tcc::frontend::loadModelSpec(options.model, spec, error))
    return fail(error);
  // Command-line settings override the model's recipe.
  if (options.precision)
    spec.train["precision"] = *options.precision;
  if (options.memoryBudget)
    spec.train["memory_budget"] = *options.memoryBudget;

  DialectRegistry registry;
  mlir::tcc::registerAllTccDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = mlir::tcc::importModel(context, spec, error);
  if (!module)
    return fail(error);

  if (options.emit != "mlir") {
    if (failed(runPipeline(*module, options.model, error)))
      return fail(error);
  }
  if (options.emit == "source" || options.emit == "exe") {
    if (options.target != "cpu")
      return fail("--target=" + options.target + ": the " + options.target +
                  " code generator is not available in this version of tcc; "
                  "use --target=cpu");
    std::string source;
    llvm::raw_string_ostream os(source);
    if (!emitSource(*module, os, error))
      return fail(options.model + ": " + error);
    if (options.emit == "source") {
      if (options.output.empty() || options.output == "-")
        std::cout << source;
      else if (!tcc::writeFileAtomically(options.output, source, error))
        return fail(error);
    } else {
      std::string output =
          options.output.empty() ? "./" + spec.name : options.output;
      if (!tcc::buildCpuTrainer(source, output, isatty(2), error))
        return fail(error);
    }
    return writeReport(*module, options);
  }

  std::string text = printModule(*module);
  if (options.output.empty() || options.output == "-")
    std::cout << text;
  else if (!tcc::writeFileAtomically(options.output, text, error))
    return fail(error);
  return writeReport(*module, options);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kTopHelp;
    return fail("no command given; try 'tcc compile MODEL.json'");
  }
  const std::string &command = args[0];
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kTopHelp;
    return 0;
  }
  if (command == "--version") {
    std::cout << "tcc " << kVersion << " (MLIR/LLVM " << LLVM_VERSION_STRING
              << ")\n";
    return 0;
  }
  if (command != "compile")
    return fail("unknown command '" + command +
                "'; the command is 'compile' (see 'tcc --help')");

  tcc::CompileOptions options;
  std::string error;
  switch (tcc::parseCompileOptions({args.begin() + 1, args.end()}, options,
                                   error)) {
  case tcc::ParseResult::Help:
    std::cout << tcc::compileHelp();
    return 0;
  case tcc::ParseResult::Error:
    return fail(error);
  case tcc::ParseResult::Ok:
    return runCompile(options);
  }
  return 1;
}
