//===- tcc.cpp - The tcc driver -------------------------------------------===//
//
// tcc compile MODEL.json: model.json -> ModelSpec -> tcc IR -> (passes,
// codegen) -> output. Every user mistake ends in one "error:" line and exit
// status 1, and nothing is written unless the whole compilation succeeded.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportModel.h"
#include "frontend/ModelSpec.h"
#include "ir/ModelNode.h"
#include "ir/TccOps.h"
#include "tools/tcc/Driver.h"
#include "passes/InitAll.h"
#include "passes/Passes.h"
#include "tools/tcc/CompileOptions.h"
#include "runtime/AtomicFile.h"
#include "tools/tcc/BuildTrainer.h"
#include "tools/tcc/DataCheck.h"
#include "tools/tcc/SourceTree.h"
#include "tools/tcc/Plot.h"
#include "tools/tcc/PythonTool.h"
#include "tools/tcc/Sample.h"
#include "tools/tcc/RuntimePaths.h"
#include "tools/tcc/Tune.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <functional>
#include <unistd.h>
#include <iostream>
#include <sstream>

using mlir::DialectRegistry;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::OwningOpRef;

namespace {

constexpr const char *kVersion = "0.1.0";

const char *kTopHelp = R"(tcc - ahead-of-time compiler for neural-network training steps

Usage:
  tcc compile MODEL.json [options]   compile a model and its training recipe
  tcc tune MODEL.json... -o FILE     measure cuDNN's engines on this GPU
                                     (for tcc compile --tuning-db)
  tcc sample MODEL.json --checkpoint FILE --vocab VOCAB.json [options]
                                     text sampled from a trained character-
                                     level language model
  tcc plot RUN.jsonl... -o FILE.png  draw training curves from metrics files
  tcc import MODULE.py:FACTORY -o MODEL.json [--weights W.safetensors]
                                     a PyTorch nn.Module as model.json and
                                     its weights (docs/import.md)
  tcc --help                         show this help
  tcc --version                      show the version

Run 'tcc compile --help' for the compile options, 'tcc sample --help',
'tcc tune --help', 'tcc plot --help' and 'tcc import --help' for theirs. The model format is described in docs/model-format.md.
)";

int fail(const std::string &message) {
  std::cerr << "error: " << message << "\n";
  return 1;
}

/// Records the name of every pass that ran, once, in order: the report's
/// "passes".
struct RecordPasses : public mlir::PassInstrumentation {
  explicit RecordPasses(std::vector<std::string> &names) : names(names) {}
  void runAfterPass(mlir::Pass *pass, mlir::Operation *) override {
    std::string name = pass->getArgument().str();
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  }
  std::vector<std::string> &names;
};

/// The passes from the frontend's IR to the planned step functions, the
/// target's included (buildCompilePipeline). The first error diagnostic
/// becomes the error; warnings (a target's, on its tuning file) are the
/// compile's.
mlir::LogicalResult runPipeline(ModuleOp module, const mlir::tcc::TargetBackend &target,
                                const tcc::CompileOptions &options, tcc::CompileFacts &facts,
                                std::string &error) {
  const std::string &model = options.model;
  mlir::tcc::TargetOptions settings{options.disabledPasses, options.gpu,
                                    options.tuningDb.value_or(""),
                                    options.ignoreTuningMismatch, options.allowFallback,
                                    options.bucketSize.value_or(0)};
  settings.enabledPasses = options.enabledPasses;
  mlir::ScopedDiagnosticHandler handler(
      module->getContext(), [&](mlir::Diagnostic &diag) {
        if (diag.getSeverity() == mlir::DiagnosticSeverity::Error && error.empty())
          error = model + ": " + diag.str();
        if (diag.getSeverity() == mlir::DiagnosticSeverity::Warning)
          tcc::warn(facts, diag.str());
        return mlir::success();
      });
  mlir::PassManager pm(module->getContext());
  mlir::tcc::buildCompilePipeline(pm, target, settings);
  pm.addInstrumentation(std::make_unique<RecordPasses>(facts.passes));
  if (mlir::succeeded(pm.run(module)))
    return mlir::success();
  if (error.empty())
    error = model + ": compilation failed";
  return mlir::failure();
}


