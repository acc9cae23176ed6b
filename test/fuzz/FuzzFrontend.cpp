//===- FuzzFrontend.cpp - Mutated models through the frontend and passes --===//
//
// tcc-fuzz-frontend [options] MODEL.json|DIR...
//
// Runs seeded structured mutations (Mutator.h) of the given models through
// what `tcc compile --emit=planned-mlir` runs: parseModelSpec, importModel
// and the compile pipeline, in one process so that thousands take seconds.
// Every case must either compile or give exactly one error line that starts
// with the model's path, names no internal error, and writes nothing else to
// stderr; no case may crash, abort or run past its time limit. See
// docs/testing.md.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportModel.h"
#include "frontend/ModelSpec.h"
#include "codegen/Targets.h"
#include "passes/InitAll.h"
#include "test/fuzz/CrashGuard.h"
#include "test/fuzz/Mutator.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

using namespace tcc::fuzz;
namespace fs = std::filesystem;

namespace {

const char *kUsage =
    "usage: tcc-fuzz-frontend [--cases N] [--seed S] [--case I [--print]]\n"
    "                         [--timeout SECONDS] [--target cpu|cuda] [--verbose]\n"
    "                         MODEL.json|DIR...\n"
    "--timeout: per case (default 60, times 4 in a sanitizer build)\n"
    "--target: the pipeline of that target (default cpu; cuda adds tcc-pad-channels,\n"
    "          tcc-channels-last, the matmul and conv epilogue groups and\n"
    "          tcc-cuda-select-algorithms for the h100)\n";
const std::string kPath = "fuzz.json";

/// A case's time limit is far above what any case takes (train.accumulate
/// 1000 on resnet9 takes some 15 s: every micro-batch is compiled), so that
/// only a real hang trips it; sanitized code runs several times slower.
#ifdef TCC_SANITIZE
constexpr uint64_t kTimeLimitScale = 4;
#else
constexpr uint64_t kTimeLimitScale = 1;
#endif

struct Options {
  uint64_t cases = 3000, seed = 1, timeout = 60;
  std::optional<uint64_t> only; ///< --case
  bool print = false, verbose = false;
  std::string target = "cpu";
  std::vector<std::string> inputs;
};

struct Base {
  std::string name;
  nlohmann::json model;
};

struct Outcome {
  std::string stage; ///< "compiled", or where it failed: parse, import, passes
  std::string error;
};

bool parseOptions(int argc, char **argv, Options &o) {
  uint64_t one = 0;
  const std::map<std::string, uint64_t *> numbers = {
      {"--cases", &o.cases}, {"--seed", &o.seed}, {"--timeout", &o.timeout},
      {"--case", &one}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (auto it = numbers.find(arg); it != numbers.end()) {
      if (i + 1 >= argc)
        return false;
      *it->second = std::strtoull(argv[++i], nullptr, 10);
      if (arg == "--case")
        o.only = one;
    } else if (arg == "--print") {
      o.print = true;
    } else if (arg == "--verbose") {
      o.verbose = true;
    } else if (arg == "--target") {
      if (i + 1 >= argc)
        return false;
      o.target = argv[++i];
      if (o.target != "cpu" && o.target != "cuda")
        return false;
    } else if (arg.rfind("-", 0) == 0) {
      return false;
    } else {
      o.inputs.push_back(arg);
    }
  }
  return !o.inputs.empty() && (!o.print || o.only);
}

/// The models named on the command line, a directory standing for its
/// *.json files, in a fixed order (the case numbers depend on it).
std::vector<Base> loadBases(const std::vector<std::string> &inputs) {
  std::vector<std::string> files;
  for (const std::string &input : inputs) {
    if (!fs::is_directory(input)) {
      files.push_back(input);
      continue;
    }
    std::vector<std::string> found;
    for (const auto &entry : fs::directory_iterator(input))
      if (entry.path().extension() == ".json")
        found.push_back(entry.path().string());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  std::vector<Base> bases;
  for (const std::string &file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json model = nlohmann::json::parse(text.str(), nullptr, false);
    if (model.is_discarded()) {
      report("tcc-fuzz-frontend: " + file + " is not valid JSON\n");
      std::exit(2);
    }
    bases.push_back({fs::path(file).filename().string(), std::move(model)});
  }
  return bases;
}

Outcome compileModel(mlir::MLIRContext &context, const std::string &text,
                     const std::string &target) {
  ::tcc::frontend::ModelSpec spec;
  std::string error;
  if (!::tcc::frontend::parseModelSpec(text, kPath, spec, error))
    return {"parse", error};
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::tcc::importModel(context, spec, error);
  if (!module)
    return {"import", error};
  // As tools/tcc/tcc.cpp runs it: the first error diagnostic is the error.
  mlir::PassManager pm(&context);
  mlir::tcc::buildCompilePipeline(pm, *mlir::tcc::lookupTargetBackend(target), {});
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error && error.empty())
      error = kPath + ": " + diag.str();
    return mlir::success();
  });
  if (mlir::failed(pm.run(*module)))
    return {"passes", error.empty() ? kPath + ": compilation failed" : error};
  return {"compiled", ""};
}

