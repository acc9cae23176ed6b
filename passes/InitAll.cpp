//===- InitAll.cpp - Register the tcc dialect and passes ------------------===//

#include "passes/InitAll.h"
#include "passes/Passes.h"

#include "ir/TccDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

void mlir::tcc::registerAllTccDialects(DialectRegistry &registry) {
  registry.insert<TccDialect, func::FuncDialect, arith::ArithDialect>();
}

namespace {
/// The optimization passes, in pipeline order. The names are the flags
/// without "tcc-".
constexpr llvm::StringLiteral kBnBiasElimination = "bn-bias-elimination";
constexpr llvm::StringLiteral kPoolActivationReorder = "pool-activation-reorder";
constexpr llvm::StringLiteral kPrecision = "precision";
constexpr llvm::StringLiteral kPadChannels = "pad-channels";
constexpr llvm::StringLiteral kChannelsLast = "channels-last";
constexpr llvm::StringLiteral kFusion = "fusion";
constexpr llvm::StringLiteral kRecompute = "recompute";
const mlir::StringRef kOptimizationPasses[] = {
    kBnBiasElimination, kPoolActivationReorder, kPrecision, kPadChannels,
    kChannelsLast,      kFusion,                kRecompute};
} // namespace

mlir::ArrayRef<mlir::StringRef> mlir::tcc::optimizationPassNames() { return kOptimizationPasses; }

std::vector<std::string> mlir::tcc::targetSixteenBitOps(StringRef target) {
  // The optimizer, EMA and Lookahead updates of 16-bit state (pure 16-bit
  // training) on both targets: they compute in double from the stored
  // values and round where they store, the same bits as on f32 copies
  // without the copies (runtime/common/Float16.h, half::F16).
  std::vector<std::string> ops = {"tcc.sgd_update", "tcc.adamw_update", "tcc.ema_update",
                                  "tcc.lookahead_update"};
  if (target != "cuda")
    return ops;
  // cuDNN and cuBLASLt read and write 16-bit tensors and accumulate in f32
  // (docs/cuda.md); a view, a channel padding and a slice copy the stored
  // bits; a max pool selects a stored element, and its backward sums in f32
  // and rounds where it stores (runtime/kernels/Pool.h: the same bits as on
  // f32 copies). A bias gradient's per-channel sum (reduce_sum) loads 16-bit
  // elements, adds in double and rounds through f32 (half::F16): the bits
  // of the sum of f32 copies, cast.
  ops.insert(ops.end(), {"tcc.conv2d", "tcc.conv2d_backward_data", "tcc.conv2d_backward_filter",
                         "tcc.linear", "tcc.linear_backward_data", "tcc.linear_backward_weight",
                         "tcc.flatten", "tcc.reshape", "tcc.max_pool2d",
                         "tcc.max_pool2d_backward", "tcc.pad_channels", "tcc.slice",
                         "tcc.reduce_sum"});
  return ops;
}

namespace {
bool isEnabled(const mlir::tcc::CompilePipelineOptions &options, mlir::StringRef name) {
  return !llvm::is_contained(options.disable, name);
}
} // namespace

void mlir::tcc::buildStepPipeline(OpPassManager &pm, const CompilePipelineOptions &options) {
  if (isEnabled(options, kBnBiasElimination))
    pm.addPass(createBnBiasElimination());
  if (isEnabled(options, kPoolActivationReorder))
    pm.addPass(createPoolActivationReorder());
  if (isEnabled(options, kPrecision))
    pm.addPass(createPrecision());
  // cuDNN's tensor-core engines read 8 channels of a pixel at once; the
  // cpu kernels take any number.
  if (options.target == "cuda" && isEnabled(options, kPadChannels))
    pm.addPass(createPadChannels());
  pm.addPass(createBuildTrainStep());
  pm.addPass(createCanonicalizerPass());
  // Ops without a 16-bit kernel on the target run on f32 copies, which
  // fusion and the memory plan (recompute's budget) must see.
  const std::vector<std::string> keep = targetSixteenBitOps(options.target);
  pm.addPass(createWiden16Bit(Widen16BitOptions{keep}));
  // cuDNN's tensor-core engines read NHWC; the cpu kernels index NCHW.
  if (options.target == "cuda" && isEnabled(options, kChannelsLast))
    pm.addPass(createChannelsLast());
  // Last of the step pipeline: the target chooses its library calls (a
  // convolution's cuDNN engine) for the fused step.
  if (isEnabled(options, kFusion)) {
    FusionOptions fusion;
    // cuBLASLt applies a ReLU in the matmul's epilogue, cuDNN a bias and a
    // ReLU in the convolution's; the cpu kernels take no epilogue.
    fusion.matmulEpilogues = options.target == "cuda";
    fusion.convEpilogues = options.target == "cuda";
    // A cuda launch costs microseconds whatever its size; a cpu loop not.
    fusion.multiTensorCasts = options.target == "cuda";
    pm.addPass(createFusion(fusion));
  }
}

void mlir::tcc::buildPlanningPipeline(OpPassManager &pm, const CompilePipelineOptions &options) {
  if (isEnabled(options, kRecompute))
    pm.addPass(createRecompute());
  pm.addPass(createPlanMemory());
}

void mlir::tcc::buildCompilePipeline(OpPassManager &pm,
                                     const CompilePipelineOptions &options) {
  buildStepPipeline(pm, options);
  buildPlanningPipeline(pm, options);
}

void mlir::tcc::registerAllTccPasses() {
  registerTccPasses();
  // Registered by hand (not PassPipelineRegistration) so that an unknown
  // name in disable= is an error rather than ignored.
  registerPassPipeline(
      "tcc-compile-pipeline",
      "From the frontend's IR to the planned step functions the code "
      "generators walk",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        CompilePipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        for (const std::string &name : options.disable)
          if (!llvm::is_contained(optimizationPassNames(), name))
            return errorHandler("tcc-compile-pipeline: disable=" + name +
                                ": not an optimization pass; expected one of " +
                                llvm::join(optimizationPassNames(), ", "));
        buildCompilePipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optionsHandler) {
        optionsHandler(CompilePipelineOptions());
      });
  registerCanonicalizerPass();
  registerCSEPass();
}