/// The precision the step runs in (tcc-precision); a setting it cannot
/// honour is said to be so, not dropped: it warns and the step runs fp32.
void checkPrecision(const ::tcc::frontend::ModelSpec &spec,
                    const tcc::CompileOptions &options, tcc::CompileFacts &facts) {
  const ::tcc::rt::Precision &chosen = spec.recipe.train.precision;
  if (!chosen.sixteenBit())
    return;
  std::string precision = chosen.name();
  std::string setting =
      std::string(options.precision ? "--precision" : "train.precision") + " " + precision;
  std::string pass = mlir::tcc::TargetOptions::optimizationName(*mlir::tcc::createPrecision()).str();
  if (llvm::is_contained(options.disabledPasses, pass))
    tcc::warn(facts, setting + " is left out by --disable-pass=" + pass + ": the step runs in fp32" +
                    (chosen.scalesLoss() ? " (with its loss scaling)" : ""));
  else
    facts.precision = precision;
}

/// --precision replaces train.precision; GradScaler's settings
/// (train.loss_scale) belong to fp16-mixed: a model's settings that the
/// override makes unused are said to be so.
void overridePrecision(::tcc::frontend::ModelSpec &spec, ::tcc::rt::Precision precision,
                       tcc::CompileFacts &facts) {
  ::tcc::rt::TrainRecipe &train = spec.recipe.train;
  train.precision = precision;
  std::optional<::tcc::rt::LossScale> &lossScale = train.lossScale;
  if (precision.scalesLoss() && !lossScale)
    lossScale = ::tcc::rt::LossScale();
  if (!precision.scalesLoss() && lossScale) {
    // The frontend fills GradScaler's defaults under fp16-mixed: only
    // settings the model chose are worth a word.
    const ::tcc::rt::LossScale d;
    const ::tcc::rt::LossScale &l = *lossScale;
    if (l.initScale != d.initScale || l.growthFactor != d.growthFactor ||
        l.backoffFactor != d.backoffFactor || l.growthInterval != d.growthInterval)
      tcc::warn(facts, "train.loss_scale of the model is not used: --precision=" +
                           precision.name() + " needs no loss scaling");
    lossScale.reset();
  }
}

/// A piecewise-linear schedule in epochs whose points do not span the run
/// is legal (the last factor holds after the last point, as np.interp does)
/// but rarely meant: say what will happen.
void checkScheduleSpan(const ::tcc::frontend::ModelSpec &spec,
                       tcc::CompileFacts &facts) {
  const ::tcc::rt::ScheduleDesc &schedule = spec.recipe.train.schedule;
  if (schedule.type != ::tcc::rt::ScheduleDesc::PiecewiseLinear || !schedule.perEpoch)
    return;
  double last = schedule.pointT[schedule.pointCount - 1];
  double factor = schedule.pointFactor[schedule.pointCount - 1];
  double epochs = spec.recipe.train.epochs;
  auto text = [](double v) {
    std::ostringstream os;
    os << v;
    return os.str();
  };
  if (last < epochs)
    tcc::warn(facts, "train.schedule.points end at epoch " + text(last) + " of " +
                    text(epochs) + ": the factor " + text(factor) +
                    " holds for the rest of the run");
  else if (last > epochs)
    tcc::warn(facts, "train.schedule.points reach epoch " + text(last) + ", beyond the run's " +
                    text(epochs) + " epochs: the points after epoch " + text(epochs) +
                    " are never used");
}

/// one_cycle keeps the optimizer's momentum constant, where PyTorch's
/// OneCycleLR cycles it by default: said unless the model says
/// cycle_momentum: false.
void checkOneCycleMomentum(const ::tcc::frontend::ModelSpec &spec, tcc::CompileFacts &facts) {
  const ::tcc::rt::TrainRecipe &train = spec.recipe.train;
  const ::tcc::rt::Optimizer &optimizer = train.optimizer;
  static const char *const kNames[] = {"sgd", "adam", "adamw", "lamb"};
  bool momentum = optimizer.type != ::tcc::rt::Optimizer::SGD || optimizer.momentum > 0;
  if (train.schedule.type == ::tcc::rt::ScheduleDesc::OneCycle && momentum &&
      !train.cycleMomentum)
    tcc::warn(facts, std::string("train.schedule one_cycle keeps the ") + kNames[optimizer.type] +
                     " momentum constant; "
                     "PyTorch's OneCycleLR cycles it between 0.85 and 0.95 by default "
                     "(cycle_momentum=True), which tcc does not: set "
                     "train.schedule.cycle_momentum to false to say so");
}

