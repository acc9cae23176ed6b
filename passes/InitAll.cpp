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
constexpr llvm::StringLiteral kFusion = "fusion";
constexpr llvm::StringLiteral kRecompute = "recompute";
const mlir::StringRef kOptimizationPasses[] = {kBnBiasElimination, kPoolActivationReorder,
                                               kPrecision, kFusion, kRecompute};
} // namespace

mlir::ArrayRef<mlir::StringRef> mlir::tcc::optimizationPassNames() { return kOptimizationPasses; }

void mlir::tcc::buildCompilePipeline(OpPassManager &pm,
                                     const CompilePipelineOptions &options) {
  auto enabled = [&](StringRef name) { return !llvm::is_contained(options.disable, name); };
  if (enabled(kBnBiasElimination))
    pm.addPass(createBnBiasElimination());
  if (enabled(kPoolActivationReorder))
    pm.addPass(createPoolActivationReorder());
  if (enabled(kPrecision))
    pm.addPass(createPrecision());
  pm.addPass(createBuildTrainStep());
  pm.addPass(createCanonicalizerPass());
  // The cpu target's kernels are f32: 16-bit tensors run on f32 copies,
  // which fusion and the memory plan (recompute's budget) must see.
  if (options.target == "cpu")
    pm.addPass(createWidenForCpu());
  if (enabled(kFusion))
    pm.addPass(createFusion());
  if (enabled(kRecompute))
    pm.addPass(createRecompute());
  pm.addPass(createPlanMemory());
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
