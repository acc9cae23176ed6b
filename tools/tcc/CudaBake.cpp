//===- CudaBake.cpp - The cuda target's choices fixed at compile time -----===//

#include "tools/tcc/CudaBake.h"

#ifdef TCC_HAVE_CUDA
#include "codegen/cuda/CudaConvPlans.h"
#include "codegen/cuda/CudaMatmulAlgos.h"
#include "runtime/cuda/ConvPlans.h"
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
  if (!tcc::cuda::parseTuningFile(options.tuningDbText, path, file, error))
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

bool CudaBake::beforePlanning(mlir::ModuleOp step, std::string &error) {
#ifdef TCC_HAVE_CUDA
  gpu = tcc::cuda::findGpu(options.gpu, error);
  std::vector<mlir::tcc::BakedStepConv> baked;
  if (!gpu || !loadTuning(options, *gpu, tuning, tuned, facts, error) ||
      !mlir::tcc::bakeConvPlans(step, *gpu, tcc::cuda::kDefaultConvWorkspaceLimit,
                                tuned ? &tuning : nullptr, baked, error))
    return false;
  size_t heuristic = std::count_if(baked.begin(), baked.end(), [](const auto &b) {
    return b.choice.tunedMicroseconds < 0;
  });
  if (tuned && heuristic)
    warn(facts, std::to_string(heuristic) + " of the step's " + std::to_string(baked.size()) +
                    " convolution problems are not in " + *options.tuningDb +
                    ": cuDNN's heuristics choose their engines (run 'tcc tune' on this "
                    "model to measure them)");
  table = mlir::tcc::convPlansTable(baked, *gpu, tcc::cuda::kDefaultConvWorkspaceLimit);
  mlir::tcc::attachCudaTarget(step, *gpu, options.allowFallback, baked);
  return true;
#else
  (void)step;
  error = "the cuda target's convolution plans need CUDA, cuDNN and the cuDNN frontend; "
          "this tcc was built without them: run scripts/setup.sh and rebuild";
  return false;
#endif
}

bool CudaBake::afterPlanning(mlir::ModuleOp planned, std::string &error) {
#ifdef TCC_HAVE_CUDA
  std::vector<mlir::tcc::BakedStepMatmul> matmuls;
  if (!mlir::tcc::bakeMatmulAlgos(planned, *gpu, tuned ? &tuning : nullptr, matmuls, error))
    return false;
  size_t untuned =
      std::count_if(matmuls.begin(), matmuls.end(), [](const auto &m) { return !m.tuned; });
  if (tuned && untuned)
    warn(facts, std::to_string(untuned) + " of the step's " + std::to_string(matmuls.size()) +
                    " matmul problems are not in " + *options.tuningDb +
                    ": cuBLASLt's heuristic chooses their algorithms at the trainer's first "
                    "step (run 'tcc tune' on this model to measure them)");
  mlir::tcc::addMatmulRows(matmuls, *gpu, table);
  mlir::tcc::attachTunedMatmuls(planned, matmuls, tuned ? tuning.cublasLtVersion : 0);
  return true;
#else
  (void)planned;
  error = "the cuda target needs CUDA; this tcc was built without it";
  return false;
#endif
}