/// A shard mode on one rank changes nothing: said so.
void checkShard(const ::tcc::frontend::ModelSpec &spec, tcc::CompileFacts &facts) {
  const ::tcc::rt::Distributed &d = spec.recipe.train.distributed;
  if (d.shard != ::tcc::rt::Distributed::None && d.ranks == 1)
    tcc::warn(facts, "train.distributed.shard changes nothing with one rank: it keeps the "
                     "whole state");
}

/// sync_batch_norm where it changes nothing: said so.
void checkSyncBatchNorm(const ::tcc::frontend::ModelSpec &spec, tcc::CompileFacts &facts) {
  const ::tcc::rt::Distributed &d = spec.recipe.train.distributed;
  if (!d.syncBatchNorm)
    return;
  if (d.ranks == 1) {
    tcc::warn(facts, "train.distributed.sync_batch_norm changes nothing with one rank: the "
                     "batch norms see the whole batch already");
    return;
  }
  bool wholeBatch = llvm::any_of(spec.nodes, [](const ::tcc::frontend::NodeSpec &node) {
    return node.op == "batch_norm" && node.attrs["ghost_batch"].get<int64_t>() == 0;
  });
  if (!wholeBatch)
    tcc::warn(facts, "train.distributed.sync_batch_norm changes nothing: every batch norm "
                     "of the model has a ghost_batch, whose groups stay within a rank");
}

/// A layer norm over the token axis of a causal model: position t's mean
/// and variance read the later positions the causal mask hides, so the model
/// sees the future in training and not when it samples. Said so.
void checkCausalLayerNorm(ModuleOp model, tcc::CompileFacts &facts) {
  bool causal = false;
  model.walk([&](mlir::tcc::ScaledDotProductAttentionOp op) { causal |= op.getCausal(); });
  if (!causal)
    return;
  model.walk([&](mlir::tcc::LayerNormOp op) {
    auto type = mlir::cast<mlir::ShapedType>(op.getInput().getType());
    if (type.getRank() >= 3 && op.getNormalizedDims() >= type.getRank() - 1)
      tcc::warn(facts, "node '" + mlir::tcc::modelNodeOf(op.getLoc()) +
                           "': layer_norm normalises over the token axis too (all per-sample "
                           "dims, the default), so each position's statistics read the later "
                           "positions a causal attention hides; set \"normalized_dims\": 1 to "
                           "normalise each token as nn.LayerNorm(width) does");
  });
}

/// --bucket-size where there is nothing to bucket: said so.
void checkBucketSize(const ::tcc::frontend::ModelSpec &spec, const tcc::CompileOptions &options,
                     tcc::CompileFacts &facts) {
  if (options.bucketSize && spec.recipe.train.distributed.ranks == 1)
    tcc::warn(facts, "--bucket-size changes nothing with one rank: the step sums no "
                     "gradients over ranks");
}

/// A target's own optimization pass disabled or enabled on another target
/// changes nothing: said so.
void checkTargetPasses(const mlir::tcc::TargetBackend &target,
                       const tcc::CompileOptions &options, tcc::CompileFacts &facts) {
  for (const mlir::tcc::TargetBackend *other : mlir::tcc::registeredTargetBackends())
    for (llvm::StringRef pass : other->optimizationPasses())
      for (const char *flag : {"--disable-pass", "--enable-pass"}) {
        const auto &named = flag[2] == 'd' ? options.disabledPasses : options.enabledPasses;
        if (llvm::is_contained(named, pass.str()) &&
            !llvm::is_contained(target.optimizationPasses(), pass))
          tcc::warn(facts, std::string(flag) + "=" + pass.str() + " changes nothing on --target=" +
                               options.target + ": tcc-" + pass.str() + " runs for the " +
                               other->name().str() + " target only");
      }
}

