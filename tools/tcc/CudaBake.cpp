//===- CudaBake.cpp - The cuda target's choices fixed at compile time -----===//

#include "tools/tcc/CudaBake.h"

#ifdef TCC_HAVE_CUDA
#include "codegen/cuda/CudaConvPlans.h"
#include "runtime/cuda/ConvPlans.h"
#include "runtime/cuda/TuningFile.h"
#endif

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace tcc;

namespace {

#ifdef TCC_HAVE_CUDA
/// The --tuning-db file, when it was measured on --gpu's GPU with this
/// cuDNN (docs/tuning.md). A file of another GPU or cuDNN is an error, or
/// under --ignore-tuning-mismatch a warning and no tuning (`tuned` false).
bool loadTuning(const CompileOptions &options, const tcc::cuda::GpuDescription &gpu,
                tcc::cuda::TuningFile &file, bool &tuned, CompileFacts &facts,
                std::string &error) {
  tuned = false;
  if (!options.tuningDb)
    return true;
  const std::string &path = *options.tuningDb;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!tcc::cuda::parseTuningFile(text.str(), path, file, error))
    return false;
  std::string mismatch;
  if (file.gpu != gpu.name)
    mismatch = "was measured on the " + file.gpu + " (" + file.device + "), not the " +
               gpu.name + " of --gpu";
  else if (file.cudnnVersion != tcc::cuda::cudnnVersion())
    mismatch = "was measured with cuDNN " + tcc::cuda::cudnnVersionName(file.cudnnVersion) +
               ", this tcc plans with cuDNN " +
               tcc::cuda::cudnnVersionName(tcc::cuda::cudnnVersion());
  if (mismatch.empty()) {
    tuned = true;
    return true;
  }
  std::string message = "--tuning-db " + path + " " + mismatch;
  if (!options.ignoreTuningMismatch) {
    error = message + "; run 'tcc tune' for this GPU and cuDNN, or add "
                      "--ignore-tuning-mismatch to use cuDNN's heuristics instead";
    return false;
  }
  warn(facts, message + ": ignored (--ignore-tuning-mismatch); cuDNN's heuristics choose");
  return true;
}
#endif

} // namespace

bool tcc::bakeCudaTarget(mlir::ModuleOp planned, const CompileOptions &options,
                         nlohmann::json *table, CompileFacts &facts, std::string &error) {
#ifdef TCC_HAVE_CUDA
  const tcc::cuda::GpuDescription *gpu = tcc::cuda::findGpu(options.gpu, error);
  if (!gpu)
    return false;
  tcc::cuda::TuningFile tuning;
  bool tuned = false;
  std::vector<mlir::tcc::BakedStepConv> baked;
  if (!loadTuning(options, *gpu, tuning, tuned, facts, error) ||
      !mlir::tcc::bakeConvPlans(planned, *gpu, tcc::cuda::kDefaultConvWorkspaceLimit,
                                tuned ? &tuning : nullptr, baked, error))
    return false;
  if (tuned) {
    size_t heuristic = std::count_if(baked.begin(), baked.end(), [](const auto &b) {
      return b.choice.tunedMicroseconds < 0;
    });
    if (heuristic)
      warn(facts, std::to_string(heuristic) + " of the step's " + std::to_string(baked.size()) +
                      " convolution problems are not in " + *options.tuningDb +
                      ": cuDNN's heuristics choose their engines (run 'tcc tune' on this "
                      "model to measure them)");
  }
  if (table)
    *table = mlir::tcc::convPlansTable(baked, *gpu, tcc::cuda::kDefaultConvWorkspaceLimit);
  mlir::tcc::attachCudaTarget(planned, *gpu, options.allowFallback, baked);
  return true;
#else
  (void)planned, (void)options, (void)table, (void)facts;
  error = "the cuda target's convolution plans need CUDA, cuDNN and the cuDNN frontend; "
          "this tcc was built without them: run scripts/setup.sh and rebuild";
  return false;
#endif
}

