//===- CudaBackend.cpp - The cuda target: CUDA, cuDNN and cuBLASLt --------===//
//
// What the cuda target adds to the pipeline (channel padding and channels
// last for cuDNN's tensor-core engines, library epilogues, the algorithm
// selection), which ops it runs on 16-bit tensors, and how its trainer is
// built: nvcc for the architecture of --gpu (docs/cuda.md).
//
//===----------------------------------------------------------------------===//

#include "codegen/Codegen.h"
#include "codegen/ToolchainPaths.h"
#include "codegen/cuda/CudaFusionPatterns.h"
#include "codegen/cuda/Passes.h"
#include "codegen/cuda/VisibleGpu.h"
#include "ir/TccAttrNames.h"
#include "passes/Passes.h"
#include "target/TargetBackend.h"

#ifdef TCC_HAVE_CUDA
#include "runtime/cuda/ConvPlans.h"
#include "runtime/cuda/GpuDescriptions.h"
#endif

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// The nvcc a cuda trainer is built with, if this tcc was built with CUDA
/// and it is still there; else empty.
std::string toolkitCompiler() {
#ifdef TCC_NVCC
  if (llvm::sys::fs::can_execute(TCC_NVCC))
    return TCC_NVCC;
#endif
  return "";
}

class CudaBackend final : public TargetBackend {
public:
  StringRef name() const override { return "cuda"; }
  StringRef summary() const override {
    return "NVIDIA GPUs: CUDA, cuDNN and cuBLASLt (checked on an H200; docs/cuda.md)";
  }
  Takes takes() const override {
    Takes takes;
    takes.gpu = takes.tuningDb = takes.allowFallback = true;
    return takes;
  }

  /// cuDNN's tensor-core engines read 8 channels of a pixel at once.
  void addForwardPasses(OpPassManager &pm, const TargetOptions &options) const override {
    options.addOptimization(pm, createPadChannels());
  }
  /// cuDNN and cuBLASLt read and write 16-bit tensors and accumulate in
  /// f32; the views, pads, slices, max pools and sums have 16-bit kernels
  /// whose results are the rounded exact ones (runtime/kernels/Pool.h,
  /// half::F16), as do the updates (runtime/common/Float16.h).
  std::vector<std::string> sixteenBitKinds() const override {
    return {"update", "library", "exact"};
  }
  /// cuDNN's tensor-core engines read NHWC; its fp16 NHWC convolutions
  /// gather a following batch norm's statistics as they store, and its
  /// backward-data ones the norm's backward sums.
  void addLayoutPasses(OpPassManager &pm, const TargetOptions &options) const override {
    options.addOptimization(pm, createChannelsLast());
    CudaConvStatisticsOptions statistics;
    if (!options.gpu.empty())
      statistics.gpu = options.gpu;
    options.addOptimization(pm, createCudaConvStatistics(statistics));
    // Off until its group runs cuDNN's dgrad + drelu + dbn_weight graph: the
    // split backward alone reads dy once more than the fused norm backward.
    CudaDgradStatisticsOptions dgrad;
    if (!options.gpu.empty())
      dgrad.gpu = options.gpu;
    options.addOptimization(pm, createCudaDgradStatistics(dgrad), /*onByDefault=*/false);
  }
  /// cuBLASLt applies an activation in the matmul's epilogue, cuDNN a bias
  /// and a ReLU in the convolution's (CudaFusionPatterns.cpp); a launch
  /// costs microseconds whatever its size, so many small casts go in one.
  FusionCapabilities fusion() const override {
    return {cudaEpiloguePatterns(), /*multiTensorCasts=*/true};
  }
  void addSelectionPasses(OpPassManager &pm, const TargetOptions &options) const override {
    CudaSelectAlgorithmsOptions select;
    if (!options.gpu.empty())
      select.gpu = options.gpu;
    select.tuningDb = options.tuningDb;
    select.ignoreTuningMismatch = options.ignoreTuningMismatch;
    select.allowFallback = options.allowFallback;
    pm.addPass(createCudaSelectAlgorithms(select));
    // The buckets beside the backward: before the memory plan, which keeps
    // their inputs live until their readers.
    options.addOptimization(pm, createCudaOverlapBuckets());
  }
  ArrayRef<StringRef> optimizationPasses() const override {
    static const StringRef names[] = {
        TargetOptions::optimizationName(*createPadChannels()),
        TargetOptions::optimizationName(*createChannelsLast()),
        TargetOptions::optimizationName(*createCudaConvStatistics()),
        TargetOptions::optimizationName(*createCudaDgradStatistics())};
    return names;
  }
  ArrayRef<StringRef> offByDefaultPasses() const override {
    static const StringRef names[] = {
        TargetOptions::optimizationName(*createCudaDgradStatistics())};
    return names;
  }
  ArrayRef<StringRef> selectionOptimizationPasses() const override {
    static const StringRef names[] = {
        TargetOptions::optimizationName(*createCudaOverlapBuckets())};
    return names;
  }

  LogicalResult emitSource(ModuleOp module, llvm::raw_ostream &os) const override {
    return emitCudaSource(module, os);
  }
  LogicalResult emitOps(ModuleOp module, llvm::raw_ostream &os) const override {
    return emitCudaOps(module, os);
  }
  /// tcc.cuda_target (tcc-cuda-select-algorithms) as the table of
  /// --emit=conv-plans and the source tree's conv-plans.json.
  bool libraryPlans(ModuleOp planned, nlohmann::json &table) const override {
    Attribute chosen = planned->getAttr(kCudaTargetAttr);
    if (!chosen)
      return false;
    table = attributeToJsonValue(chosen);
    table.erase("allow_fallback");
    table.erase("cublaslt_version");
    table["format"] = "tcc-conv-plans/1";
    for (nlohmann::json &matmul : table["matmuls"])
      if (!matmul.contains("algo"))
        matmul["algo"] = nullptr;
    return true;
  }
  bool emulatesSixteenBit() const override { return false; }

