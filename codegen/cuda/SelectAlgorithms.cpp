//===- SelectAlgorithms.cpp - The cuda target's library choices -----------===//
//
// See Passes.td and docs/cuda.md. The choices need cuDNN (and the cuDNN
// frontend) at compile time; a tcc built without them has the pass, which
// then fails saying so.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/Passes.h"

#ifdef TCC_HAVE_CUDA
#include "codegen/cuda/CudaConvPlans.h"
#include "codegen/cuda/CudaMatmulAlgos.h"
#include "runtime/cuda/ConvPlans.h"
#include "runtime/cuda/GpuDescriptions.h"
#include "runtime/cuda/TuningFile.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#endif

#include "mlir/IR/BuiltinOps.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_CUDASELECTALGORITHMS
#include "codegen/cuda/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

#ifdef TCC_HAVE_CUDA
namespace cuda = ::tcc::cuda;

/// The tuning file, when it was measured on `gpu` with this cuDNN
/// (docs/tuning.md): `tuned`. A file of another GPU or cuDNN is an error,
/// or under `ignoreMismatch` a warning and no tuning.
LogicalResult loadTuning(ModuleOp module, const std::string &path, bool ignoreMismatch,
                         const cuda::GpuDescription &gpu, cuda::TuningFile &file,
                         bool &tuned) {
  tuned = false;
  if (path.empty())
    return success();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  if (!cuda::parseTuningFile(text.str(), path, file, error))
    return module.emitError(error);
  std::string mismatch;
  if (file.gpu != gpu.name)
    mismatch = "was measured on the " + file.gpu + " (" + file.device + "), not the " +
               gpu.name + " of --gpu";
  else if (file.cudnnVersion != cuda::cudnnVersion())
    mismatch = "was measured with cuDNN " + cuda::cudnnVersionName(file.cudnnVersion) +
               ", this tcc plans with cuDNN " + cuda::cudnnVersionName(cuda::cudnnVersion());
  if (mismatch.empty()) {
    tuned = true;
    return success();
  }
  std::string message = "--tuning-db " + path + " " + mismatch;
  if (!ignoreMismatch)
    return module.emitError(message + "; run 'tcc tune' for this GPU and cuDNN, or add "
                                      "--ignore-tuning-mismatch to use cuDNN's heuristics "
                                      "instead");
  module.emitWarning(message + ": ignored (--ignore-tuning-mismatch); cuDNN's heuristics "
                               "choose");
  return success();
}

LogicalResult selectAlgorithms(ModuleOp module, const std::string &gpuName,
                               const std::string &tuningDb, bool ignoreMismatch,
                               bool allowFallback) {
  std::string error;
  const cuda::GpuDescription *gpu = cuda::findGpu(gpuName, error);
  if (!gpu)
    return module.emitError(error);
  cuda::TuningFile tuning;
  bool tuned = false;
  if (failed(loadTuning(module, tuningDb, ignoreMismatch, *gpu, tuning, tuned)))
    return failure();
  const cuda::TuningFile *measured = tuned ? &tuning : nullptr;

  std::vector<BakedStepConv> convs;
  if (!bakeConvPlans(module, *gpu, cuda::kDefaultConvWorkspaceLimit, measured, convs, error))
    return module.emitError(error);
  size_t heuristic = std::count_if(convs.begin(), convs.end(), [](const auto &c) {
    return c.choice.tunedMicroseconds < 0;
  });
  if (tuned && heuristic)
    module.emitWarning(std::to_string(heuristic) + " of the step's " +
                       std::to_string(convs.size()) + " convolution problems are not in " +
                       tuningDb +
                       ": cuDNN's heuristics choose their engines (run 'tcc tune' on this "
                       "model to measure them)");
  attachCudaTarget(module, *gpu, allowFallback, cuda::kDefaultConvWorkspaceLimit, convs);

  std::vector<BakedStepMatmul> matmuls;
  if (!bakeMatmulAlgos(module, *gpu, measured, matmuls, error))
    return module.emitError(error);
  size_t untuned =
      std::count_if(matmuls.begin(), matmuls.end(), [](const auto &m) { return !m.tuned; });
  if (tuned && untuned)
    module.emitWarning(std::to_string(untuned) + " of the step's " +
                       std::to_string(matmuls.size()) + " matmul problems are not in " +
                       tuningDb +
                       ": cuBLASLt's heuristic chooses their algorithms at the trainer's "
                       "first step (run 'tcc tune' on this model to measure them)");
  attachMatmuls(module, matmuls, *gpu, tuned ? tuning.cublasLtVersion : 0);
  return success();
}
#endif

struct CudaSelectAlgorithmsPass
    : mlir::tcc::impl::CudaSelectAlgorithmsBase<CudaSelectAlgorithmsPass> {
  using CudaSelectAlgorithmsBase::CudaSelectAlgorithmsBase;

  void runOnOperation() override {
#ifdef TCC_HAVE_CUDA
    if (failed(selectAlgorithms(getOperation(), gpu, tuningDb, ignoreTuningMismatch,
                                allowFallback)))
      signalPassFailure();
#else
    getOperation().emitError(
        "the cuda target's convolution plans need CUDA, cuDNN and the cuDNN frontend; "
        "this tcc was built without them: run scripts/setup.sh and rebuild");
    signalPassFailure();
#endif
  }
};

} // namespace
