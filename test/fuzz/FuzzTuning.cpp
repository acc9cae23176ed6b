//===- FuzzTuning.cpp - Mutated tuning files through --tuning-db's checks -===//
//
// tcc-fuzz-frontend --tuning FILE MODEL.json: mutants of a tuning file (what
// `tcc tune` writes) through what `tcc compile --tuning-db` runs on it:
// parseTuningFile, then, for a file that parses and names a GPU tcc knows,
// the baking of its engines and algorithms into MODEL's step for that GPU
// (bakeConvPlans, bakeMatmulAlgos: plan names, knobs, workspaces). Every
// case must succeed or give one error line; none may crash, abort or hang.
//
//===----------------------------------------------------------------------===//

#include "test/fuzz/FuzzTuning.h"

#include "test/fuzz/CrashGuard.h"
#include "test/fuzz/Mutator.h"

#ifdef TCC_HAVE_CUDA
#include "codegen/cuda/CudaConvPlans.h"
#include "codegen/cuda/CudaMatmulAlgos.h"
#include "runtime/cuda/ConvPlans.h"
#include "runtime/cuda/GpuDescriptions.h"
#include "runtime/cuda/TuningFile.h"
#endif

#include <chrono>
#include <iostream>
#include <sstream>

namespace tcc::fuzz {

#ifdef TCC_HAVE_CUDA
namespace {

const std::string kPath = "tuning.json";

/// "" when the case went well, else what is wrong.
std::string tuningProblem(bool ok, const std::string &error, const std::string &stderrText,
                          bool parsed) {
  if (!stderrText.empty())
    return "it wrote to stderr besides its error";
  if (ok)
    return "";
  if (error.empty())
    return "it failed without an error message";
  if (error.find('\n') != std::string::npos)
    return "its error is more than one line";
  if (!parsed && error.rfind(kPath + ":", 0) != 0)
    return "its error does not start with the tuning file's path";
  if (error.find("internal error") != std::string::npos)
    return "its error is an internal error";
  return "";
}

} // namespace

int fuzzTuning(const TuningFuzz &o) {
  uint64_t first = o.only.value_or(0), end = o.only ? first + 1 : o.cases;
  auto rngOf = [&](uint64_t i) {
    std::seed_seq seq{o.seed, i, uint64_t(0x7475)};
    return std::mt19937_64(seq);
  };
  if (o.print) {
    std::mt19937_64 rng = rngOf(first);
    std::cout << mutate(o.tuning, rng).text << "\n";
    return 0;
  }
  installCrashGuard();
  auto start = std::chrono::steady_clock::now();
  uint64_t failures = 0, parsed = 0, baked = 0;
  for (uint64_t i = first; i < end; ++i) {
    std::mt19937_64 rng = rngOf(i);
    Mutant mutant = mutate(o.tuning, rng);
    std::string reproduce = "tcc-fuzz-frontend --tuning FILE --seed " + std::to_string(o.seed) +
                            " --case " + std::to_string(i) + " --print MODEL > tuning.json";
    beginCase("tuning case " + std::to_string(i) + ": " + mutant.what + "\nreproduce: " +
                  reproduce + "\n",
              o.timeout);
    ::tcc::cuda::TuningFile file;
    std::string error;
    bool ok = ::tcc::cuda::parseTuningFile(mutant.text, kPath, file, error);
    bool read = ok;
    if (ok) {
      ++parsed;
      std::string ignored;
      // A file of a GPU tcc does not know is refused by --gpu's check.
      if (const ::tcc::cuda::GpuDescription *gpu = ::tcc::cuda::findGpu(file.gpu, ignored)) {
        std::vector<mlir::tcc::BakedStepConv> convs;
        std::vector<mlir::tcc::BakedStepMatmul> matmuls;
        ok = mlir::tcc::bakeConvPlans(o.step, *gpu, ::tcc::cuda::kDefaultConvWorkspaceLimit,
                                      &file, convs, error) &&
             mlir::tcc::bakeMatmulAlgos(o.planned, *gpu, &file, matmuls, error);
        baked += ok;
      }
    }
    std::string stderrText = endCase();
    std::string why = tuningProblem(ok, error, stderrText, read);
    if (o.verbose || !why.empty())
      report("tuning case " + std::to_string(i) + " (" + mutant.what + "): " +
             (ok ? std::string("read") : error) + "\n");
    if (!why.empty()) {
      ++failures;
      report("  FAILED: " + why + (stderrText.empty() ? "" : ":\n" + stderrText) +
             "\n  reproduce: " + reproduce + "\n");
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream summary;
  summary << "tcc-fuzz-frontend --tuning: " << (end - first) << " cases (seed " << o.seed
          << ") in " << seconds << " s: parsed " << parsed << ", baked " << baked << "; "
          << failures << " failed\n";
  report(summary.str());
  return failures ? 1 : 0;
}

#else

int fuzzTuning(const TuningFuzz &) {
  report("tcc-fuzz-frontend --tuning: this build has no CUDA; nothing to test\n");
  return 0;
}

#endif

} // namespace tcc::fuzz