  Availability availability() const override {
    if (toolkitCompiler().empty())
      return {false, "this tcc was built without the CUDA toolkit"};
    std::string gpu, whyNot;
    if (!visibleGpu(gpu, whyNot))
      return {false, whyNot + "; --target=cuda builds a GPU trainer to run elsewhere"};
    return {true, gpu + " is visible"};
  }
  bool preferredWhereAvailable() const override { return true; }

  bool trainerBuild(const TrainerBuildOptions &options, TrainerBuild &build,
                    std::string &error) const override {
#if defined(TCC_HAVE_CUDA) && defined(TCC_NVCC)
    const ::tcc::cuda::GpuDescription *gpu = ::tcc::cuda::findGpu(options.gpu, error);
    if (!gpu)
      return false;
    std::string arch = "sm_" + ::tcc::cuda::cudaArch(gpu->smVersion);
    build.compiler = TCC_NVCC;
    build.suffix = "cu";
    // Device lambdas (--extended-lambda) and std:: constexpr math in device
    // code (--expt-relaxed-constexpr); 1675: the cpu kernels' GCC pragmas.
    build.flags = {"-std=c++17", "-O3", "-arch=" + arch, "--extended-lambda",
                   "--expt-relaxed-constexpr", "-diag-suppress=1675", "-Xcompiler=-fopenmp",
                   "-I" TCC_RUNTIME_INCLUDE_DIR};
#ifdef TCC_CUTLASS_INCLUDE_DIRS
    // CUTLASS's headers, for a step a tuning file gave CUTLASS kernels.
    for (StringRef dir : llvm::split(StringRef(TCC_CUTLASS_INCLUDE_DIRS), ';'))
      build.flags.insert(build.flags.end(), {"-isystem", dir.str()});
#endif
    for (StringRef lib : llvm::split(StringRef(TCC_CUDA_RUNTIME_LIBS), ';'))
      build.libraries.push_back(lib.str());
    for (StringRef lib : llvm::split(StringRef(TCC_RUNTIME_LIBS), ';'))
      build.libraries.push_back(lib.str());
    // The communicator: NCCL for several ranks, one GPU each
    // (docs/distributed.md).
    if (options.ranks > 1) {
#ifdef TCC_COMM_NCCL_LIBS
      for (StringRef lib : llvm::split(StringRef(TCC_COMM_NCCL_LIBS), ';'))
        build.libraries.push_back(lib.str());
#else
      error = "a cuda trainer of " + std::to_string(options.ranks) +
              " ranks needs NCCL, and this tcc was built without it: install NCCL "
              "(libnccl-dev, or CUDA's) and rebuild tcc, or compile for one rank";
      return false;
#endif
    } else {
      build.libraries.push_back(TCC_COMM_ONE_PROCESS_LIB);
    }
    build.libraries.insert(build.libraries.end(),
                           {"-lcudnn", "-lnvrtc", "-lcublasLt", "-lcudart", "-lz",
                            "-Xlinker=-rpath=" TCC_CUDA_LIB_DIR});
    build.summary = "nvcc -O3 -arch=" + arch;
    return true;
#else
    (void)options, (void)build;
    error = "building a cuda trainer needs CUDA 13 (nvcc, cuBLASLt) at configure time; this "
            "tcc was built without it: install CUDA, run scripts/setup.sh and rebuild, or use "
            "--emit=source and build it where CUDA is";
    return false;
#endif
  }
  SourceTreeParts sourceTree(const TrainerBuildOptions &options) const override {
    SourceTreeParts parts{"cu", {{"GPU", options.gpu}}, {}, "README-cuda.md.in"};
#ifdef TCC_HAVE_CUDA
    std::string error;
    if (const ::tcc::cuda::GpuDescription *gpu = ::tcc::cuda::findGpu(options.gpu, error))
      parts.values.push_back({"CUDA_ARCH", ::tcc::cuda::cudaArch(gpu->smVersion)});
    parts.values.push_back(
        {"CUDNN", ::tcc::cuda::cudnnVersionName(::tcc::cuda::cudnnVersion())});
#endif
#ifdef TCC_CUDNN_FRONTEND_INCLUDE_DIR
    parts.headerTrees.push_back(TCC_CUDNN_FRONTEND_INCLUDE_DIR);
#endif
    // CUTLASS stays where tcc found it (28 MB): the tree's CMake looks there
    // unless told otherwise (-DTCC_CUTLASS_INCLUDE_DIRS).
#ifdef TCC_CUTLASS_INCLUDE_DIRS
    parts.values.push_back({"CUTLASS_INCLUDE_DIRS", TCC_CUTLASS_INCLUDE_DIRS});
#else
    parts.values.push_back({"CUTLASS_INCLUDE_DIRS", ""});
#endif
    return parts;
  }
};

} // namespace

void mlir::tcc::registerCudaTarget() {
  static bool passesRegistered = false;
  if (!passesRegistered) {
    registerTccCudaPasses();
    passesRegistered = true;
  }
  registerTargetBackend(std::make_unique<CudaBackend>());
}