/// What is wrong with the outcome of a case, or "".
std::string problem(const Outcome &o, const std::string &stderrText) {
  if (!stderrText.empty())
    return "it wrote to stderr besides its error";
  if (o.stage == "compiled")
    return "";
  if (o.error.empty())
    return "it failed without an error message";
  if (o.error.find('\n') != std::string::npos)
    return "its error is more than one line";
  if (o.error.rfind(kPath + ":", 0) != 0)
    return "its error does not start with the model's path";
  if (o.error.find("internal error") != std::string::npos)
    return "its error is an internal error";
  // "'tcc.flatten' op operand #0 must be ...": a verifier's words, which
  // name no model.json field; the frontend should have refused the value.
  if (o.error.find("' op ") != std::string::npos)
    return "its error is raw verifier text that names no model.json field";
  return "";
}

std::mt19937_64 caseRng(const Options &o, uint64_t index) {
  std::seed_seq seq{o.seed, index};
  return std::mt19937_64(seq);
}

} // namespace

int main(int argc, char **argv) {
  mlir::tcc::registerAllTargets();
  Options options;
  if (!parseOptions(argc, argv, options)) {
    std::cerr << kUsage;
    return 2;
  }
  std::vector<Base> bases = loadBases(options.inputs);
  uint64_t first = options.only.value_or(0);
  uint64_t end = options.only ? first + 1 : options.cases;
  if (options.print) {
    std::mt19937_64 rng = caseRng(options, first);
    std::cout << mutate(bases[first % bases.size()].model, rng).text << "\n";
    return 0;
  }

  mlir::DialectRegistry registry;
  mlir::tcc::registerAllTccDialects(registry);
  mlir::MLIRContext context(registry);
  context.disableMultithreading(); // one core per test; no pool to start
  installCrashGuard();

  auto start = std::chrono::steady_clock::now();
  std::map<std::string, uint64_t> stages;
  uint64_t failures = 0;
  std::pair<double, uint64_t> slowest = {0, 0}; // seconds, case
  for (uint64_t i = first; i < end; ++i) {
    const Base &base = bases[i % bases.size()];
    std::mt19937_64 rng = caseRng(options, i);
    Mutant mutant = mutate(base.model, rng);
    std::string reproduce = "tcc-fuzz-frontend --seed " +
                            std::to_string(options.seed) + " --case " +
                            std::to_string(i) + " --print MODELS... > case.json" +
                            (options.target == "cpu" ? "" : " (tcc compile --target=" +
                                                                 options.target + ")");
    beginCase("case " + std::to_string(i) + " of " + base.name + ": " +
                  mutant.what + "\nreproduce: " + reproduce + "\n",
              static_cast<unsigned>(options.timeout * kTimeLimitScale));
    auto caseStart = std::chrono::steady_clock::now();
    Outcome outcome = compileModel(context, mutant.text, options.target);
    std::string stderrText = endCase();
    double caseSeconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - caseStart).count();
    if (caseSeconds > slowest.first)
      slowest = {caseSeconds, i};
    ++stages[outcome.stage];
    std::string why = problem(outcome, stderrText);
    if (options.verbose || !why.empty())
      report("case " + std::to_string(i) + " (" + base.name + ": " +
             mutant.what + "): " +
             (outcome.stage == "compiled" ? "compiled" : outcome.error) + "\n");
    if (!why.empty()) {
      ++failures;
      report("  FAILED: " + why + (stderrText.empty() ? "" : ":\n" + stderrText) +
             "\n  reproduce: " + reproduce + "\n");
    }
  }

  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start).count();
  std::ostringstream summary;
  summary << "tcc-fuzz-frontend: " << (end - first) << " cases of "
          << bases.size() << " models (seed " << options.seed << ", " << options.target
          << " pipeline) in "
          << seconds << " s:";
  for (const auto &[stage, count] : stages)
    summary << " " << stage << " " << count;
  summary << "; slowest: case " << slowest.second << " (" << slowest.first
          << " s); " << failures << " failed\n";
  report(summary.str());
  // Mutants that all fail at the parser would test nothing past it.
  if (!options.only && stages["compiled"] + stages["passes"] + stages["import"] <
                           (end - first) / 10) {
    report("tcc-fuzz-frontend: FAILED: fewer than 10% of the cases got past "
           "the parser; the mutations are too destructive to test the rest\n");
    return 1;
  }
  return failures ? 1 : 0;
}