bool emitSource(const mlir::tcc::TargetBackend &target, ModuleOp module, llvm::raw_ostream &os,
                std::string &error) {
  mlir::ScopedDiagnosticHandler handler(
      module->getContext(), [&](mlir::Diagnostic &diag) {
        if (error.empty())
          error = diag.str();
        return mlir::success();
      });
  return mlir::succeeded(target.emitSource(module, os));
}

/// The module as text; with `locations`, each op's (its model node), as
/// tcc-opt --mlir-print-debuginfo prints them.
std::string printModule(ModuleOp module, bool locations) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo(locations));
  os << "\n";
  return text;
}

/// The --report file and the --explain text, last: only a compilation
/// whose outputs were all written gets them. The explanation goes to stderr
/// because stdout may hold the output (--emit=mlir).
int writeReport(ModuleOp model, ModuleOp planned, const tcc::CompileOptions &options,
                const tcc::CompileFacts &facts) {
  if (!options.report && !options.explain)
    return 0;
  nlohmann::json report = tcc::compileReportJson(model, planned, options, facts);
  std::string error;
  if (options.report &&
      !tcc::writeFileAtomically(*options.report, report.dump(2) + "\n", error))
    return fail(error);
  if (options.explain)
    llvm::errs() << tcc::explainCompile(report);
  return 0;
}

/// Writes `text` to -o, or to stdout without one.
int writeOutput(const tcc::CompileOptions &options, const std::string &text) {
  std::string error;
  if (options.output.empty() || options.output == "-")
    std::cout << text;
  else if (!tcc::writeFileAtomically(options.output, text, error))
    return fail(error);
  return 0;
}

/// --time-phases: the seconds of each phase of a compile, printed on stderr
/// when it ends (also when it fails), so that a slow compile shows where
/// its time goes (test/tools/compile_time.py reads it).
class PhaseTimes {
public:
  explicit PhaseTimes(bool print) : print(print) {}
  ~PhaseTimes() {
    if (!print || phases.empty())
      return;
    std::string line = "tcc: phases:";
    for (size_t i = 0; i < phases.size(); ++i)
      line += llvm::formatv("{0}{1} {2:f2} s", i ? ", " : " ", phases[i].first,
                            phases[i].second).str();
    std::cerr << line << "\n";
  }
  /// The phase `name` ends now.
  void end(const char *name) {
    auto now = std::chrono::steady_clock::now();
    phases.emplace_back(name, std::chrono::duration<double>(now - last).count());
    last = now;
  }

private:
  bool print;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  std::vector<std::pair<const char *, double>> phases;
};

int runCompile(const tcc::CompileOptions &options) {
  PhaseTimes phases(options.timePhases);
  ::tcc::frontend::ModelSpec spec;
  std::string error;
  if (!::tcc::frontend::loadModelSpec(options.model, spec, error))
    return fail(error);
  tcc::CompileFacts facts;
  // Command-line settings override the model's recipe.
  if (options.precision)
    overridePrecision(spec, *options.precision, facts);
  if (options.memoryBudget)
    spec.recipe.train.memoryBudget = *options.memoryBudget;
  if (options.batchSize)
    spec.recipe.train.batchSize = *options.batchSize;
  if (options.ranks)
    spec.recipe.train.distributed.ranks = *options.ranks;
  // What the overrides change is checked as the model's own would be
  // (the error names the first override given).
  if ((options.batchSize || options.ranks || options.precision) &&
      !::tcc::frontend::recheckRecipe(
          spec,
          options.ranks       ? "--ranks=" + std::to_string(*options.ranks)
          : options.batchSize ? "--batch-size=" + std::to_string(*options.batchSize)
                              : "--precision=" + options.precision->name(),
          error))
    return fail(error);

  DialectRegistry registry;
  mlir::tcc::registerAllTccDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> model = mlir::tcc::importModel(context, spec, error);
  if (!model)
    return fail(error);
  phases.end("frontend");

  bool generates =
      options.emit == "source" || options.emit == "source-tree" || options.emit == "exe";
  const mlir::tcc::TargetBackend &target = *mlir::tcc::lookupTargetBackend(options.target);
  if (generates && !options.targetGiven)
    std::cerr << "tcc: compiling for --target=" << options.target << ": "
              << options.targetReason << "\n";

  // Every emit kind plans the step: the report and the memory budget need
  // the plan even when only the frontend's IR is printed.
  checkPrecision(spec, options, facts);
  checkScheduleSpan(spec, facts);
  checkOneCycleMomentum(spec, facts);
  checkSyncBatchNorm(spec, facts);
  checkShard(spec, facts);
  checkCausalLayerNorm(*model, facts);
  checkBucketSize(spec, options, facts);
  if (generates && options.checkData)
    for (const std::string &warning : tcc::checkDataAtCompile(spec))
      tcc::warn(facts, warning);
  if (generates && facts.precision != "fp32" && target.emulatesSixteenBit())
    std::cerr << "tcc: note: --target=" << options.target << " runs " << facts.precision
              << " by emulating 16-bit numbers (each rounded as a GPU rounds it): the "
                 "results are a GPU's, the speed is below fp32's\n";
  checkTargetPasses(target, options, facts);
  OwningOpRef<ModuleOp> planned = model->clone();
  // tcc-plan-memory refuses a plan over the memory budget.
  if (failed(runPipeline(*planned, target, options, facts, error)))
    return fail(error);
  phases.end("passes");
  nlohmann::json plans; // the target's library choices, if it makes any
  if (target.libraryPlans(*planned, plans))
    plans["model"] = spec.name;

  if (options.emit == "mlir" || options.emit == "planned-mlir") {
    if (int status = writeOutput(options, printModule(options.emit == "mlir" ? *model : *planned,
                                                      options.printLocations)))
      return status;
    return writeReport(*model, *planned, options, facts);
  }
  if (options.emit == "conv-plans") {
    if (int status = writeOutput(options, plans.dump(2) + "\n"))
      return status;
    return writeReport(*model, *planned, options, facts);
  }
  const int64_t ranks = spec.recipe.train.distributed.ranks;
  std::string source;
  llvm::raw_string_ostream os(source);
  if (!emitSource(target, *planned, os, error))
    return fail(options.model + ": " + error);
  phases.end("code generation");
  if (options.emit == "source") {
    if (int status = writeOutput(options, source))
      return status;
  } else if (options.emit == "source-tree") {
    tcc::SourceTreeSpec tree{spec.name, options.target,
                             target.sourceTree({options.march, options.gpu, ranks})};
    tree.parts.values.push_back({"RANKS", std::to_string(ranks)});
    if (!tcc::writeSourceTree(tree, source, plans, options.output, error))
      return fail(error);
  } else {
    std::string output = options.output.empty() ? "./" + spec.name : options.output;
    tcc::TrainerBuild build;
    if (!target.trainerBuild({options.march, options.gpu, ranks}, build, error) ||
        !tcc::buildTrainer(build, source, output, isatty(2), &facts.sharedObjects, error))
      return fail(error);
    phases.end("trainer build");
  }
  return writeReport(*model, *planned, options, facts);
}

} // namespace

int tcc::tccMain(int argc, char **argv) {
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
  if (command == "sample")
    return tcc::runSample({args.begin() + 1, args.end()}, runCompile);
  if (command == "plot")
    return tcc::runPlot({args.begin() + 1, args.end()});
  if (command == "tune")
    return tcc::runTune({args.begin() + 1, args.end()}, argv[0], runCompile);
  // The import is Python: torch.fx traces the module (docs/import.md).
  if (command == "import")
    return tcc::runPythonTool("import", TCC_IMPORT_PYTHON, TCC_IMPORT_SCRIPT,
                              {args.begin() + 1, args.end()},
                              "Debian's python3 and python3-torch (scripts/setup.sh does)");
  if (command != "compile")
    return fail("unknown command '" + command +
                "'; the commands are 'compile', 'sample', 'import', 'tune' and 'plot' (see "
                "'tcc --help')");

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
